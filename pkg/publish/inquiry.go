package publish

import (
	"context"
	"fmt"
	"strconv"

	"github.com/flameox/flameox/pkg/corpus"
	"github.com/flameox/flameox/pkg/evidence/schema"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/inquiry"
	"github.com/flameox/flameox/pkg/lock"
	"github.com/flameox/flameox/pkg/version"
	"github.com/flameox/flameox/pkg/workspace"
)

// PublishInquiry publishes investigation, hypothesis, experiment, variant,
// trial and run-set records (pkg/inquiry types, by value or pointer) as one
// generation: one row per body in the table of its kind.
//
// Each body is validated on its own first (inquiry.Validate). Then, under
// the write lock and against the HEAD the commit will extend (Meta.Check),
// what depends on the corpus: a hypothesis revision is a compare-and-swap
// (its ExpectedRevision must be that hypothesis's latest revision at HEAD,
// 0 for one that does not exist, and Revision the next one; otherwise
// REVISION_CONFLICT naming the current revision), the investigation of a
// hypothesis and the investigation and hypothesis an experiment names
// must exist (at HEAD or in the batch), an investigation or run set id
// must be new, and a run set's commit must exist. Several revisions of one hypothesis in one batch
// must follow each other. Nothing is published when any body is refused.
func (p *Publisher) PublishInquiry(ctx context.Context, bodies []any) (*Result, error) {
	if len(bodies) == 0 {
		return nil, fault.New(fault.InvalidArguments, "nothing to publish")
	}
	b := &inquiryBatch{}
	for i, body := range bodies {
		ptr := inquiry.Pointer(body)
		if ptr == nil {
			return nil, fault.New(fault.InvalidArguments, "record %d: %T is not an inquiry record", i+1, body)
		}
		if err := inquiry.Validate(ptr); err != nil {
			return nil, err
		}
		if err := b.add(p.WS.Root, ptr); err != nil {
			return nil, err
		}
	}
	st, err := NewStage(p.WS.Root, Name, version.Version(), p.now())
	if err != nil {
		return nil, err
	}
	defer st.Discard()
	if err := b.write(st); err != nil {
		return nil, err
	}
	meta := Meta{Publisher: Name, PublisherVersion: version.Version(), Check: func(head corpus.Commit) error {
		return b.check(ctx, p.WS, head)
	}}
	res, err := p.commit(ctx, st, meta, 0)
	if err != nil {
		return nil, err
	}
	// An experiment publishes a small generation per block; merge them as
	// PublishRuns does, so HEAD's inventory (which every check reads)
	// stays short.
	if p.AutoCompact && res.live >= AutoCompactGenerations {
		c, err := p.autoCompact(ctx)
		switch {
		case err != nil:
			res.CompactionError = fault.As(err).Message
		case c.Compacted:
			res.Compaction = c
		}
	}
	return res, nil
}

// inquiryBatch is one publication's bodies, by kind, in input order.
type inquiryBatch struct {
	investigations []*inquiry.Investigation
	hypotheses     []*inquiry.Hypothesis
	experiments    []*inquiry.Experiment
	variants       []*inquiry.Variant
	trials         []*inquiry.Trial
	runSets        []*inquiry.RunSet
}

func (b *inquiryBatch) add(root string, body any) error {
	switch x := body.(type) {
	case *inquiry.Investigation:
		for _, o := range b.investigations {
			if o.InvestigationID == x.InvestigationID {
				return fault.New(fault.InvalidArguments, "investigation %s appears twice in one publication", x.InvestigationID).With("investigation_id", x.InvestigationID)
			}
		}
		b.investigations = append(b.investigations, x)
	case *inquiry.Hypothesis:
		b.hypotheses = append(b.hypotheses, x)
	case *inquiry.Experiment:
		b.experiments = append(b.experiments, x)
	case *inquiry.Variant:
		b.variants = append(b.variants, x)
	case *inquiry.Trial:
		b.trials = append(b.trials, x)
	case *inquiry.RunSet:
		for _, o := range b.runSets {
			if o.RunSetID == x.RunSetID {
				return fault.New(fault.InvalidArguments, "run set %s appears twice in one publication", x.RunSetID).With("run_set_id", x.RunSetID)
			}
		}
		if _, err := corpus.Read(root, x.CorpusCommitID); err != nil {
			return fault.Wrap(fault.InvalidArguments, err, "run set %s names commit %s, which this workspace does not have", x.RunSetID, x.CorpusCommitID).
				With("run_set_id", x.RunSetID).With("field", "corpus_commit_id")
		}
		b.runSets = append(b.runSets, x)
	}
	return nil
}

// check refuses the batch unless it fits the corpus at head.
func (b *inquiryBatch) check(ctx context.Context, ws *workspace.Workspace, head corpus.Commit) error {
	if len(b.investigations)+len(b.hypotheses)+len(b.experiments)+len(b.runSets) == 0 {
		return nil
	}
	// Reading files: hold the retention lock shared, as every reader does
	// (after the write lock, in the global order).
	release, err := ws.Locks().Lock(ctx, lock.Retention, true)
	if err != nil {
		return err
	}
	defer release()
	snap, err := corpus.Open(ws.Root, head)
	if err != nil {
		return err
	}
	if len(b.investigations) > 0 || len(b.hypotheses) > 0 || len(b.experiments) > 0 {
		known, err := scanIDs(ctx, snap, schema.Investigations, "investigation_id")
		if err != nil {
			return err
		}
		for _, inv := range b.investigations {
			if known[inv.InvestigationID] {
				return fault.New(fault.RevisionConflict, "investigation %s already exists", inv.InvestigationID).
					With("investigation_id", inv.InvestigationID).Fix("Create a new investigation; an investigation id is never reused.")
			}
		}
		for _, inv := range b.investigations {
			known[inv.InvestigationID] = true
		}
		for _, inv := range b.investigations {
			if inv.ParentInvestigationID != "" && !known[inv.ParentInvestigationID] {
				return fault.New(fault.NotFound, "parent investigation %s does not exist", inv.ParentInvestigationID).
					With("investigation_id", inv.ParentInvestigationID)
			}
		}
		if len(b.hypotheses) > 0 || len(b.experiments) > 0 {
			heads, err := hypothesisHeads(ctx, snap)
			if err != nil {
				return err
			}
			latest := map[string]int32{}
			for id, hd := range heads {
				latest[id] = hd.revision
			}
			for _, h := range b.hypotheses {
				if !known[h.InvestigationID] {
					return fault.New(fault.NotFound, "investigation %s does not exist", h.InvestigationID).
						With("investigation_id", h.InvestigationID).With("field", "investigation_id")
				}
				cur := heads[h.HypothesisID]
				if h.ExpectedRevision != cur.revision {
					return revisionConflict(h, cur.revision)
				}
				if cur.revision > 0 && h.InvestigationID != cur.investigation {
					return fault.New(fault.InvalidArguments, "hypothesis %s belongs to investigation %s, not %s", h.HypothesisID, cur.investigation, h.InvestigationID).
						With("hypothesis_id", h.HypothesisID).With("field", "investigation_id")
				}
				heads[h.HypothesisID] = hypothesisHead{h.Revision, h.InvestigationID}
				latest[h.HypothesisID] = h.Revision
			}
			// An experiment tests a hypothesis of an investigation that exist.
			for _, e := range b.experiments {
				if e.InvestigationID != "" && !known[e.InvestigationID] {
					return fault.New(fault.NotFound, "experiment %s names investigation %s, which does not exist", e.ExperimentID, e.InvestigationID).
						With("investigation_id", e.InvestigationID).With("field", "investigation_id")
				}
				if e.HypothesisID != "" && latest[e.HypothesisID] == 0 {
					return fault.New(fault.NotFound, "experiment %s names hypothesis %s, which does not exist", e.ExperimentID, e.HypothesisID).
						With("hypothesis_id", e.HypothesisID).With("field", "hypothesis_id")
				}
			}
		}
	}
	if len(b.runSets) > 0 {
		known, err := scanIDs(ctx, snap, schema.RunSets, "run_set_id")
		if err != nil {
			return err
		}
		for _, rs := range b.runSets {
			if known[rs.RunSetID] {
				return fault.New(fault.RevisionConflict, "run set %s is already frozen; a frozen set never changes", rs.RunSetID).
					With("run_set_id", rs.RunSetID)
			}
		}
	}
	return nil
}

func revisionConflict(h *inquiry.Hypothesis, cur int32) error {
	var e *fault.Error
	if cur == 0 {
		e = fault.New(fault.RevisionConflict, "hypothesis %s does not exist (current revision 0); expected revision %d", h.HypothesisID, h.ExpectedRevision)
	} else {
		e = fault.New(fault.RevisionConflict, "hypothesis %s is at revision %d, not the expected revision %d", h.HypothesisID, cur, h.ExpectedRevision)
	}
	return e.With("hypothesis_id", h.HypothesisID).With("current_revision", strconv.Itoa(int(cur))).
		With("expected_revision", strconv.Itoa(int(h.ExpectedRevision))).
		FixSteps(fmt.Sprintf("Read revision %d with %%s, then record the change again with expected revision %d.", cur, cur),
			fault.Step{Command: "flameox hypotheses show " + h.HypothesisID, Tool: "get_hypothesis", Arguments: map[string]any{"hypothesis_id": h.HypothesisID}})
}

// HypothesisRevisions returns the latest revision of every hypothesis in
// snap, read from its Parquet files (no DuckDB).
func HypothesisRevisions(ctx context.Context, snap *corpus.Snapshot) (map[string]int32, error) {
	heads, err := hypothesisHeads(ctx, snap)
	latest := make(map[string]int32, len(heads))
	for id, h := range heads {
		latest[id] = h.revision
	}
	return latest, err
}

// hypothesisHead is a hypothesis's latest revision and its investigation.
type hypothesisHead struct {
	revision      int32
	investigation string
}

func hypothesisHeads(ctx context.Context, snap *corpus.Snapshot) (map[string]hypothesisHead, error) {
	heads := map[string]hypothesisHead{}
	err := scanLive(ctx, snap, schema.Hypotheses, []string{"hypothesis_id", "revision", "investigation_id"}, func(row []any) error {
		id, _ := row[0].(string)
		rev, _ := row[1].(int32)
		inv, _ := row[2].(string)
		if rev > heads[id].revision {
			heads[id] = hypothesisHead{rev, inv}
		}
		return nil
	})
	return heads, err
}

// scanIDs returns the set of values of one id column of table t in snap.
func scanIDs(ctx context.Context, snap *corpus.Snapshot, t *schema.Table, col string) (map[string]bool, error) {
	ids := map[string]bool{}
	err := scanLive(ctx, snap, t, []string{col}, func(row []any) error {
		if s, ok := row[0].(string); ok {
			ids[s] = true
		}
		return nil
	})
	return ids, err
}

// scanLive scans every file of table t in snap's inventory. A superseded
// generation is not in the inventory, and compaction copies its rows into
// the one that replaces it, so every row is read exactly once.
func scanLive(ctx context.Context, snap *corpus.Snapshot, t *schema.Table, cols []string, fn func([]any) error) error {
	for _, f := range snap.Files[t.Name] {
		if err := schema.Scan(ctx, t, f, cols, fn); err != nil {
			return fault.Wrap(fault.ArtifactIntegrityFailed, err, "read %s", t.Name)
		}
	}
	return nil
}

// write appends every body to its table in st.
func (b *inquiryBatch) write(st *Stage) error {
	if len(b.investigations) > 0 {
		w, err := st.Table(schema.Investigations)
		if err != nil {
			return err
		}
		for _, x := range b.investigations {
			w.StringCol("investigation_id").Append(x.InvestigationID)
			w.StringCol("question").Append(x.Question)
			w.StringCol("symptom").AppendOrNull(x.Symptom)
			w.StringCol("project_root").Append(x.ProjectRoot)
			w.StringCol("status").Append(x.Status)
			w.StringCol("parent_investigation_id").AppendOrNull(x.ParentInvestigationID)
			w.TimeCol("created_at").Append(x.CreatedAt)
			if err := w.EndRow(); err != nil {
				return err
			}
		}
	}
	if len(b.hypotheses) > 0 {
		w, err := st.Table(schema.Hypotheses)
		if err != nil {
			return err
		}
		for _, x := range b.hypotheses {
			w.StringCol("hypothesis_id").Append(x.HypothesisID)
			w.StringCol("investigation_id").Append(x.InvestigationID)
			w.Int32Col("revision").Append(x.Revision)
			w.StringCol("claim").Append(x.Claim)
			w.StringCol("prediction").Append(x.Prediction)
			w.StringCol("discriminating_condition").Append(x.DiscriminatingCondition)
			w.StringCol("assessment").Append(x.Assessment)
			w.StringCol("lifecycle").Append(x.Lifecycle)
			w.TimeCol("created_at").Append(x.CreatedAt)
			if err := w.EndRow(); err != nil {
				return err
			}
		}
	}
	if len(b.experiments) > 0 {
		w, err := st.Table(schema.Experiments)
		if err != nil {
			return err
		}
		for _, x := range b.experiments {
			w.StringCol("experiment_id").Append(x.ExperimentID)
			w.StringCol("investigation_id").Append(x.InvestigationID)
			w.StringCol("hypothesis_id").AppendOrNull(x.HypothesisID)
			w.StringCol("recipe").Append(x.Recipe)
			w.StringCol("recipe_version").Append(x.RecipeVersion)
			w.StringCol("workload_definition_id").Append(x.WorkloadDefinitionID)
			w.StringCol("experiment_design_id").Append(x.ExperimentDesignID)
			w.StringCol("measurement_protocol_id").Append(x.MeasurementProtocolID)
			w.StringCol("validation_spec_id").AppendOrNull(x.ValidationSpecID)
			w.StringCol("primary_metric").Append(x.PrimaryMetric)
			w.StringCol("polarity").Append(x.Polarity)
			w.StringCol("estimand").Append(x.Estimand)
			w.Float64Col("practical_threshold").Append(x.PracticalThreshold)
			w.Float64Col("confidence_level").Append(x.ConfidenceLevel)
			w.StringCol("stopping_rule_json").Append(orEmptyObject(x.StoppingRuleJSON))
			w.Uint64Col("random_seed").Append(x.RandomSeed)
			w.StringCol("role").Append(x.Role)
			w.TimeCol("created_at").Append(x.CreatedAt)
			if err := w.EndRow(); err != nil {
				return err
			}
		}
	}
	if len(b.variants) > 0 {
		w, err := st.Table(schema.Variants)
		if err != nil {
			return err
		}
		for _, x := range b.variants {
			w.StringCol("variant_id").Append(x.VariantID)
			w.StringCol("experiment_id").Append(x.ExperimentID)
			w.StringCol("name").Append(x.Name)
			w.StringCol("source_state_id").AppendOrNull(x.SourceStateID)
			w.StringCol("workload_instance_id").AppendOrNull(x.WorkloadInstanceID)
			w.StringCol("environment_requirements_json").Append(orEmptyObject(x.EnvironmentRequirementsJSON))
			w.StringCol("parameters_json").Append(orEmptyObject(x.ParametersJSON))
			if err := w.EndRow(); err != nil {
				return err
			}
		}
	}
	if len(b.trials) > 0 {
		w, err := st.Table(schema.Trials)
		if err != nil {
			return err
		}
		for _, x := range b.trials {
			w.StringCol("trial_id").Append(x.TrialID)
			w.StringCol("experiment_id").Append(x.ExperimentID)
			w.StringCol("variant_id").Append(x.VariantID)
			w.StringCol("run_id").AppendOrNull(x.RunID)
			w.StringCol("combination_id").Append(x.CombinationID)
			w.StringCol("factors_json").Append(orEmptyObject(x.FactorsJSON))
			w.StringCol("block_id").AppendOrNull(x.BlockID)
			if x.OrderInBlock != nil {
				w.Int32Col("order_in_block").Append(*x.OrderInBlock)
			} else {
				w.Int32Col("order_in_block").AppendNull()
			}
			w.StringCol("parameter_name").AppendOrNull(x.ParameterName)
			if x.ParameterValueInt != nil {
				w.Int64Col("parameter_value_int").Append(*x.ParameterValueInt)
			} else {
				w.Int64Col("parameter_value_int").AppendNull()
			}
			if x.ParameterValueFloat != nil {
				w.Float64Col("parameter_value_float").Append(*x.ParameterValueFloat)
			} else {
				w.Float64Col("parameter_value_float").AppendNull()
			}
			w.Int32Col("attempt").Append(x.Attempt)
			w.StringCol("outcome").Append(x.Outcome)
			w.StringCol("exclusion_reason").AppendOrNull(x.ExclusionReason)
			w.StringCol("validation_status").Append(x.ValidationStatus)
			w.StringCol("failure_class").Append(x.FailureClass)
			if err := w.EndRow(); err != nil {
				return err
			}
		}
	}
	if len(b.runSets) > 0 {
		w, err := st.Table(schema.RunSets)
		if err != nil {
			return err
		}
		for _, x := range b.runSets {
			w.StringCol("run_set_id").Append(x.RunSetID)
			w.StringCol("corpus_commit_id").Append(x.CorpusCommitID)
			w.TimeCol("created_at").Append(x.CreatedAt)
			w.StringCol("selection_json").Append(x.SelectionJSON)
			w.StringCol("members_json").Append(x.MembersJSON)
			w.Uint64Col("member_count").Append(x.MemberCount)
			w.StringCol("membership_digest").Append(x.MembershipDigest)
			if err := w.EndRow(); err != nil {
				return err
			}
		}
	}
	return nil
}

func orEmptyObject(s string) string {
	if s == "" {
		return "{}"
	}
	return s
}
