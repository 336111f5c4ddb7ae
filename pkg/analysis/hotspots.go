package analysis

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"

	"github.com/flameox/flameox/pkg/catalog"
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
	Input      string `json:"input" jsonschema:"run id or artifact id (sha256:...) of a published profile"`
	Limit      int    `json:"limit,omitempty" jsonschema:"rows to return (default 20, max 1000)"`
	SampleType string `json:"sample_type,omitempty" jsonschema:"sample type, e.g. cpu, samples, alloc_space (default: the profile's default)"`
	Thread     string `json:"thread,omitempty" jsonschema:"only samples of this thread"`
	Process    string `json:"process,omitempty" jsonschema:"only samples of this process"`
	Cursor     string `json:"cursor,omitempty" jsonschema:"cursor from a previous page"`
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
}

// HotspotsResult is the result of `flameox analyze hotspots` and MCP
// analyze_hotspots.
type HotspotsResult struct {
	SchemaVersion    int          `json:"schema_version"`
	Operation        string       `json:"operation"`
	OperationVersion string       `json:"operation_version"`
	CorpusCommitID   string       `json:"corpus_commit_id"`
	Source           Source       `json:"source"`
	Parameters       Parameters   `json:"parameters"`
	SampleType       SampleType   `json:"sample_type"`
	SampleTypes      []SampleType `json:"sample_types"`
	// Threads lists the profile's thread labels (at most 100), for --thread.
	Threads []string     `json:"threads"`
	Rows    []HotspotRow `json:"rows"`
	// SymbolizedFraction is the share of the total in frames with a
	// function name.
	SymbolizedFraction float64  `json:"symbolized_fraction"`
	EvidenceLevel      string   `json:"evidence_level"`
	Limitations        []string `json:"limitations"`
	query.Page
	NextSteps []string `json:"next_steps"`
}

// Parameters echo what an analysis was asked.
type Parameters struct {
	SampleType string `json:"sample_type"`
	Thread     string `json:"thread,omitempty"`
	Process    string `json:"process,omitempty"`
	Limit      int    `json:"limit"`
}

const frameFilter = `run_id = $1 AND artifact_id = $2 AND evidence_generation_id = $3 AND metric = $4
  AND ($5 = '' OR coalesce(thread, '') = $5) AND ($6 = '' OR coalesce(process, '') = $6)`

// qHotspots ranks a profile's frames when they cannot be read by rank
// (several threads or processes summed, or an older extractor). The
// frames table holds each frame id once per artifact and generation (the
// extractor writes it so), so frames join without de-duplication; the
// count and symbolized total come from the joined rows, materialized
// once, rather than from window functions (a quarter of the query's time
// on a 23,038-frame profile). Version 3 breaks full ties by frame id, as
// the extractor's rank does.
var qHotspots = catalog.Query{Name: "analysis.hotspots", Version: "3", SQL: `
WITH m AS (
  SELECT frame_id, sum(self_value) AS self, sum(inclusive_value) AS incl FROM frame_measurements
  WHERE ` + frameFilter + ` GROUP BY frame_id HAVING sum(self_value) <> 0 OR sum(inclusive_value) <> 0),
j AS MATERIALIZED (
  SELECT m.frame_id, f.function, f.file, f.start_line, f.module, coalesce(f.symbolization, 'none') = 'none' AS unsym, m.self, m.incl
  FROM m LEFT JOIN (SELECT frame_id, function, file, start_line, module, symbolization FROM frames
                    WHERE artifact_id = $2 AND evidence_generation_id = $3) f USING (frame_id)),
t AS (SELECT count(*) AS n, coalesce(sum(CASE WHEN unsym THEN 0 ELSE abs(self) END), 0) AS s FROM j)
SELECT j.frame_id, coalesce(j.function, ''), coalesce(j.file, ''), coalesce(j.start_line, 0), coalesce(j.module, ''),
       j.unsym, j.self, j.incl, t.n, t.s
FROM j, t
ORDER BY abs(j.self) DESC, j.function ASC, abs(j.incl) DESC, j.module ASC, j.frame_id ASC
LIMIT $7 OFFSET $8`}

// qHotspotsRanked reads one page of a profile's frames by rank, for one
// thread/process pair: the extractor wrote frame_measurements in rank
// order and frames hottest first, in small row groups, so min/max
// statistics on rank and frame_index leave DuckDB a row group of each to
// read (pkg/adapter/pprof/rank.go). Its rows and order are qHotspots'.
var qHotspotsRanked = catalog.Query{Name: "analysis.hotspots_ranked", Version: "1", SQL: `
WITH top AS MATERIALIZED (
  SELECT frame_id, frame_index, self_value, inclusive_value, rank FROM frame_measurements
  WHERE run_id = $1 AND artifact_id = $2 AND evidence_generation_id = $3 AND metric = $4
    AND coalesce(thread, '') = $5 AND coalesce(process, '') = $6 AND rank > $8 AND rank <= $8 + $7)
SELECT top.frame_id, coalesce(f.function, ''), coalesce(f.file, ''), coalesce(f.start_line, 0), coalesce(f.module, ''),
       coalesce(f.symbolization, 'none') = 'none', top.self_value, top.inclusive_value
FROM top LEFT JOIN (SELECT frame_id, function, file, start_line, module, symbolization FROM frames
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
	s, err := query.OpenTables(ctx, ws, hotspotsTables...)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	sc, err := resolve(ctx, s, req.Input, req.Thread, req.Process)
	if err != nil {
		return nil, err
	}
	src, lim, types := sc.src, sc.lim, sc.types
	st, err := pick(types, req.SampleType)
	if err != nil {
		return nil, err
	}
	params := Parameters{SampleType: st.Type, Thread: req.Thread, Process: req.Process, Limit: limit}
	want := catalog.Cursor{Query: qHotspots.Name, Version: qHotspots.Version, Order: "flat"}
	want.Filters, _ = catalog.FiltersDigest(map[string]any{"source": src, "params": params})
	want.CommitID = s.Commit()
	offset := 0
	if req.Cursor != "" {
		c, err := catalog.DecodeCursor(req.Cursor, want)
		if err != nil {
			return nil, err
		}
		if len(c.Key) != 1 {
			return nil, fault.New(fault.InvalidArguments, "the cursor is not valid (key)")
		}
		offset, _ = strconv.Atoi(c.Key[0])
	}
	res := &HotspotsResult{SchemaVersion: 1, Operation: OpHotspots, OperationVersion: Version, CorpusCommitID: s.Commit(),
		Source: *src, Parameters: params, SampleType: st, SampleTypes: types, Rows: []HotspotRow{}, EvidenceLevel: "observed",
		Limitations: append(lim, "Values are aggregated per function, as `go tool pprof -top` does by default; line-level detail stays in the native profile."),
		NextSteps:   []string{}, Threads: sc.threads}
	var symbolized int64
	q, args := qHotspots, []any{src.RunID, src.ArtifactID, src.GenerationID, st.Type, req.Thread, req.Process, limit + 1, offset}
	rk := sc.ranks[st.Type]
	byRank := rk.usable() && !forceAggregate
	if byRank {
		q, args[4], args[5] = qHotspotsRanked, rk.thread, rk.process
		res.Total, symbolized = rk.frames, rk.symbolized
	}
	err = s.R.Scan(ctx, q, args, func(rows *sql.Rows) error {
		for rows.Next() {
			var f Frame
			var start int32
			dest := []any{&f.FrameID, &f.Function, &f.File, &start, &f.Module, &f.Unsymbolized, &f.Self, &f.Inclusive}
			if !byRank {
				dest = append(dest, &res.Total, &symbolized)
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
			res.Rows = append(res.Rows, HotspotRow{Rank: offset + len(res.Rows) + 1, Frame: f})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	res.Returned = len(res.Rows)
	res.SymbolizedFraction = frac(symbolized, st.Total)
	if res.Truncated {
		want.Key = []string{strconv.Itoa(offset + limit)}
		res.Cursor = catalog.EncodeCursor(want)
	}
	if res.SymbolizedFraction < 0.999 && st.Total > 0 {
		res.Limitations = append(res.Limitations, fmt.Sprintf("%.1f%% of the %s is in frames without symbols (shown as [module] or <unknown>).",
			100*(1-res.SymbolizedFraction), st.Unit))
	}
	if len(res.Rows) > 0 {
		top := res.Rows[0]
		res.NextSteps = append(res.NextSteps,
			"flameox stacks callers "+src.RunID+" "+top.FrameID,
			"flameox stacks examples "+src.RunID+" "+top.FrameID,
			"flameox open "+src.ArtifactID)
	}
	return res, nil
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
