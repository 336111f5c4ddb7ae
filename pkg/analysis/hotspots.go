package analysis

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"

	"github.com/flameox/flameox/pkg/catalog"
	"github.com/flameox/flameox/pkg/cursor"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/query"
	"github.com/flameox/flameox/pkg/workspace"
)

// Operation names and versions of the recipes.
const (
	OpHotspots = "hotspots"
	OpCallers  = "stacks.callers"
	OpCallees  = "stacks.callees"
	OpExamples = "stacks.examples"
	Version    = "1"
)

// HotspotsRequest asks for the top frames of a profile.
type HotspotsRequest struct {
	Input      string `json:"input" jsonschema:"run id or artifact id of a published profile"`
	Limit      int    `json:"limit,omitempty" jsonschema:"rows to return (default 20, max 1000)"`
	SampleType string `json:"sample_type,omitempty" jsonschema:"e.g. cpu, alloc_space (default: the profile's)"`
	Thread     string `json:"thread,omitempty" jsonschema:"only samples of this thread"`
	Process    string `json:"process,omitempty" jsonschema:"only samples of this process"`
	Cursor     string `json:"cursor,omitempty" jsonschema:"cursor from a previous page"`
	// Focus and Ignore filter samples by name, as go tool pprof -focus and
	// -ignore do: a sample is kept when a frame of it matches Focus and
	// none matches Ignore (function name, file or module; RE2 syntax).
	Focus  string `json:"focus,omitempty" jsonschema:"RE2: keep samples with a frame (function, file, module) matching (pprof -focus)"`
	Ignore string `json:"ignore,omitempty" jsonschema:"RE2: drop samples with a frame matching (pprof -ignore)"`
}

// Frame is one function-level frame with its values under a sample type.
type Frame struct {
	FrameID           string  `json:"frame_id"`
	Function          string  `json:"function"`
	File              string  `json:"file,omitempty"`
	StartLine         int     `json:"start_line,omitempty"`
	Module            string  `json:"module,omitempty"`
	Unsymbolized      bool    `json:"unsymbolized"`
	Self              int64   `json:"self"`
	SelfFraction      float64 `json:"self_fraction"`
	Inclusive         int64   `json:"inclusive"`
	InclusiveFraction float64 `json:"inclusive_fraction"`
}

// HotspotRow is a ranked frame.
type HotspotRow struct {
	Rank int `json:"rank"`
	Frame
	// SumFraction is pprof's sum%: the self values of this row and every
	// row ranked above it (earlier pages included), over the total.
	SumFraction float64 `json:"sum_fraction"`
	SumSelf     int64   `json:"sum_self"`
	// Inline is pprof's label: "inline" when every call into the function
	// was inlined, "partial-inline" when some were, else "".
	Inline string `json:"inline,omitempty"`
}

// HotspotsResult is the result of `flameox analyze hotspots` and MCP
// analyze_hotspots.
type HotspotsResult struct {
	SchemaVersion    int    `json:"schema_version"`
	Operation        string `json:"operation"`
	OperationVersion string `json:"operation_version"`
	CorpusCommitID   string `json:"corpus_commit_id"`
	Source           Source `json:"source"`
	// SourceNote says which of a run's profiles this is and why, when the
	// input was a run id and that was a choice (the run has several
	// profiles, or no CPU profile); the text output's first line.
	SourceNote  string       `json:"source_note,omitempty"`
	Parameters  Parameters   `json:"parameters"`
	SampleType  SampleType   `json:"sample_type"`
	SampleTypes []SampleType `json:"sample_types"`
	// DurationNanos is the profile's own duration, when it records one.
	DurationNanos int64 `json:"duration_ns,omitempty"`
	// ShownSelf is the sum of the rows' self values (pprof's "Showing
	// nodes accounting for").
	ShownSelf int64 `json:"shown_self"`
	// OutputUnit is the unit pprof would print this profile's values in
	// (chosen from its smallest frame value and its total), e.g. "s",
	// "MB"; the text output uses it.
	OutputUnit string `json:"output_unit"`
	// Threads lists the profile's thread labels (at most 100), for --thread.
	Threads []string     `json:"threads"`
	Rows    []HotspotRow `json:"rows"`
	// SymbolizedFraction is the share of the total in frames with a
	// function name.
	SymbolizedFraction float64  `json:"symbolized_fraction"`
	EvidenceLevel      string   `json:"evidence_level"`
	Limitations        []string `json:"limitations"`
	query.Page
	// Next names the callers, examples and viewer of the top frame: CLI
	// commands, or over MCP the tools with their arguments.
	fault.Next
}

// Parameters echo what an analysis was asked.
type Parameters struct {
	SampleType string `json:"sample_type"`
	Thread     string `json:"thread,omitempty"`
	Process    string `json:"process,omitempty"`
	Focus      string `json:"focus,omitempty"`
	Ignore     string `json:"ignore,omitempty"`
	Limit      int    `json:"limit"`
}

const frameFilter = `run_id = $1 AND artifact_id = $2 AND evidence_generation_id = $3 AND metric = $4
  AND ($5 = '' OR coalesce(thread, '') = $5) AND ($6 = '' OR coalesce(process, '') = $6)`

// inlineLabel is a frame's pprof inline label from frames.inlined and
// inline_chain (pkg/adapter/stacks writes them under the default sample
// type; older extractions leave them null: no label).
const inlineLabel = `CASE WHEN f.inlined THEN 'inline' WHEN len(coalesce(f.inline_chain, [])) > 0 THEN 'partial-inline' ELSE '' END`

// qHotspots ranks a profile's frames when they cannot be read by rank
// (several threads or processes summed, or an older extractor). The
// frames table holds each frame id once per artifact and generation (the
// extractor writes it so), so frames join without de-duplication; the
// count and symbolized total come from the joined rows, materialized
// once, rather than from window functions (a quarter of the query's time
// on a 23,038-frame profile). Version 3 breaks full ties by frame id, as
// the extractor's rank does.
var qHotspots = catalog.Query{Name: "analysis.hotspots", Version: "4", SQL: `
WITH m AS (
  SELECT frame_id, sum(self_value) AS self, sum(inclusive_value) AS incl FROM frame_measurements
  WHERE ` + frameFilter + ` GROUP BY frame_id HAVING sum(self_value) <> 0 OR sum(inclusive_value) <> 0),
j AS MATERIALIZED (
  SELECT m.frame_id, f.function, f.file, f.start_line, f.module, coalesce(f.symbolization, 'none') = 'none' AS unsym, m.self, m.incl,
         ` + inlineLabel + ` AS inl
  FROM m LEFT JOIN (SELECT frame_id, function, file, start_line, module, symbolization, inlined, inline_chain FROM frames
                    WHERE artifact_id = $2 AND evidence_generation_id = $3) f USING (frame_id)),
t AS (SELECT count(*) AS n, coalesce(sum(CASE WHEN unsym THEN 0 ELSE abs(self) END), 0) AS s,
             coalesce(min(CASE WHEN self <> 0 THEN abs(self) ELSE abs(incl) END), 0) AS mn FROM j)
SELECT j.frame_id, coalesce(j.function, ''), coalesce(j.file, ''), coalesce(j.start_line, 0), coalesce(j.module, ''),
       j.unsym, j.self, j.incl, j.inl, t.n, t.s, t.mn
FROM j, t
ORDER BY abs(j.self) DESC, j.function ASC, abs(j.incl) DESC, j.module ASC, j.frame_id ASC
LIMIT $7 OFFSET $8`}

// qHotspotsRanked reads one page of a profile's frames by rank, for one
// thread/process pair: the extractor wrote frame_measurements in rank
// order and frames hottest first, in small row groups, so min/max
// statistics on rank and frame_index leave DuckDB a row group of each to
// read (pkg/adapter/stacks/rank.go). Its rows and order are qHotspots'.
var qHotspotsRanked = catalog.Query{Name: "analysis.hotspots_ranked", Version: "2", SQL: `
WITH top AS MATERIALIZED (
  SELECT frame_id, frame_index, self_value, inclusive_value, rank FROM frame_measurements
  WHERE run_id = $1 AND artifact_id = $2 AND evidence_generation_id = $3 AND metric = $4
    AND coalesce(thread, '') = $5 AND coalesce(process, '') = $6 AND rank > $8 AND rank <= $8 + $7)
SELECT top.frame_id, coalesce(f.function, ''), coalesce(f.file, ''), coalesce(f.start_line, 0), coalesce(f.module, ''),
       coalesce(f.symbolization, 'none') = 'none', top.self_value, top.inclusive_value, ` + inlineLabel + `
FROM top LEFT JOIN (SELECT frame_id, function, file, start_line, module, symbolization, inlined, inline_chain FROM frames
                    WHERE artifact_id = $2 AND evidence_generation_id = $3
                      AND frame_index IN (SELECT frame_index FROM top)) f USING (frame_id)
ORDER BY top.rank`}

// forceAggregate makes Hotspots aggregate even when it could read by
// rank (tests compare the two).
var forceAggregate bool

// Hotspots returns the top frames of a published profile.
func Hotspots(ctx context.Context, ws *workspace.Workspace, req HotspotsRequest) (*HotspotsResult, error) {
	if req.Limit == 0 {
		req.Limit = 20
	}
	limit, err := query.Limit(req.Limit)
	if err != nil {
		return nil, err
	}
	filter, err := compileFilter(req.Focus, req.Ignore)
	if err != nil {
		return nil, err
	}
	if filter == nil && !forceAggregate && !forceDuckDB {
		d, err := openDirect(ctx, ws)
		if err != nil {
			return nil, err
		}
		if d != nil {
			res, err := hotspotsFrom(ctx, ws, nil, d, req, limit, nil)
			d.close()
			if !errors.Is(err, errDirect) {
				directAnswers.Add(1)
				return res, err
			}
		}
	}
	s, err := query.OpenTables(ctx, ws, hotspotsTables...)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	return hotspotsFrom(ctx, ws, s, nil, req, limit, filter)
}

// hotspotsFrom answers req from a DuckDB session s, or from the direct
// reader d when s is nil (which answers errDirect where it cannot read).
func hotspotsFrom(ctx context.Context, ws *workspace.Workspace, s *query.Session, d *direct, req HotspotsRequest, limit int, filter *nameFilter) (*HotspotsResult, error) {
	var sc *scope
	var err error
	commit := ""
	if s != nil {
		commit = s.Commit()
		sc, err = resolve(ctx, s, req.Input, req.Thread, req.Process)
	} else {
		commit = d.commit
		sc, err = d.resolve(ctx, req.Input, req.Thread, req.Process)
	}
	if err != nil {
		return nil, err
	}
	src, lim, types := sc.src, sc.lim, sc.types
	st, err := pick(types, req.SampleType)
	if err != nil {
		return nil, err
	}
	params := Parameters{SampleType: st.Type, Thread: req.Thread, Process: req.Process, Focus: req.Focus, Ignore: req.Ignore, Limit: limit}
	want := cursor.Cursor{Query: qHotspots.Name, Version: qHotspots.Version, Order: "flat"}
	want.Filters, _ = cursor.FiltersDigest(map[string]any{"source": src, "params": params})
	want.CommitID = commit
	offset, sum := 0, int64(0)
	if req.Cursor != "" {
		c, err := cursor.Decode(req.Cursor, want)
		if err != nil {
			return nil, err
		}
		if len(c.Key) != 2 {
			return nil, fault.New(fault.InvalidArguments, "the cursor is not valid (key)")
		}
		offset, _ = strconv.Atoi(c.Key[0])
		sum, _ = strconv.ParseInt(c.Key[1], 10, 64)
	}
	res := &HotspotsResult{SchemaVersion: 1, Operation: OpHotspots, OperationVersion: Version, CorpusCommitID: commit,
		Source: *src, SourceNote: sc.sourceNote(st), Parameters: params, SampleType: st, SampleTypes: types, Rows: []HotspotRow{},
		DurationNanos: sc.duration, EvidenceLevel: "observed",
		Limitations: append(lim, "Values are aggregated per function, as `go tool pprof -top` does by default; line-level detail stays in the native profile."),
		Next:        fault.Next{NextSteps: []string{}}, Threads: sc.threads}
	if sc.note != "" && src.Kind != "sample_profile" && src.Producer == "gotest" {
		res.Limitations = append(res.Limitations, "This gotest run has no CPU profile: a capture writes one only when the workload's options ask (options.profiles = \"cpu\"); its benchmark timings are then perturbed.")
	}
	switch {
	case filter != nil:
		res.SymbolizedFraction, err = filteredHotspots(ctx, ws, s, sc, st, req, filter, limit, offset, res)
	case s == nil:
		res.SymbolizedFraction, err = d.storedHotspots(ctx, sc, st, req, limit, offset, res)
	default:
		res.SymbolizedFraction, err = storedHotspots(ctx, s, sc, st, req, limit, offset, res)
	}
	if err != nil {
		return nil, err
	}
	for i := range res.Rows {
		r := &res.Rows[i]
		sum += r.Self
		res.ShownSelf += r.Self
		r.SumSelf, r.SumFraction = sum, frac(sum, st.Total)
	}
	res.Returned = len(res.Rows)
	if res.Truncated {
		want.Key = []string{strconv.Itoa(offset + limit), strconv.FormatInt(sum, 10)}
		res.Cursor = cursor.Encode(want)
	}
	if res.SymbolizedFraction < 0.999 && st.Total > 0 && filter == nil {
		res.Limitations = append(res.Limitations, fmt.Sprintf("%.1f%% of the %s is in frames without symbols (shown as [module] or <unknown>).",
			100*(1-res.SymbolizedFraction), st.Unit))
	}
	if filter == nil && (!st.Default || req.Thread != "" || req.Process != "") && labelled(res.Rows) {
		res.Limitations = append(res.Limitations, "Inline labels are those of the profile's default sample type over all threads; go tool pprof may label a few functions differently for this view.")
	}
	if len(res.Rows) > 0 {
		top := res.Rows[0]
		drill := map[string]any{"input": src.RunID, "frame_id": top.FrameID}
		res.Then(
			fault.Step{Command: "flameox stacks callers " + src.RunID + " " + top.FrameID, Tool: "get_frame_callers", Arguments: drill},
			fault.Step{Command: "flameox stacks examples " + src.RunID + " " + top.FrameID, Tool: "get_stack_examples", Arguments: drill},
			fault.Step{Command: "flameox open " + src.ArtifactID, Tool: "get_native_viewer_plan", Arguments: map[string]any{"artifact_id": src.ArtifactID}})
	}
	return res, nil
}

// storedHotspots reads a page of rows from the published frame tables and
// returns the share of the total in frames with symbols.
func storedHotspots(ctx context.Context, s *query.Session, sc *scope, st SampleType, req HotspotsRequest, limit, offset int, res *HotspotsResult) (float64, error) {
	src := sc.src
	var symbolized, minValue int64
	minKnown := true
	q, args := qHotspots, []any{src.RunID, src.ArtifactID, src.GenerationID, st.Type, req.Thread, req.Process, limit + 1, offset}
	rk := sc.ranks[st.Type]
	byRank := rk.usable() && !forceAggregate
	if byRank {
		q, args[4], args[5] = qHotspotsRanked, rk.thread, rk.process
		res.Total, symbolized = rk.frames, rk.symbolized
		minValue, minKnown = rk.minValue, rk.hasMin
	}
	err := s.R.Scan(ctx, q, args, func(rows *sql.Rows) error {
		for rows.Next() {
			var r HotspotRow
			f := &r.Frame
			var start int32
			dest := []any{&f.FrameID, &f.Function, &f.File, &start, &f.Module, &f.Unsymbolized, &f.Self, &f.Inclusive, &r.Inline}
			if !byRank {
				dest = append(dest, &res.Total, &symbolized, &minValue)
			}
			if err := rows.Scan(dest...); err != nil {
				return err
			}
			if len(res.Rows) == limit {
				res.Truncated = true
				break
			}
			f.StartLine = int(start)
			f.SelfFraction, f.InclusiveFraction = frac(f.Self, st.Total), frac(f.Inclusive, st.Total)
			r.Rank = offset + len(res.Rows) + 1
			res.Rows = append(res.Rows, r)
		}
		return nil
	})
	if !minKnown { // an older extraction: the page's smallest value
		minValue = pageMin(res.Rows)
	}
	res.OutputUnit = NewValueFormat(st.Unit, minValue, st.Total).to
	return frac(symbolized, st.Total), err
}

// pageMin is the smallest non-zero |self| (else |inclusive|) of rows.
func pageMin(rows []HotspotRow) int64 {
	var m int64
	for _, r := range rows {
		v := abs(r.Self)
		if v == 0 {
			v = abs(r.Inclusive)
		}
		if v > 0 && (m == 0 || v < m) {
			m = v
		}
	}
	return m
}

func labelled(rows []HotspotRow) bool {
	for _, r := range rows {
		if r.Inline != "" {
			return true
		}
	}
	return false
}

func frac(v, total int64) float64 {
	if total == 0 {
		return 0
	}
	f := float64(v) / float64(total)
	if f < 0 {
		f = -f
	}
	return f
}
