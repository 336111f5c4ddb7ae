package publish

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/flameox/flameox/pkg/corpus"
	"github.com/flameox/flameox/pkg/digest"
	"github.com/flameox/flameox/pkg/evidence/schema"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/inquiry"
	"github.com/flameox/flameox/pkg/lock"
	"github.com/flameox/flameox/pkg/stats"
	"github.com/flameox/flameox/pkg/version"
)

// KindComparisonResult is the record fox-compare compare writes: a
// header and, under "result", the comparison (compare.Comparison's JSON).
const KindComparisonResult = "comparison_result"

// ComparisonRecipe and ComparisonRecipeVersion name a recorded
// comparison's analyses row.
const (
	ComparisonRecipe        = "compare_run_sets"
	ComparisonRecipeVersion = "1"
)

// Comparison is a comparison to record, as its JSON reads: the result of
// compare.Confirm, the `result` of a comparison_result record. pkg/compare
// reads through DuckDB, which fox-publish does not link (it builds without
// cgo), so the publisher decodes the JSON the comparison is written as,
// and keeps that JSON for the result digest: the comparison recorded in
// process and the one piped from fox-compare are the same bytes.
type Comparison struct {
	SchemaVersion   int                  `json:"schema_version"`
	CorpusCommitID  string               `json:"corpus_commit_id"`
	Metric          string               `json:"metric"`
	Subject         string               `json:"subject,omitempty"`
	Unit            string               `json:"unit,omitempty"`
	Estimand        string               `json:"estimand"`
	IndependentUnit string               `json:"independent_unit"`
	Polarity        string               `json:"polarity"`
	Threshold       float64              `json:"practical_threshold"`
	Confidence      float64              `json:"confidence_level"`
	Method          string               `json:"confidence_method"`
	Resamples       int                  `json:"resamples"`
	Seed            uint64               `json:"seed"`
	Pairs           int                  `json:"paired_count"`
	Ratio           *float64             `json:"ratio,omitempty"`
	RatioLow        *float64             `json:"ratio_low,omitempty"`
	RatioHigh       *float64             `json:"ratio_high,omitempty"`
	Decision        string               `json:"decision"`
	Validity        string               `json:"validity"`
	Mismatches      []ComparisonMismatch `json:"mismatches"`
	Baseline        ComparisonSide       `json:"baseline"`
	Candidate       ComparisonSide       `json:"candidate"`
	Limitations     []string             `json:"limitations"`

	raw []byte // the comparison's JSON, as decoded
}

// ComparisonSide counts one run set's members.
type ComparisonSide struct {
	RunSetID  string `json:"run_set_id"`
	Attempted int    `json:"attempted"`
	Eligible  int    `json:"eligible"`
	Failed    int    `json:"failed"`
	Excluded  int    `json:"excluded"`
	Paired    int    `json:"paired"`
}

// ComparisonMismatch is one reason a comparison is less than valid.
type ComparisonMismatch struct {
	What     string `json:"what"`
	Detail   string `json:"detail"`
	Critical bool   `json:"critical"`
}

// RecordedComparison says where a comparison was recorded: its id (from
// its content: see ComparisonID), the analyses row that holds its
// provenance, the experiment both run sets belong to, and the commit that
// holds it. AlreadyRecorded: the corpus held it before this call, and
// nothing was published.
type RecordedComparison struct {
	ComparisonID    string `json:"comparison_id"`
	AnalysisID      string `json:"analysis_id"`
	ExperimentID    string `json:"experiment_id,omitempty"`
	CorpusCommitID  string `json:"recorded_in_commit_id"`
	AlreadyRecorded bool   `json:"already_recorded"`
}

// ComparisonPublication is what PublishComparisons did: one receipt per
// comparison, in input order, and the publication (nil when every
// comparison was already recorded).
type ComparisonPublication struct {
	Recorded []RecordedComparison
	Result   *Result
}

// The vocabularies a recorded comparison must use (SPEC §6).
var (
	comparisonDecisions = []string{string(stats.MeaningfulImprovement), string(stats.MeaningfulRegression),
		string(stats.NoMeaningfulDifference), string(stats.Inconclusive), string(stats.DescriptiveOnly)}
	comparisonValidities = []string{"valid", "exploratory", "invalid"}
)

// DecodeComparison reads a comparison from its JSON (compare.Comparison's)
// and refuses, with INVALID_ARGUMENTS naming the field, one that is not a
// comparison a row can hold: no run sets or metric, the same run set on
// both sides, no commit, a decision or validity outside SPEC §6's
// vocabulary, a decision that claims a difference without a ratio, an
// interval that is not positive and ordered, negative counts. b is bounded
// by the record reader's line limit; nothing here allocates beyond it.
func DecodeComparison(b []byte) (*Comparison, error) {
	var c Comparison
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&c); err != nil {
		return nil, fault.Wrap(fault.InvalidArguments, err, "malformed comparison")
	}
	if dec.More() {
		return nil, fault.New(fault.InvalidArguments, "malformed comparison: data after the object")
	}
	bad := func(field, format string, args ...any) error {
		return fault.New(fault.InvalidArguments, "comparison: "+format, args...).With("field", field)
	}
	switch {
	case c.SchemaVersion != 1:
		return nil, bad("schema_version", "schema version %d is not 1", c.SchemaVersion)
	case c.Baseline.RunSetID == "" || c.Candidate.RunSetID == "":
		return nil, bad("baseline.run_set_id", "a comparison names a baseline and a candidate run set")
	case c.Baseline.RunSetID == c.Candidate.RunSetID:
		return nil, bad("candidate.run_set_id", "the baseline and the candidate are the same run set %s", c.Baseline.RunSetID)
	case strings.TrimSpace(c.Metric) == "":
		return nil, bad("metric", "a comparison names its metric")
	case !digest.Valid(c.CorpusCommitID):
		return nil, bad("corpus_commit_id", "commit %q is not a commit id", c.CorpusCommitID)
	case !slices.Contains(comparisonDecisions, c.Decision):
		return nil, bad("decision", "decision %q is not one of %s", c.Decision, strings.Join(comparisonDecisions, ", "))
	case !slices.Contains(comparisonValidities, c.Validity):
		return nil, bad("validity", "validity %q is not one of %s", c.Validity, strings.Join(comparisonValidities, ", "))
	case c.Estimand == "" || c.IndependentUnit == "" || c.Method == "" || c.Polarity == "":
		return nil, bad("estimand", "a comparison names its estimand, independent unit, method and polarity")
	case !(c.Confidence > 0 && c.Confidence < 1) || !(c.Threshold >= 0 && c.Threshold < 1):
		return nil, bad("confidence_level", "confidence must be in (0, 1) and the practical threshold in [0, 1)")
	case c.Pairs < 0 || c.Resamples < 0 || negative(c.Baseline) || negative(c.Candidate):
		return nil, bad("paired_count", "a count is negative")
	}
	if (c.Ratio == nil) != (c.RatioLow == nil) || (c.Ratio == nil) != (c.RatioHigh == nil) {
		return nil, bad("ratio", "a ratio comes with both bounds of its interval")
	}
	if c.Ratio != nil {
		for _, v := range []float64{*c.Ratio, *c.RatioLow, *c.RatioHigh} {
			if !(v > 0) || math.IsInf(v, 0) {
				return nil, bad("ratio", "a ratio and its bounds are positive and finite")
			}
		}
		if !(*c.RatioLow <= *c.Ratio && *c.Ratio <= *c.RatioHigh) {
			return nil, bad("ratio", "the interval [%g, %g] does not hold the ratio %g", *c.RatioLow, *c.RatioHigh, *c.Ratio)
		}
	} else if c.Decision != string(stats.Inconclusive) && c.Decision != string(stats.DescriptiveOnly) {
		return nil, bad("decision", "decision %s needs a ratio with its interval", c.Decision)
	}
	c.raw = slices.Clone(b)
	return &c, nil
}

func negative(s ComparisonSide) bool {
	return s.Attempted < 0 || s.Eligible < 0 || s.Failed < 0 || s.Excluded < 0 || s.Paired < 0
}

// ComparisonOf converts v (a *compare.Comparison) through its JSON, as
// fox-publish reads it from fox-compare.
func ComparisonOf(v any) (*Comparison, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fault.Wrap(fault.InvalidArguments, err, "encode the comparison")
	}
	return DecodeComparison(b)
}

// ID is the comparison's id: "cmp-" and the first 32 hex digits of the
// SHA-256 of its canonical JSON without corpus_commit_id. Run sets are
// frozen, so the same request over the same two sets that gives the same
// numbers is the same comparison whatever later commit it was read at:
// recording it again finds it recorded.
func (c *Comparison) ID() (string, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(c.raw, &m); err != nil {
		return "", fault.Wrap(fault.InvalidArguments, err, "malformed comparison")
	}
	delete(m, "corpus_commit_id")
	d, err := digest.Of(m)
	if err != nil {
		return "", err
	}
	return "cmp-" + strings.TrimPrefix(d, digest.Prefix)[:32], nil
}

// comparisonParameters is the request a comparison answers, with its
// defaults applied, under compare.ConfirmRequest's JSON names: the
// analyses row's parameters_json.
type comparisonParameters struct {
	Baseline   string  `json:"baseline_run_set"`
	Candidate  string  `json:"candidate_run_set"`
	Metric     string  `json:"metric"`
	Subject    string  `json:"subject,omitempty"`
	Polarity   string  `json:"polarity,omitempty"`
	Threshold  float64 `json:"practical_threshold,omitempty"`
	Confidence float64 `json:"confidence_level,omitempty"`
	Method     string  `json:"confidence_method,omitempty"`
	Seed       uint64  `json:"seed,omitempty"`
	Resamples  int     `json:"resamples,omitempty"`
}

// comparisonRow is one comparison ready to stage.
type comparisonRow struct {
	c            *Comparison
	id           string
	experimentID string
	analysis     AnalysisRow
}

// errRecordedMeanwhile: a comparison of the batch was recorded by another
// publisher between the first look and the write lock.
var errRecordedMeanwhile = errors.New("comparison recorded meanwhile")

// PublishComparisons records comparisons, each as one comparisons row
// (relative_change and its interval from the ratio; counts per side;
// mismatches as "what: detail"), one analyses row (recipe
// compare_run_sets: the request as canonical parameters, the comparison's
// commit, the members of both run sets as input runs, the digest of the
// comparison's canonical JSON) and their evidence_refs (comparison -> both
// run sets, context; comparison -> analysis, supports; analysis -> commit
// and runs, input), all in one generation. started is when the
// comparison began (zero: now).
//
// The commit a comparison read must exist and hold both run sets; the
// experiment id is filled when both sets belong to one experiment. A
// comparison whose id the corpus already holds is not published again:
// its receipt says already_recorded and names the HEAD that holds it, and
// when every comparison is, nothing is published. An invalid comparison
// is recorded like any other: its validity and mismatches are the
// evidence that it proves nothing.
func (p *Publisher) PublishComparisons(ctx context.Context, cs []*Comparison, started time.Time) (*ComparisonPublication, error) {
	if len(cs) == 0 {
		return nil, fault.New(fault.InvalidArguments, "nothing to publish")
	}
	now := p.now().UTC()
	if started.IsZero() {
		started = now
	}
	var rows []*comparisonRow
	byID := map[string]*comparisonRow{}
	order := make([]*comparisonRow, len(cs))
	for i, c := range cs {
		r, err := p.comparisonRow(ctx, c, started.UTC(), now)
		if err != nil {
			return nil, err
		}
		if prev := byID[r.id]; prev != nil {
			order[i] = prev // the same comparison twice in one batch
			continue
		}
		byID[r.id] = r
		rows = append(rows, r)
		order[i] = r
	}
	for attempt := 0; ; attempt++ {
		head, err := corpus.Head(p.WS.Root)
		if err != nil {
			return nil, err
		}
		known, err := p.recordedComparisons(ctx, head)
		if err != nil {
			return nil, err
		}
		var fresh []*comparisonRow
		for _, r := range rows {
			if _, ok := known[r.id]; !ok {
				fresh = append(fresh, r)
			}
		}
		out := &ComparisonPublication{}
		if len(fresh) > 0 {
			res, err := p.stageComparisons(ctx, fresh)
			if errors.Is(err, errRecordedMeanwhile) {
				if attempt == 0 {
					continue // look again: it is recorded now
				}
				return nil, fault.New(fault.RevisionConflict, "a comparison was recorded by another publisher at the same time").
					Fix("Record it again: a comparison already recorded is reported, not published twice.")
			}
			if err != nil {
				return nil, err
			}
			out.Result = res
		}
		for _, r := range order {
			rec := RecordedComparison{ComparisonID: r.id, AnalysisID: r.analysis.AnalysisID, ExperimentID: r.experimentID}
			if a, ok := known[r.id]; ok {
				rec.AnalysisID, rec.CorpusCommitID, rec.AlreadyRecorded = a, head.CommitID, true
			} else {
				rec.CorpusCommitID = out.Result.CommitID
			}
			out.Recorded = append(out.Recorded, rec)
		}
		return out, nil
	}
}

// comparisonRow checks c against the commit it read and builds its rows.
func (p *Publisher) comparisonRow(ctx context.Context, c *Comparison, started, now time.Time) (*comparisonRow, error) {
	if c == nil || c.raw == nil {
		return nil, fault.New(fault.InvalidArguments, "a comparison to record is decoded first (DecodeComparison)")
	}
	id, err := c.ID()
	if err != nil {
		return nil, err
	}
	commit, err := corpus.Read(p.WS.Root, c.CorpusCommitID)
	if err != nil {
		return nil, fault.Wrap(fault.InvalidArguments, err, "comparison %s names commit %s, which this workspace does not have", id, c.CorpusCommitID).
			With("field", "corpus_commit_id")
	}
	sets, err := p.comparedSets(ctx, commit, c)
	if err != nil {
		return nil, err
	}
	params := comparisonParameters{Baseline: c.Baseline.RunSetID, Candidate: c.Candidate.RunSetID, Metric: c.Metric, Subject: c.Subject,
		Polarity: c.Polarity, Threshold: c.Threshold, Confidence: c.Confidence, Method: c.Method, Seed: c.Seed, Resamples: c.Resamples}
	pj, err := digest.Canonical(params)
	if err != nil {
		return nil, err
	}
	result, err := digest.Canonical(json.RawMessage(c.raw))
	if err != nil {
		return nil, err
	}
	cov, err := digest.Canonical(map[string]any{"baseline": c.Baseline, "candidate": c.Candidate, "paired_count": c.Pairs})
	if err != nil {
		return nil, err
	}
	return &comparisonRow{c: c, id: id, experimentID: sets.experimentID, analysis: AnalysisRow{
		AnalysisID: uuid.NewString(), Operation: ComparisonRecipe, OperationVersion: ComparisonRecipeVersion,
		CorpusCommitID: c.CorpusCommitID, ParametersJSON: string(pj), ParametersDigest: digest.Bytes(pj),
		ResultDigest: digest.Bytes(result), CoverageJSON: string(cov), InputRunIDs: sets.runIDs,
		InputArtifactIDs: []string{}, InputGenerationIDs: []string{}, Limitations: c.Limitations,
		StartedAt: started, CompletedAt: now}}, nil
}

// comparedSets is what the two run sets of a comparison hold at its commit.
type comparedSetsInfo struct {
	runIDs       []string
	experimentID string
}

// comparedSets reads both run sets of c at commit: their members (the
// analysis's input runs) and the one experiment they belong to, from
// their selections or else from their members' trials. A run set the
// commit does not hold is NOT_FOUND.
func (p *Publisher) comparedSets(ctx context.Context, commit corpus.Commit, c *Comparison) (*comparedSetsInfo, error) {
	release, err := p.WS.Locks().Lock(ctx, lock.Retention, true)
	if err != nil {
		return nil, err
	}
	defer release()
	snap, err := corpus.Open(p.WS.Root, commit)
	if err != nil {
		return nil, err
	}
	type set struct{ selection, members string }
	found := map[string]*set{c.Baseline.RunSetID: nil, c.Candidate.RunSetID: nil}
	err = scanLive(ctx, snap, schema.RunSets, []string{"run_set_id", "selection_json", "members_json"}, func(row []any) error {
		id, _ := row[0].(string)
		if _, ok := found[id]; ok {
			sel, _ := row[1].(string)
			mem, _ := row[2].(string)
			found[id] = &set{sel, mem}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	info := &comparedSetsInfo{runIDs: []string{}}
	runs := map[string]bool{}
	trials := map[string]bool{}
	experiments := map[string]bool{}
	for _, id := range []string{c.Baseline.RunSetID, c.Candidate.RunSetID} {
		s := found[id]
		if s == nil {
			return nil, fault.New(fault.NotFound, "run set %s is not in commit %s, which the comparison read", id, corpus.Short(c.CorpusCommitID)).
				With("run_set_id", id).Fix("Compare run sets this workspace has frozen (flameox query \"SELECT run_set_id FROM run_sets\").")
		}
		var members []inquiry.Member
		if err := json.Unmarshal([]byte(s.members), &members); err != nil {
			return nil, fault.Wrap(fault.ArtifactIntegrityFailed, err, "run set %s: members_json", id)
		}
		for _, m := range members {
			if !runs[m.RunID] {
				runs[m.RunID] = true
				info.runIDs = append(info.runIDs, m.RunID)
			}
			if m.TrialID != "" {
				trials[m.TrialID] = true
			}
		}
		var sel struct {
			ExperimentID string `json:"experiment_id"`
		}
		_ = json.Unmarshal([]byte(s.selection), &sel) // a selection without one names none
		experiments[sel.ExperimentID] = true
	}
	sort.Strings(info.runIDs)
	if len(experiments) == 1 && !experiments[""] {
		for e := range experiments {
			info.experimentID = e
		}
		return info, nil
	}
	// Sets frozen by hand: their members' trials say which experiment.
	experiments = map[string]bool{}
	err = scanLive(ctx, snap, schema.Trials, []string{"trial_id", "run_id", "experiment_id"}, func(row []any) error {
		tid, _ := row[0].(string)
		rid, _ := row[1].(string)
		if trials[tid] || runs[rid] {
			e, _ := row[2].(string)
			experiments[e] = true
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(experiments) == 1 && !experiments[""] {
		for e := range experiments {
			info.experimentID = e
		}
	}
	return info, nil
}

// recordedComparisons maps the id of every comparison recorded at head to
// the analysis that holds its provenance ("" if none is referenced).
func (p *Publisher) recordedComparisons(ctx context.Context, head corpus.Commit) (map[string]string, error) {
	release, err := p.WS.Locks().Lock(ctx, lock.Retention, true)
	if err != nil {
		return nil, err
	}
	defer release()
	return recordedAt(ctx, p.WS.Root, head)
}

func recordedAt(ctx context.Context, root string, head corpus.Commit) (map[string]string, error) {
	snap, err := corpus.Open(root, head)
	if err != nil {
		return nil, err
	}
	known := map[string]string{}
	if len(snap.Files[schema.Comparisons.Name]) == 0 {
		return known, nil
	}
	ids, err := scanIDs(ctx, snap, schema.Comparisons, "comparison_id")
	if err != nil {
		return nil, err
	}
	for id := range ids {
		known[id] = "" // recorded; its analysis is named below
	}
	err = scanLive(ctx, snap, schema.EvidenceRefs, []string{"owner_type", "owner_id", "ref_type", "ref_id"}, func(row []any) error {
		if ot, _ := row[0].(string); ot != "comparison" {
			return nil
		}
		if rt, _ := row[2].(string); rt != "analysis" {
			return nil
		}
		id, _ := row[1].(string)
		if _, ok := known[id]; ok {
			known[id], _ = row[3].(string)
		}
		return nil
	})
	return known, err
}

// stageComparisons writes rows as one generation and commits it, unless
// another publisher recorded one of them first (errRecordedMeanwhile).
func (p *Publisher) stageComparisons(ctx context.Context, rows []*comparisonRow) (*Result, error) {
	st, err := NewStage(p.WS.Root, Name, version.Version(), p.now())
	if err != nil {
		return nil, err
	}
	defer st.Discard()
	cw, err := st.Table(schema.Comparisons)
	if err != nil {
		return nil, err
	}
	aw, err := st.Table(schema.Analyses)
	if err != nil {
		return nil, err
	}
	rw, err := st.Table(schema.EvidenceRefs)
	if err != nil {
		return nil, err
	}
	meta := Meta{Publisher: Name, PublisherVersion: version.Version()}
	for _, r := range rows {
		if err := appendComparison(cw, rw, r); err != nil {
			return nil, err
		}
		if err := appendAnalysis(aw, rw, r.analysis); err != nil {
			return nil, err
		}
		meta.InputRunIDs = append(meta.InputRunIDs, r.analysis.InputRunIDs...)
	}
	meta.Check = func(head corpus.Commit) error {
		release, err := p.WS.Locks().Lock(ctx, lock.Retention, true)
		if err != nil {
			return err
		}
		defer release()
		known, err := recordedAt(ctx, p.WS.Root, head)
		if err != nil {
			return err
		}
		for _, r := range rows {
			if _, ok := known[r.id]; ok {
				return errRecordedMeanwhile
			}
		}
		return nil
	}
	return p.commit(ctx, st, meta, 0)
}

// appendComparison appends r's comparisons row and its references.
func appendComparison(cw, rw *schema.Writer, r *comparisonRow) error {
	c := r.c
	cw.StringCol("comparison_id").Append(r.id)
	cw.StringCol("experiment_id").AppendOrNull(r.experimentID)
	cw.StringCol("baseline_run_set_id").Append(c.Baseline.RunSetID)
	cw.StringCol("candidate_run_set_id").Append(c.Candidate.RunSetID)
	cw.StringCol("metric").Append(c.Metric)
	cw.StringCol("unit").Append(c.Unit)
	cw.StringCol("polarity").Append(c.Polarity)
	cw.StringCol("estimand").Append(c.Estimand)
	cw.Float64Col("practical_threshold").Append(c.Threshold)
	// The estimand is a paired ratio: there is no per-side estimate.
	for _, col := range []string{"baseline_value_float", "candidate_value_float", "absolute_change_float", "effect_size"} {
		cw.Float64Col(col).AppendNull()
	}
	for _, col := range []string{"baseline_value_int", "candidate_value_int", "absolute_change_int"} {
		cw.Int64Col(col).AppendNull()
	}
	if c.Ratio != nil {
		cw.Float64Col("relative_change").Append(*c.Ratio - 1)
		cw.Float64Col("confidence_low").Append(*c.RatioLow - 1)
		cw.Float64Col("confidence_high").Append(*c.RatioHigh - 1)
	} else {
		cw.Float64Col("relative_change").AppendNull()
		cw.Float64Col("confidence_low").AppendNull()
		cw.Float64Col("confidence_high").AppendNull()
	}
	cw.Float64Col("confidence_level").Append(c.Confidence)
	cw.StringCol("method").Append(c.Method)
	if c.Seed != 0 {
		cw.Uint64Col("random_seed").Append(c.Seed)
	} else {
		cw.Uint64Col("random_seed").AppendNull() // nothing was resampled
	}
	cw.StringCol("independent_unit").Append(c.IndependentUnit)
	cw.BoolCol("paired").Append(true)
	for _, s := range []struct {
		prefix string
		side   ComparisonSide
	}{{"baseline", c.Baseline}, {"candidate", c.Candidate}} {
		cw.Uint64Col(s.prefix + "_attempted_n").Append(uint64(s.side.Attempted))
		cw.Uint64Col(s.prefix + "_eligible_n").Append(uint64(s.side.Eligible))
		cw.Uint64Col(s.prefix + "_failed_n").Append(uint64(s.side.Failed))
		cw.Uint64Col(s.prefix + "_excluded_n").Append(uint64(s.side.Excluded))
	}
	cw.Uint64Col("complete_pair_n").Append(uint64(c.Pairs))
	cw.StringCol("multiplicity_json").AppendNull()
	cw.StringCol("decision").Append(c.Decision)
	cw.StringCol("validity").Append(c.Validity)
	mm := make([]string, len(c.Mismatches))
	for i, m := range c.Mismatches {
		what := m.What
		if m.Critical {
			what += " (critical)"
		}
		mm[i] = what + ": " + m.Detail
	}
	cw.StringListCol("mismatches").Append(mm)
	if err := cw.EndRow(); err != nil {
		return err
	}
	for _, ref := range [][3]string{
		{"run_set", c.Baseline.RunSetID, "context"},
		{"run_set", c.Candidate.RunSetID, "context"},
		{"analysis", r.analysis.AnalysisID, "supports"},
	} {
		rw.StringCol("owner_type").Append("comparison")
		rw.StringCol("owner_id").Append(r.id)
		rw.StringCol("ref_type").Append(ref[0])
		rw.StringCol("ref_id").Append(ref[1])
		rw.StringCol("relation").Append(ref[2])
		if err := rw.EndRow(); err != nil {
			return err
		}
	}
	return nil
}
