package publish

import (
	"context"
	"time"

	"github.com/flameox/flameox/pkg/analysis/provenance"
	"github.com/flameox/flameox/pkg/corpus"
	"github.com/flameox/flameox/pkg/evidence/schema"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/version"
)

// AnalysisRow is a recorded analysis to publish (the fields of the
// `analysis` record, see pkg/analysis/provenance).
type AnalysisRow struct {
	AnalysisID, Operation, OperationVersion, CorpusCommitID string
	ParametersJSON, ParametersDigest, ResultDigest          string
	CoverageJSON                                            string
	InputRunIDs, InputArtifactIDs, InputGenerationIDs       []string
	Limitations                                             []string
	StartedAt, CompletedAt                                  time.Time
}

// AnalysisRowOf converts an analysis record into its publication row.
func AnalysisRowOf(r *provenance.Record) AnalysisRow {
	return AnalysisRow{AnalysisID: r.AnalysisID, Operation: r.Operation, OperationVersion: r.OperationVersion,
		CorpusCommitID: r.CorpusCommitID, ParametersJSON: r.ParametersJSON, ParametersDigest: r.ParametersDigest,
		ResultDigest: r.ResultDigest, CoverageJSON: r.CoverageJSON, InputRunIDs: r.InputRunIDs,
		InputArtifactIDs: r.InputArtifactIDs, InputGenerationIDs: r.InputGenerationIDs, Limitations: r.Limitations,
		StartedAt: r.StartedAt, CompletedAt: r.CompletedAt}
}

// Root is the root of the workspace p publishes into.
func (p *Publisher) Root() string { return p.WS.Root }

// PublishAnalysis publishes one analysis record and returns the commit it
// landed in (analysis.Persist's Publisher).
func (p *Publisher) PublishAnalysis(ctx context.Context, r *provenance.Record) (string, error) {
	res, err := p.PublishAnalyses(ctx, []AnalysisRow{AnalysisRowOf(r)})
	if err != nil {
		return "", err
	}
	return res.CommitID, nil
}

// PublishAnalyses publishes recorded analyses (analyses rows and their
// evidence references: the commit, runs, artifacts and generations they
// read) as one generation. Each recorded commit must exist.
func (p *Publisher) PublishAnalyses(ctx context.Context, rows []AnalysisRow) (*Result, error) {
	if len(rows) == 0 {
		return nil, fault.New(fault.InvalidArguments, "nothing to publish")
	}
	st, err := NewStage(p.WS.Root, Name, version.Version(), p.now())
	if err != nil {
		return nil, err
	}
	defer st.Discard()
	aw, err := st.Table(schema.Analyses)
	if err != nil {
		return nil, err
	}
	rw, err := st.Table(schema.EvidenceRefs)
	if err != nil {
		return nil, err
	}
	meta := Meta{Publisher: Name, PublisherVersion: version.Version()}
	for _, a := range rows {
		if err := checkCommit(p.WS.Root, a.CorpusCommitID); err != nil {
			return nil, err
		}
		if err := appendAnalysis(aw, rw, a); err != nil {
			return nil, err
		}
		meta.InputRunIDs = append(meta.InputRunIDs, a.InputRunIDs...)
		meta.InputArtifactIDs = append(meta.InputArtifactIDs, a.InputArtifactIDs...)
	}
	return p.commit(ctx, st, meta, 0)
}

// appendAnalysis appends one analyses row and its evidence references
// (the commit, runs, artifacts and generations it read, relation input).
func appendAnalysis(aw, rw *schema.Writer, a AnalysisRow) error {
	aw.StringCol("analysis_id").Append(a.AnalysisID)
	aw.StringCol("recipe").Append(a.Operation)
	aw.StringCol("recipe_version").Append(a.OperationVersion)
	aw.StringCol("parameters_json").Append(a.ParametersJSON)
	aw.StringCol("parameters_digest").Append(a.ParametersDigest)
	aw.StringCol("corpus_commit_id").Append(a.CorpusCommitID)
	aw.StringListCol("input_generation_ids").Append(nonNilStrings(a.InputGenerationIDs))
	aw.StringListCol("input_run_ids").Append(nonNilStrings(a.InputRunIDs))
	aw.StringListCol("input_artifact_ids").Append(nonNilStrings(a.InputArtifactIDs))
	aw.StringCol("result_digest").Append(a.ResultDigest)
	aw.StringCol("result_artifact_id").AppendNull()
	aw.StringCol("coverage_json").Append(a.CoverageJSON)
	aw.StringListCol("limitations").Append(nonNilStrings(a.Limitations))
	aw.TimeCol("started_at").Append(a.StartedAt)
	aw.TimeCol("completed_at").Append(a.CompletedAt)
	if err := aw.EndRow(); err != nil {
		return err
	}
	refs := [][2]string{{"commit", a.CorpusCommitID}}
	for _, id := range a.InputRunIDs {
		refs = append(refs, [2]string{"run", id})
	}
	for _, id := range a.InputArtifactIDs {
		refs = append(refs, [2]string{"artifact", id})
	}
	for _, id := range a.InputGenerationIDs {
		refs = append(refs, [2]string{"generation", id})
	}
	for _, r := range refs {
		rw.StringCol("owner_type").Append("analysis")
		rw.StringCol("owner_id").Append(a.AnalysisID)
		rw.StringCol("ref_type").Append(r[0])
		rw.StringCol("ref_id").Append(r[1])
		rw.StringCol("relation").Append("input")
		if err := rw.EndRow(); err != nil {
			return err
		}
	}
	return nil
}

func checkCommit(root, id string) error {
	if _, err := corpus.Read(root, id); err != nil {
		return fault.Wrap(fault.InvalidArguments, err, "the analysis names commit %s, which this workspace does not have", id)
	}
	return nil
}
