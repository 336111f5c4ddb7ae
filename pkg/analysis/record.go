package analysis

import (
	"context"
	"encoding/json"
	"time"

	"github.com/flameox/flameox/pkg/digest"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/publish"
	"github.com/flameox/flameox/pkg/record"
	"github.com/google/uuid"
)

// Record is the `analysis` record `--record` writes for fox-publish: what
// was computed, from which exact commit and inputs, with which parameters,
// and the digest of the result. The result itself is not stored: because
// commits are immutable, running the same operation version with the same
// parameters at the recorded commit reproduces it, and its digest proves it.
type Record struct {
	record.Header
	Workspace          string    `json:"workspace"`
	AnalysisID         string    `json:"analysis_id"`
	Operation          string    `json:"operation"`
	OperationVersion   string    `json:"operation_version"`
	CorpusCommitID     string    `json:"corpus_commit_id"`
	ParametersJSON     string    `json:"parameters_json"`
	ParametersDigest   string    `json:"parameters_digest"`
	ResultDigest       string    `json:"result_digest"`
	InputRunIDs        []string  `json:"input_run_ids"`
	InputArtifactIDs   []string  `json:"input_artifact_ids"`
	InputGenerationIDs []string  `json:"input_generation_ids"`
	CoverageJSON       string    `json:"coverage_json"`
	Limitations        []string  `json:"limitations"`
	StartedAt          time.Time `json:"started_at"`
	CompletedAt        time.Time `json:"completed_at"`
}

// Recordable is implemented by results that can be persisted.
type Recordable interface {
	provenance() (op, version, commit string, params any, src Source, coverage any, lim []string)
}

func (r *HotspotsResult) provenance() (string, string, string, any, Source, any, []string) {
	return r.Operation, r.OperationVersion, r.CorpusCommitID, r.Parameters, r.Source,
		map[string]any{"symbolized_fraction": r.SymbolizedFraction, "rows_total": r.Total, "returned": r.Returned, "truncated": r.Truncated}, r.Limitations
}

func (r *CallEdgeResult) provenance() (string, string, string, any, Source, any, []string) {
	return r.Operation, r.OperationVersion, r.CorpusCommitID, map[string]any{"parameters": r.Parameters, "frame_id": r.Focus.FrameID}, r.Source,
		map[string]any{"edges_total": r.Total, "returned": r.Returned, "truncated": r.Truncated}, r.Limitations
}

func (r *StackExamplesResult) provenance() (string, string, string, any, Source, any, []string) {
	return r.Operation, r.OperationVersion, r.CorpusCommitID, map[string]any{"parameters": r.Parameters, "frame_id": r.Focus.FrameID}, r.Source,
		map[string]any{"examples_total": r.Total, "returned": r.Returned, "truncated": r.Truncated}, r.Limitations
}

// NewRecord describes result as an analysis record of the workspace at root.
func NewRecord(root string, result Recordable, started time.Time, now time.Time) (*Record, error) {
	op, version, commit, params, src, coverage, lim := result.provenance()
	pj, err := digest.Canonical(params)
	if err != nil {
		return nil, err
	}
	cj, err := digest.Canonical(coverage)
	if err != nil {
		return nil, err
	}
	resultDigest, err := digest.Of(result)
	if err != nil {
		return nil, fault.Wrap(fault.InternalError, err, "digest the %s result", op)
	}
	if lim == nil {
		lim = []string{}
	}
	return &Record{
		Header:    record.Header{Record: record.KindAnalysis, SchemaVersion: record.SchemaVersion},
		Workspace: root, AnalysisID: uuid.NewString(), Operation: op, OperationVersion: version, CorpusCommitID: commit,
		ParametersJSON: string(pj), ParametersDigest: digest.Bytes(pj), ResultDigest: resultDigest,
		InputRunIDs: []string{src.RunID}, InputArtifactIDs: []string{src.ArtifactID}, InputGenerationIDs: []string{src.GenerationID},
		CoverageJSON: string(cj), Limitations: lim, StartedAt: started.UTC(), CompletedAt: now.UTC(),
	}, nil
}

// Decode reads an analysis record from JSON.
func Decode(b []byte) (*Record, error) {
	var r Record
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// Recorded says where a recorded analysis was published.
type Recorded struct {
	AnalysisID     string `json:"analysis_id"`
	CorpusCommitID string `json:"recorded_in_commit_id"`
}

// HotspotsOutput is `flameox analyze hotspots --json` and the MCP
// analyze_hotspots result: the analysis, and its recording when asked.
type HotspotsOutput struct {
	*HotspotsResult
	Recorded *Recorded `json:"recorded,omitempty"`
}

// Row converts an analysis record into its publication row.
func (r *Record) Row() publish.AnalysisRow {
	return publish.AnalysisRow{AnalysisID: r.AnalysisID, Operation: r.Operation, OperationVersion: r.OperationVersion,
		CorpusCommitID: r.CorpusCommitID, ParametersJSON: r.ParametersJSON, ParametersDigest: r.ParametersDigest,
		ResultDigest: r.ResultDigest, CoverageJSON: r.CoverageJSON, InputRunIDs: r.InputRunIDs,
		InputArtifactIDs: r.InputArtifactIDs, InputGenerationIDs: r.InputGenerationIDs, Limitations: r.Limitations,
		StartedAt: r.StartedAt, CompletedAt: r.CompletedAt}
}

// Persist records result and publishes it as an analysis.
func Persist(ctx context.Context, pub *publish.Publisher, result Recordable, started, now time.Time) (*Recorded, error) {
	r, err := NewRecord(pub.WS.Root, result, started, now)
	if err != nil {
		return nil, err
	}
	res, err := pub.PublishAnalyses(ctx, []publish.AnalysisRow{r.Row()})
	if err != nil {
		return nil, err
	}
	return &Recorded{AnalysisID: r.AnalysisID, CorpusCommitID: res.CommitID}, nil
}
