package analysis

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/flameox/flameox/pkg/catalog"
	"github.com/flameox/flameox/pkg/cursor"
	"github.com/flameox/flameox/pkg/digest"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/query"
	"github.com/flameox/flameox/pkg/run"
	"github.com/flameox/flameox/pkg/workspace"
	"github.com/spf13/pflag"
)

// OpTraceWindow is the trace window query's operation name.
const OpTraceWindow = "trace.window"

// traceTables are the tables the trace window reads.
var traceTables = []string{"artifacts", "measurements", "frames", "stacks"}

// maxTraceTracks bounds the tracks a window result lists.
const maxTraceTracks = 100

// TraceWindowRequest asks for the slices of a published trace that overlap
// [start_ns, end_ns), in start order.
type TraceWindowRequest struct {
	Input   string `json:"input" jsonschema:"trace artifact id, or run id"`
	StartNS int64  `json:"start_ns,omitempty" jsonschema:"window start, ns from the trace start"`
	EndNS   int64  `json:"end_ns,omitempty" jsonschema:"window end, exclusive (default: trace end)"`
	Track   string `json:"track,omitempty" jsonschema:"track_id or thread name"`
	Limit   int    `json:"limit,omitempty" jsonschema:"slices per page"`
	Cursor  string `json:"cursor,omitempty" jsonschema:"cursor from a previous page"`
}

// Flags registers the flags of a trace window request (`flameox trace
// window`): --start, --end, --track, --limit and --cursor.
func (r *TraceWindowRequest) Flags(fs *pflag.FlagSet) {
	fs.Int64Var(&r.StartNS, "start", 0, "window start in ns from the trace's earliest timestamp")
	fs.Int64Var(&r.EndNS, "end", 0, "window end (exclusive) in ns from the trace's earliest timestamp (default: the end of the trace)")
	fs.StringVar(&r.Track, "track", "", "only this track: a track_id, or a thread name exactly")
	limitFlag(fs, &r.Limit, 100, "slices")
	cursorFlag(fs, &r.Cursor)
}

// TraceWindowParams echo what the window was asked, with the defaults
// filled in.
type TraceWindowParams struct {
	StartNS int64  `json:"start_ns"`
	EndNS   int64  `json:"end_ns"`
	Track   string `json:"track,omitempty"`
	Limit   int    `json:"limit"`
}

// TraceSlice is one slice of the window.
type TraceSlice struct {
	StackID    string `json:"stack_id"`
	StartNS    int64  `json:"start_ns"`
	DurationNS int64  `json:"duration_ns"`
	EndNS      int64  `json:"end_ns"`
	TrackID    uint64 `json:"track_id"`
	Thread     string `json:"thread,omitempty"`
	Process    string `json:"process,omitempty"`
	Name       string `json:"name"`
	Category   string `json:"category,omitempty"`
	// Device is set for accelerator work (kernels, copies, memsets):
	// frames.language "device".
	Device bool `json:"device"`
	// Depth is the slice's nesting depth on its track (1 for a root).
	Depth   int    `json:"depth"`
	FrameID string `json:"frame_id"`
}

// TraceTrack is one track of the trace.
type TraceTrack struct {
	TrackID uint64 `json:"track_id"`
	Thread  string `json:"thread,omitempty"`
	Process string `json:"process,omitempty"`
	Labels  string `json:"labels,omitempty"`
	Kind    string `json:"kind"`
	Device  bool   `json:"device"`
	Slices  int64  `json:"slices"`
}

// TraceWindowResult is the result of `flameox trace window` and MCP
// get_trace_window.
type TraceWindowResult struct {
	SchemaVersion    int               `json:"schema_version"`
	Operation        string            `json:"operation"`
	OperationVersion string            `json:"operation_version"`
	CorpusCommitID   string            `json:"corpus_commit_id"`
	Source           Source            `json:"source"`
	Parameters       TraceWindowParams `json:"parameters"`
	// SpanNS is the trace's length: its earliest timestamp to its latest
	// end; OriginNS that earliest timestamp as the file wrote it (ns).
	SpanNS   int64 `json:"span_ns"`
	OriginNS int64 `json:"origin_ns"`
	// Tracks lists the trace's tracks (at most 100), for --track.
	Tracks          []TraceTrack `json:"tracks"`
	TracksTruncated bool         `json:"tracks_truncated,omitempty"`
	Slices          []TraceSlice `json:"slices"`
	EvidenceLevel   string       `json:"evidence_level"`
	Limitations     []string     `json:"limitations"`
	query.Page
	fault.Next
}

// qTraceSource finds the traces an input names with their latest
// generation's trace.span row (the extractor writes one per trace).
var qTraceSource = catalog.Query{Name: "analysis.trace_source", Version: "1", SQL: `
WITH a AS (
  SELECT run_id, artifact_id, any_value(display_name) AS display_name, any_value(kind) AS kind, any_value(producer) AS producer
  FROM artifacts WHERE (($1 <> '' AND run_id = $1) OR ($2 <> '' AND artifact_id = $2))
  GROUP BY run_id, artifact_id)
SELECT m.run_id, m.artifact_id, m.evidence_generation_id, coalesce(m.value_int, 0), coalesce(m.dimensions['origin_ns'], ''),
       coalesce(a.display_name, ''), coalesce(a.kind, ''), coalesce(a.producer, '')
FROM measurements m LEFT JOIN a USING (run_id, artifact_id)
WHERE m.scope = 'trace' AND m.name = 'trace.span'
  AND (($1 <> '' AND m.run_id = $1) OR ($2 <> '' AND m.artifact_id = $2))
ORDER BY m.published_at DESC, m.evidence_generation_id DESC, m.artifact_id`}

// qTraceTracks lists a trace's tracks.
var qTraceTracks = catalog.Query{Name: "analysis.trace_tracks", Version: "1", SQL: `
SELECT coalesce(TRY_CAST(dimensions['track_id'] AS UBIGINT), 0) AS tid, coalesce(dimensions['thread'], ''), coalesce(dimensions['process'], ''),
       coalesce(dimensions['labels'], ''), coalesce(dimensions['kind'], ''), coalesce(dimensions['device'], '') = 'true', coalesce(value_int, 0),
       count(*) OVER ()
FROM measurements
WHERE run_id = $1 AND artifact_id = $2 AND evidence_generation_id = $3 AND scope = 'trace' AND name = 'trace.track.slices'
ORDER BY tid LIMIT $4`}

// qTraceWindow is one page of the slices overlapping [$4, $5) (a slice of
// zero duration overlaps when it starts inside), in (start, track, stack
// id) order after the cursor's key, with the window's total.
var qTraceWindow = catalog.Query{Name: "analysis.trace_window", Version: "1", SQL: `
WITH w AS (
  SELECT stack_id, start_ns, duration_ns, track_id, thread, process, leaf_frame_id
  FROM stacks
  WHERE run_id = $1 AND artifact_id = $2 AND evidence_generation_id = $3 AND metric = 'trace.wall'
    AND start_ns < $5 AND (start_ns + duration_ns > $4 OR (duration_ns = 0 AND start_ns >= $4))
    AND ($6 = 0 OR track_id = $6) AND ($7 = '' OR coalesce(thread, '') = $7)),
t AS (SELECT count(*) AS n FROM w),
p AS (
  SELECT * FROM w
  WHERE NOT $8 OR start_ns > $9 OR (start_ns = $9 AND (track_id > $10 OR (track_id = $10 AND stack_id > $11)))
  ORDER BY start_ns, track_id, stack_id LIMIT $12),
f AS (
  SELECT frame_id, any_value(function) AS function, any_value(module) AS module, any_value(language) AS language
  FROM frames WHERE artifact_id = $2 AND evidence_generation_id = $3 AND frame_id IN (SELECT leaf_frame_id FROM p)
  GROUP BY frame_id),
d AS (
  SELECT stack_id, len(frame_ids) AS depth FROM stacks
  WHERE run_id = $1 AND artifact_id = $2 AND evidence_generation_id = $3 AND metric = 'trace.wall'
    AND start_ns >= (SELECT min(start_ns) FROM p) AND start_ns <= (SELECT max(start_ns) FROM p)
    AND stack_id IN (SELECT stack_id FROM p))
SELECT p.stack_id, p.start_ns, p.duration_ns, p.track_id, coalesce(p.thread, ''), coalesce(p.process, ''), p.leaf_frame_id, coalesce(d.depth, 0),
       coalesce(f.function, ''), coalesce(f.module, ''), coalesce(f.language, '') = 'device', t.n
FROM p CROSS JOIN t LEFT JOIN f ON f.frame_id = p.leaf_frame_id LEFT JOIN d USING (stack_id)
ORDER BY p.start_ns, p.track_id, p.stack_id`}

// TraceWindow lists the slices of a published trace that overlap a time
// range, keyset-paginated.
func TraceWindow(ctx context.Context, ws *workspace.Workspace, req TraceWindowRequest) (*TraceWindowResult, error) {
	if req.Limit == 0 {
		req.Limit = 100
	}
	limit, err := query.Limit(req.Limit)
	if err != nil {
		return nil, err
	}
	if req.EndNS != 0 && req.EndNS <= req.StartNS {
		return nil, fault.New(fault.InvalidArguments, "the window is empty: --end %d is not after --start %d", req.EndNS, req.StartNS).
			Fix("Pass --end greater than --start (both in ns from the trace's earliest timestamp), or leave --end out for the end of the trace.")
	}
	s, err := query.OpenTables(ctx, ws, traceTables...)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	src, span, origin, lim, err := traceSource(ctx, s, req.Input)
	if err != nil {
		return nil, err
	}
	end := req.EndNS
	if end == 0 {
		end = math.MaxInt64
		if span < math.MaxInt64 {
			end = span + 1
		}
	}
	var trackID uint64
	thread := ""
	if req.Track != "" {
		if n, err := strconv.ParseUint(req.Track, 10, 64); err == nil {
			trackID = n
		} else {
			thread = req.Track
		}
	}
	params := TraceWindowParams{StartNS: req.StartNS, EndNS: end, Track: req.Track, Limit: limit}
	want := cursor.Cursor{Query: qTraceWindow.Name, Version: qTraceWindow.Version, Order: "start_ns, track_id, stack_id", CommitID: s.Commit()}
	want.Filters, _ = cursor.FiltersDigest(map[string]any{"source": src, "params": params})
	after, keyStart, keyTrack, keyID := false, int64(0), uint64(0), ""
	if req.Cursor != "" {
		c, err := cursor.Decode(req.Cursor, want)
		if err != nil {
			return nil, err
		}
		if len(c.Key) != 3 {
			return nil, fault.New(fault.InvalidArguments, "the cursor is not valid (key)")
		}
		var e1, e2 error
		keyStart, e1 = strconv.ParseInt(c.Key[0], 10, 64)
		keyTrack, e2 = strconv.ParseUint(c.Key[1], 10, 64)
		if e1 != nil || e2 != nil {
			return nil, fault.New(fault.InvalidArguments, "the cursor is not valid (key)")
		}
		after, keyID = true, c.Key[2]
	}
	res := &TraceWindowResult{SchemaVersion: 1, Operation: OpTraceWindow, OperationVersion: Version, CorpusCommitID: s.Commit(),
		Source: *src, Parameters: params, SpanNS: span, OriginNS: origin, Tracks: []TraceTrack{}, Slices: []TraceSlice{},
		EvidenceLevel: "observed", Next: fault.Next{NextSteps: []string{}},
		Limitations: append(lim, "Times are ns from the trace's earliest timestamp (origin_ns); a slice is listed when it overlaps [start_ns, end_ns) on its track, in start order. Instants, counters and flows are measurements and call_edges, not slices.")}
	err = s.R.Scan(ctx, qTraceTracks, []any{src.RunID, src.ArtifactID, src.GenerationID, maxTraceTracks}, func(rows *sql.Rows) error {
		for rows.Next() {
			var t TraceTrack
			var total int64
			if err := rows.Scan(&t.TrackID, &t.Thread, &t.Process, &t.Labels, &t.Kind, &t.Device, &t.Slices, &total); err != nil {
				return err
			}
			res.Tracks = append(res.Tracks, t)
			res.TracksTruncated = total > int64(len(res.Tracks))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	args := []any{src.RunID, src.ArtifactID, src.GenerationID, req.StartNS, end, int64(trackID), thread, after, keyStart, int64(keyTrack), keyID, limit + 1}
	err = s.R.Scan(ctx, qTraceWindow, args, func(rows *sql.Rows) error {
		for rows.Next() {
			var x TraceSlice
			var depth, total int64
			if err := rows.Scan(&x.StackID, &x.StartNS, &x.DurationNS, &x.TrackID, &x.Thread, &x.Process, &x.FrameID, &depth,
				&x.Name, &x.Category, &x.Device, &total); err != nil {
				return err
			}
			res.Total = total
			if len(res.Slices) == limit {
				res.Truncated = true
				break
			}
			x.Depth, x.EndNS = int(depth), x.StartNS+x.DurationNS
			res.Slices = append(res.Slices, x)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	res.Returned = len(res.Slices)
	if res.Truncated {
		last := res.Slices[len(res.Slices)-1]
		want.Key = []string{strconv.FormatInt(last.StartNS, 10), strconv.FormatUint(last.TrackID, 10), last.StackID}
		res.Cursor = cursor.Encode(want)
		res.Then(fault.Step{Command: "flameox trace window " + src.ArtifactID + fmt.Sprintf(" --start %d --end %d", req.StartNS, end) + trackArg(req.Track) + " --cursor " + res.Cursor,
			Tool: "get_trace_window", Arguments: map[string]any{"input": src.ArtifactID, "start_ns": req.StartNS, "end_ns": end, "track": req.Track, "cursor": res.Cursor}})
	}
	res.Then(fault.Step{Command: "flameox open " + src.ArtifactID, Tool: "get_native_viewer_plan", Arguments: map[string]any{"artifact_id": src.ArtifactID}})
	return res, nil
}

func trackArg(t string) string {
	if t == "" {
		return ""
	}
	return " --track " + strconv.Quote(t)
}

// traceSource resolves input (an artifact id, or a run id: its newest
// trace) to a published trace.
func traceSource(ctx context.Context, s *query.Session, input string) (*Source, int64, int64, []string, error) {
	input = strings.TrimSpace(input)
	var runID, artID string
	switch {
	case digest.Valid(input):
		artID = input
	case run.ValidID(input):
		runID = input
	default:
		return nil, 0, 0, nil, fault.New(fault.InvalidArguments, "%q is neither a run id nor an artifact id (sha256:…)", input)
	}
	type cand struct {
		src    Source
		span   int64
		origin string
	}
	var found []cand
	seen := map[string]bool{}
	err := s.R.Scan(ctx, qTraceSource, []any{runID, artID}, func(rows *sql.Rows) error {
		for rows.Next() {
			var c cand
			if err := rows.Scan(&c.src.RunID, &c.src.ArtifactID, &c.src.GenerationID, &c.span, &c.origin, &c.src.DisplayName, &c.src.Kind, &c.src.Producer); err != nil {
				return err
			}
			// An artifact imported by several runs is one trace: the
			// newest publication of it is read.
			if k := c.src.ArtifactID; !seen[k] {
				seen[k] = true
				found = append(found, c)
			}
		}
		return nil
	})
	if err != nil {
		return nil, 0, 0, nil, err
	}
	if len(found) == 0 {
		return nil, 0, 0, nil, fault.New(fault.NotFound, "no imported trace for %s in the published corpus", input).
			With("missing_entity", "trace").
			FixSteps("Import a Chrome trace or torch.profiler export (%s), then retry.",
				fault.Step{Command: "flameox import trace.json.gz", Tool: "import_artifact", Arguments: map[string]any{"path": "trace.json.gz"}})
	}
	var lim []string
	if len(found) > 1 {
		var others []string
		for _, f := range found[1:] {
			others = append(others, f.src.ArtifactID+" ("+f.src.DisplayName+")")
		}
		lim = append(lim, "The run has several traces; this window reads "+found[0].src.DisplayName+". Pass an artifact id for another: "+strings.Join(others, ", "))
	}
	origin, _ := strconv.ParseInt(found[0].origin, 10, 64)
	return &found[0].src, found[0].span, origin, lim, nil
}
