package analysis

import (
	"context"
	"time"

	"github.com/flameox/flameox/pkg/analysis/provenance"
	"github.com/flameox/flameox/pkg/digest"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/record"
	"github.com/google/uuid"
)

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

// Operation is a recordable result's operation and the corpus commit it
// read.
func Operation(r Recordable) (operation, commit string) {
	op, _, commit, _, _, _, _ := r.provenance()
	return op, commit
}

// multiInput is implemented by results that read many runs (scaling):
// their inputs replace the one Source.
type multiInput interface {
	inputs() (runs, artifacts, generations []string)
}

// NewRecord describes result as an analysis record of the workspace at root.
func NewRecord(root string, result Recordable, started time.Time, now time.Time) (*provenance.Record, error) {
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
	runs, artifacts, generations := []string{src.RunID}, []string{src.ArtifactID}, []string{src.GenerationID}
	if m, ok := result.(multiInput); ok {
		runs, artifacts, generations = m.inputs()
	}
	return &provenance.Record{
		Header:    record.Header{Record: record.KindAnalysis, SchemaVersion: record.SchemaVersion},
		Workspace: root, AnalysisID: uuid.NewString(), Operation: op, OperationVersion: version, CorpusCommitID: commit,
		ParametersJSON: string(pj), ParametersDigest: digest.Bytes(pj), ResultDigest: resultDigest,
		InputRunIDs: runs, InputArtifactIDs: artifacts, InputGenerationIDs: generations,
		CoverageJSON: string(cj), Limitations: lim, StartedAt: started.UTC(), CompletedAt: now.UTC(),
	}, nil
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

// Publisher publishes one analysis record into the workspace at Root and
// returns the commit it landed in. *publish.Publisher is the one
// implementation; naming it here instead would link the writer into
// fox-analyze.
type Publisher interface {
	Root() string
	PublishAnalysis(ctx context.Context, r *provenance.Record) (commitID string, err error)
}

// Persist records result and publishes it as an analysis.
func Persist(ctx context.Context, pub Publisher, result Recordable, started, now time.Time) (*Recorded, error) {
	r, err := NewRecord(pub.Root(), result, started, now)
	if err != nil {
		return nil, err
	}
	commitID, err := pub.PublishAnalysis(ctx, r)
	if err != nil {
		return nil, err
	}
	return &Recorded{AnalysisID: r.AnalysisID, CorpusCommitID: commitID}, nil
}
