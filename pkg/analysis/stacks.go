package analysis

import (
	"context"
	"database/sql"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/flameox/flameox/pkg/catalog"
	"github.com/flameox/flameox/pkg/cursor"
	"github.com/flameox/flameox/pkg/digest"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/query"
	"github.com/flameox/flameox/pkg/workspace"
)

// StacksRequest asks for the callers, callees or stack examples of a frame.
type StacksRequest struct {
	Input      string `json:"input" jsonschema:"run id or artifact id of a published profile"`
	FrameID    string `json:"frame_id" jsonschema:"frame id, or a function regexp (pprof -peek)"`
	SampleType string `json:"sample_type,omitempty" jsonschema:"default: the profile's"`
	Thread     string `json:"thread,omitempty" jsonschema:"only samples of this thread"`
	Process    string `json:"process,omitempty" jsonschema:"only samples of this process"`
	Limit      int    `json:"limit,omitempty" jsonschema:"rows to return (default 20, max 1000)"`
	Cursor     string `json:"cursor,omitempty" jsonschema:"cursor from a previous page"`
}

// Edge is a caller or callee of the focal frame, weighted by the samples in
// which the call occurs (once per sample). Its Frame carries that frame's
// own self and inclusive totals over the whole profile (under the same
// filters), so an edge never shows inclusive 0 beside a non-zero value.
type Edge struct {
	Frame
	Value       int64   `json:"value"`
	Fraction    float64 `json:"fraction_of_frame"`
	SampleCount uint64  `json:"sample_count"`
}

// CallEdgeResult is the result of `flameox stacks callers|callees`.
type CallEdgeResult struct {
	SchemaVersion    int        `json:"schema_version"`
	Operation        string     `json:"operation"`
	OperationVersion string     `json:"operation_version"`
	CorpusCommitID   string     `json:"corpus_commit_id"`
	Source           Source     `json:"source"`
	Parameters       Parameters `json:"parameters"`
	SampleType       SampleType `json:"sample_type"`
	SourceNote       string     `json:"source_note,omitempty"`
	Focus            Frame      `json:"focus"`
	Matches          []Frame    `json:"matches,omitempty"`
	Edges            []Edge     `json:"edges"`
	EvidenceLevel    string     `json:"evidence_level"`
	Limitations      []string   `json:"limitations"`
	query.Page
}

var (
	qFocus = catalog.Query{Name: "analysis.focus", Version: "1", SQL: `
SELECT coalesce(any_value(f.function), ''), coalesce(any_value(f.file), ''), coalesce(any_value(f.start_line), 0),
       coalesce(any_value(f.module), ''), coalesce(any_value(f.symbolization), 'none') = 'none',
       coalesce((SELECT sum(self_value) FROM frame_measurements WHERE ` + frameFilter + ` AND frame_id = $7), 0),
       coalesce((SELECT sum(inclusive_value) FROM frame_measurements WHERE ` + frameFilter + ` AND frame_id = $7), 0)
FROM frames f WHERE f.artifact_id = $2 AND f.evidence_generation_id = $3 AND f.frame_id = $7`}
	edgeSQL = `
WITH e AS (
  SELECT %s AS other, sum(value) AS v, sum(sample_count) AS n FROM call_edges
  WHERE ` + frameFilter + ` AND %s = $7 GROUP BY other),
f AS (SELECT frame_id, any_value(function) AS function, any_value(file) AS file, any_value(start_line) AS start_line,
             any_value(module) AS module, any_value(symbolization) AS symbolization
      FROM frames WHERE artifact_id = $2 AND evidence_generation_id = $3 GROUP BY frame_id),
m AS (SELECT frame_id, sum(self_value) AS self, sum(inclusive_value) AS incl FROM frame_measurements
      WHERE ` + frameFilter + ` AND frame_id IN (SELECT other FROM e) GROUP BY frame_id)
SELECT e.other, coalesce(f.function, ''), coalesce(f.file, ''), coalesce(f.start_line, 0), coalesce(f.module, ''),
       coalesce(f.symbolization, 'none') = 'none', coalesce(m.self, 0), coalesce(m.incl, 0), e.v, e.n, count(*) OVER ()
FROM e LEFT JOIN f ON f.frame_id = e.other LEFT JOIN m ON m.frame_id = e.other
ORDER BY abs(e.v) DESC, f.function ASC
LIMIT $8 OFFSET $9`
	qCallers = catalog.Query{Name: "analysis.callers", Version: "2", SQL: sprintf(edgeSQL, "parent_frame_id", "child_frame_id")}
	qCallees = catalog.Query{Name: "analysis.callees", Version: "2", SQL: sprintf(edgeSQL, "child_frame_id", "parent_frame_id")}
)

func sprintf(format string, a, b string) string {
	return strings.Replace(strings.Replace(format, "%s", a, 1), "%s", b, 1)
}

// Callers lists the frames that call the focal frame.
func Callers(ctx context.Context, ws *workspace.Workspace, req StacksRequest) (*CallEdgeResult, error) {
	return edges(ctx, ws, req, qCallers, OpCallers)
}

// Callees lists the frames the focal frame calls.
func Callees(ctx context.Context, ws *workspace.Workspace, req StacksRequest) (*CallEdgeResult, error) {
	return edges(ctx, ws, req, qCallees, OpCallees)
}

// drill is the common start of every drill-down: pin, resolve, pick the
// sample type, load the focal frame, decode the cursor.
type drill struct {
	s       *query.Session
	src     *Source
	note    string
	matches []Frame // when the frame was named by a regexp: every match, heaviest first
	st      SampleType
	params  Parameters
	focus   Frame
	frame   string // the focal frame id (resolved from a regexp if need be)
	lim     []string
	limit   int
	offset  int
	want    cursor.Cursor
}

func startDrill(ctx context.Context, ws *workspace.Workspace, req StacksRequest, q catalog.Query) (*drill, error) {
	if req.Limit == 0 {
		req.Limit = 20
	}
	limit, err := query.Limit(req.Limit)
	if err != nil {
		return nil, err
	}
	var byName *regexp.Regexp
	if !digest.Valid(req.FrameID) {
		if byName, err = regexp.Compile(req.FrameID); err != nil || req.FrameID == "" {
			return nil, fault.New(fault.InvalidArguments, "%q is neither a frame id (sha256:…) nor a regexp of function names", req.FrameID).
				FixSteps("Pass a frame id from %s, or a regexp such as 'compress/flate\\.' (RE2 syntax, like go tool pprof -peek).",
					fault.Step{Command: "flameox analyze hotspots " + req.Input, Tool: "analyze_hotspots", Arguments: map[string]any{"input": req.Input}})
		}
	}
	s, err := query.OpenTables(ctx, ws, profileTables...)
	if err != nil {
		return nil, err
	}
	d := &drill{s: s, limit: limit}
	fail := func(err error) (*drill, error) { s.Close(); return nil, err }
	sc, err := resolve(ctx, s, req.Input, req.Thread, req.Process)
	if err != nil {
		return fail(err)
	}
	d.src, d.lim = sc.src, sc.lim
	if d.st, err = pick(sc.types, req.SampleType); err != nil {
		return fail(err)
	}
	d.note = sc.sourceNote(d.st)
	if byName != nil {
		if d.matches, err = matchFrames(ctx, s, d.src, d.st, req, byName); err != nil {
			return fail(err)
		}
		if len(d.matches) == 0 {
			return fail(fault.New(fault.NotFound, "no frame of this profile has a function name matching %q", req.FrameID).
				With("missing_entity", "frame").FixSteps("List the profile's functions with %s.",
				fault.Step{Command: "flameox analyze hotspots " + req.Input + " --limit 100", Tool: "analyze_hotspots",
					Arguments: map[string]any{"input": req.Input, "limit": 100}}))
		}
		req.FrameID = d.matches[0].FrameID
		if len(d.matches) > 1 {
			d.lim = append(d.lim, fmt.Sprintf("%d frames match the regexp; this shows the heaviest (by inclusive value), %s. Pass one of the listed frame ids, or a narrower regexp, for another.",
				len(d.matches), d.matches[0].Function))
		}
	}
	d.params = Parameters{SampleType: d.st.Type, Thread: req.Thread, Process: req.Process, Limit: limit}
	d.frame = req.FrameID
	found := false
	args := []any{d.src.RunID, d.src.ArtifactID, d.src.GenerationID, d.st.Type, req.Thread, req.Process, req.FrameID}
	err = s.R.Scan(ctx, qFocus, args, func(rows *sql.Rows) error {
		for rows.Next() {
			var start int32
			f := &d.focus
			f.FrameID = req.FrameID
			if err := rows.Scan(&f.Function, &f.File, &start, &f.Module, &f.Unsymbolized, &f.Self, &f.Inclusive); err != nil {
				return err
			}
			f.StartLine = int(start)
			found = f.Function != ""
		}
		return nil
	})
	if err != nil {
		return fail(err)
	}
	if !found {
		return fail(fault.New(fault.NotFound, "frame %s is not in this profile", req.FrameID).With("missing_entity", "frame"))
	}
	d.focus.SelfFraction, d.focus.InclusiveFraction = frac(d.focus.Self, d.st.Total), frac(d.focus.Inclusive, d.st.Total)
	d.want = cursor.Cursor{Query: q.Name, Version: q.Version, Order: "value", CommitID: s.Commit()}
	d.want.Filters, _ = cursor.FiltersDigest(map[string]any{"source": d.src, "params": d.params, "frame": req.FrameID})
	if req.Cursor != "" {
		c, err := cursor.Decode(req.Cursor, d.want)
		if err != nil {
			return fail(err)
		}
		if len(c.Key) != 1 {
			return fail(fault.New(fault.InvalidArguments, "the cursor is not valid (key)"))
		}
		d.offset, _ = strconv.Atoi(c.Key[0])
	}
	return d, nil
}

// maxMatches bounds the frames a regexp's result lists.
const maxMatches = 20

// qFrameValues lists every frame of a profile with a value under the
// filters, with its function name, heaviest inclusive value first.
var qFrameValues = catalog.Query{Name: "analysis.frame_values", Version: "1", SQL: `
WITH m AS (
  SELECT frame_id, sum(self_value) AS self, sum(inclusive_value) AS incl FROM frame_measurements
  WHERE ` + frameFilter + ` GROUP BY frame_id)
SELECT m.frame_id, coalesce(f.function, ''), coalesce(f.file, ''), coalesce(f.start_line, 0), coalesce(f.module, ''),
       coalesce(f.symbolization, 'none') = 'none', m.self, m.incl
FROM m JOIN (SELECT frame_id, function, file, start_line, module, symbolization FROM frames
             WHERE artifact_id = $2 AND evidence_generation_id = $3) f USING (frame_id)
ORDER BY abs(m.incl) DESC, f.function ASC, m.frame_id ASC`}

// matchFrames returns every frame whose function name re matches (as
// pprof's -peek matches node names), heaviest inclusive value first.
func matchFrames(ctx context.Context, s *query.Session, src *Source, st SampleType, req StacksRequest, re *regexp.Regexp) ([]Frame, error) {
	var out []Frame
	args := []any{src.RunID, src.ArtifactID, src.GenerationID, st.Type, req.Thread, req.Process}
	err := s.R.Scan(ctx, qFrameValues, args, func(rows *sql.Rows) error {
		for rows.Next() {
			var f Frame
			var start int32
			if err := rows.Scan(&f.FrameID, &f.Function, &f.File, &start, &f.Module, &f.Unsymbolized, &f.Self, &f.Inclusive); err != nil {
				return err
			}
			if !re.MatchString(f.Function) {
				continue
			}
			f.StartLine = int(start)
			f.SelfFraction, f.InclusiveFraction = frac(f.Self, st.Total), frac(f.Inclusive, st.Total)
			out = append(out, f)
		}
		return nil
	})
	return out, err
}

// listed is the frames a regexp matched, at most maxMatches (nil when the
// frame was named by id).
func (d *drill) listed() []Frame {
	if len(d.matches) > maxMatches {
		return d.matches[:maxMatches]
	}
	return d.matches
}

func (d *drill) next(truncated bool) string {
	if !truncated {
		return ""
	}
	d.want.Key = []string{strconv.Itoa(d.offset + d.limit)}
	return cursor.Encode(d.want)
}

func edges(ctx context.Context, ws *workspace.Workspace, req StacksRequest, q catalog.Query, op string) (*CallEdgeResult, error) {
	d, err := startDrill(ctx, ws, req, q)
	if err != nil {
		return nil, err
	}
	defer d.s.Close()
	res := &CallEdgeResult{SchemaVersion: 1, Operation: op, OperationVersion: Version, CorpusCommitID: d.s.Commit(),
		Source: *d.src, SourceNote: d.note, Parameters: d.params, SampleType: d.st, Focus: d.focus, Matches: d.listed(), Edges: []Edge{}, EvidenceLevel: "observed",
		Limitations: append(d.lim, "An edge's value counts each sample once in which the call occurs, like pprof's peek view.")}
	args := []any{d.src.RunID, d.src.ArtifactID, d.src.GenerationID, d.st.Type, req.Thread, req.Process, d.frame, d.limit + 1, d.offset}
	err = d.s.R.Scan(ctx, q, args, func(rows *sql.Rows) error {
		for rows.Next() {
			var e Edge
			var start int32
			var n uint64
			if err := rows.Scan(&e.FrameID, &e.Function, &e.File, &start, &e.Module, &e.Unsymbolized, &e.Self, &e.Inclusive, &e.Value, &n, &res.Total); err != nil {
				return err
			}
			if len(res.Edges) == d.limit {
				res.Truncated = true
				break
			}
			e.StartLine, e.SampleCount = int(start), n
			e.Fraction = frac(e.Value, d.focus.Inclusive)
			e.SelfFraction, e.InclusiveFraction = frac(e.Self, d.st.Total), frac(e.Inclusive, d.st.Total)
			res.Edges = append(res.Edges, e)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	res.Returned = len(res.Edges)
	res.Cursor = d.next(res.Truncated)
	if len(res.Edges) == 0 {
		res.Limitations = append(res.Limitations, "No edges: the frame is always at the end of its stacks in this direction (a root has no callers, a leaf no callees).")
	}
	return res, nil
}
