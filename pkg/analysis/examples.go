package analysis

import (
	"context"
	"database/sql"

	"github.com/flameox/flameox/pkg/catalog"
	"github.com/flameox/flameox/pkg/query"
	"github.com/flameox/flameox/pkg/workspace"
)

// maxExampleDepth bounds the frames returned per stack (leaf side kept).
const maxExampleDepth = 64

// StackExample is one stored stack through the focal frame.
type StackExample struct {
	StackID     string      `json:"stack_id"`
	Value       int64       `json:"value"`
	Fraction    float64     `json:"fraction_of_frame"`
	SampleCount uint64      `json:"sample_count"`
	Thread      string      `json:"thread,omitempty"`
	Process     string      `json:"process,omitempty"`
	Depth       int         `json:"depth"`
	Truncated   bool        `json:"truncated"` // root-side frames omitted beyond maxExampleDepth
	Frames      []StackNode `json:"frames"`    // root first
}

// StackNode is one frame of an example stack.
type StackNode struct {
	FrameID  string `json:"frame_id"`
	Function string `json:"function"`
	File     string `json:"file,omitempty"`
	Focus    bool   `json:"focus,omitempty"`
}

// StackExamplesResult is the result of `flameox stacks examples`.
type StackExamplesResult struct {
	SchemaVersion    int            `json:"schema_version"`
	Operation        string         `json:"operation"`
	OperationVersion string         `json:"operation_version"`
	CorpusCommitID   string         `json:"corpus_commit_id"`
	Source           Source         `json:"source"`
	Parameters       Parameters     `json:"parameters"`
	SampleType       SampleType     `json:"sample_type"`
	SourceNote       string         `json:"source_note,omitempty"`
	Focus            Frame          `json:"focus"`
	Matches          []Frame        `json:"matches,omitempty"`
	Examples         []StackExample `json:"examples"`
	EvidenceLevel    string         `json:"evidence_level"`
	Limitations      []string       `json:"limitations"`
	query.Page
}

var qExamples = catalog.Query{Name: "analysis.examples", Version: "1", SQL: `
WITH s AS (
  SELECT stack_id, frame_ids, value, sample_count, thread, process FROM stacks
  WHERE ` + frameFilter + ` AND list_contains(frame_ids, $7)),
page AS (SELECT *, count(*) OVER () AS total FROM s ORDER BY abs(value) DESC, stack_id LIMIT $8 OFFSET $9),
f AS (SELECT frame_id, any_value(function) AS function, any_value(file) AS file
      FROM frames WHERE artifact_id = $2 AND evidence_generation_id = $3 GROUP BY frame_id)
SELECT page.stack_id, page.value, coalesce(page.sample_count, 0), coalesce(page.thread, ''), coalesce(page.process, ''), page.total,
       len(page.frame_ids), u.pos, u.fid, coalesce(f.function, ''), coalesce(f.file, '')
FROM page, unnest(page.frame_ids[greatest(len(page.frame_ids) - ` + "64" + ` + 1, 1):]) WITH ORDINALITY AS u(fid, pos)
LEFT JOIN f ON f.frame_id = u.fid
ORDER BY abs(page.value) DESC, page.stack_id, u.pos`}

// Examples lists the heaviest stored stacks that pass through a frame.
func Examples(ctx context.Context, ws *workspace.Workspace, req StacksRequest) (*StackExamplesResult, error) {
	if req.Limit == 0 {
		req.Limit = 5
	}
	d, err := startDrill(ctx, ws, req, qExamples)
	if err != nil {
		return nil, err
	}
	defer d.s.Close()
	res := &StackExamplesResult{SchemaVersion: 1, Operation: OpExamples, OperationVersion: Version, CorpusCommitID: d.s.Commit(),
		Source: *d.src, Parameters: d.params, SampleType: d.st, SourceNote: d.note, Focus: d.focus, Matches: d.listed(), Examples: []StackExample{}, EvidenceLevel: "observed",
		Limitations: d.lim}
	args := []any{d.src.RunID, d.src.ArtifactID, d.src.GenerationID, d.st.Type, req.Thread, req.Process, d.frame, d.limit + 1, d.offset}
	err = d.s.R.Scan(ctx, qExamples, args, func(rows *sql.Rows) error {
		var cur *StackExample
		for rows.Next() {
			var id, thread, process, fid, fn, file string
			var value, total int64
			var n uint64
			var depth, pos int64
			if err := rows.Scan(&id, &value, &n, &thread, &process, &total, &depth, &pos, &fid, &fn, &file); err != nil {
				return err
			}
			res.Total = total
			if cur == nil || cur.StackID != id {
				if len(res.Examples) == d.limit {
					res.Truncated = true
					break
				}
				res.Examples = append(res.Examples, StackExample{StackID: id, Value: value, Fraction: frac(value, d.focus.Inclusive),
					SampleCount: n, Thread: thread, Process: process, Depth: int(depth), Truncated: depth > maxExampleDepth, Frames: []StackNode{}})
				cur = &res.Examples[len(res.Examples)-1]
			}
			cur.Frames = append(cur.Frames, StackNode{FrameID: fid, Function: fn, File: file, Focus: fid == d.frame})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	res.Returned = len(res.Examples)
	res.Cursor = d.next(res.Truncated)
	if res.Total == 0 {
		res.Limitations = append(res.Limitations, "No stored stack passes through this frame: only the heaviest stacks are stored (see the extraction's limitations); open the native profile to see all.")
	}
	return res, nil
}
