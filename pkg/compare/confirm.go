package compare

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/inquiry"
	"github.com/flameox/flameox/pkg/query"
	"github.com/flameox/flameox/pkg/stats"
	"github.com/flameox/flameox/pkg/workspace"
	"github.com/spf13/pflag"
)

// Validities of a comparison.
const (
	Valid       = "valid"
	Exploratory = "exploratory"
	Invalid     = "invalid"
)

// ConfirmRequest names two frozen run sets of one experiment (the
// baseline variant's and the candidate's) and the decision rule.
type ConfirmRequest struct {
	Baseline  string `json:"baseline_run_set" jsonschema:"run set of the baseline variant (rs-…)"`
	Candidate string `json:"candidate_run_set" jsonschema:"run set of the candidate variant (rs-…)"`
	Metric    string `json:"metric" jsonschema:"metric, e.g. process.wall_time or gobench.sec/op"`
	Subject   string `json:"subject,omitempty" jsonschema:"only this subject (a benchmark)"`
	// Polarity is lower_is_better (default), higher_is_better or neutral.
	Polarity   string  `json:"polarity,omitempty" jsonschema:"lower_is_better (default), higher_is_better or neutral"`
	Threshold  float64 `json:"practical_threshold,omitempty" jsonschema:"smallest relative change that matters, e.g. 0.05"`
	Confidence float64 `json:"confidence_level,omitempty" jsonschema:"interval confidence, default 0.95"`
	// Method is the interval: order_statistic (default), interpolated,
	// bca or percentile (docs/statistics.md compares them).
	Method    string `json:"confidence_method,omitempty" jsonschema:"order_statistic (default), interpolated, bca or percentile"`
	Seed      uint64 `json:"seed,omitempty" jsonschema:"bootstrap seed (recorded; bca and percentile only), default 1"`
	Resamples int    `json:"resamples,omitempty" jsonschema:"bootstrap resamples (bca and percentile only), default 9999"`
}

// DefaultMethod is the comparison's interval: the exact order-statistic
// interval of the median, the only method whose A/A false-verdict rate
// stays at or under 1 - confidence in the calibration simulation
// (docs/statistics.md).
const DefaultMethod = stats.OrderStatistic

// Side counts one run set's members.
type Side struct {
	RunSetID  string `json:"run_set_id"`
	Attempted int    `json:"attempted"`
	Eligible  int    `json:"eligible"`
	Failed    int    `json:"failed"`
	Excluded  int    `json:"excluded"`
	Paired    int    `json:"paired"`
}

// Mismatch is one reason a comparison is less than valid.
type Mismatch struct {
	What     string `json:"what"`
	Detail   string `json:"detail"`
	Critical bool   `json:"critical"`
}

// Comparison is the result of `fox-compare compare`, `flameox experiment
// compare` and MCP compare_run_sets: the median paired log ratio over
// complete blocks with its confidence interval, the decision the
// practical threshold gives, and the validity that qualifies it, every
// mismatch named.
type Comparison struct {
	SchemaVersion   int        `json:"schema_version"`
	CorpusCommitID  string     `json:"corpus_commit_id"`
	Metric          string     `json:"metric"`
	Subject         string     `json:"subject,omitempty"`
	Unit            string     `json:"unit,omitempty"`
	Estimand        string     `json:"estimand"`
	IndependentUnit string     `json:"independent_unit"`
	Polarity        string     `json:"polarity"`
	Threshold       float64    `json:"practical_threshold"`
	Confidence      float64    `json:"confidence_level"`
	Method          string     `json:"confidence_method"`
	Resamples       int        `json:"resamples"`
	Seed            uint64     `json:"seed"`
	Pairs           int        `json:"paired_count"`
	Ratio           *float64   `json:"ratio,omitempty"`
	RatioLow        *float64   `json:"ratio_low,omitempty"`
	RatioHigh       *float64   `json:"ratio_high,omitempty"`
	Degenerate      bool       `json:"degenerate_interval"`
	Decision        string     `json:"decision"`
	Validity        string     `json:"validity"`
	Mismatches      []Mismatch `json:"mismatches"`
	Baseline        Side       `json:"baseline"`
	Candidate       Side       `json:"candidate"`
	// ProfileChanges are the top frame changes between the two sides'
	// profiles, when both carry profiles.
	ProfileChanges *ProfileChanges `json:"profile_changes,omitempty"`
	Limitations    []string        `json:"limitations"`
}

// Confirm compares two frozen run sets block by block.
func Confirm(ctx context.Context, ws *workspace.Workspace, req ConfirmRequest) (*Comparison, error) {
	req, err := req.normalize()
	if err != nil {
		return nil, err
	}
	sets, err := query.RunSetsEvidence(ctx, ws, req.Metric, req.Subject, req.Baseline, req.Candidate)
	if err != nil {
		return nil, err
	}
	base, cand := sets[0], sets[1]
	c, err := confirmEvidence(req, base, cand)
	if err != nil {
		return nil, err
	}
	if c.Pairs >= 2 {
		if err := c.profileChanges(ctx, ws, base, cand); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// normalize checks a request and fills its defaults.
func (req ConfirmRequest) normalize() (ConfirmRequest, error) {
	if req.Baseline == "" || req.Candidate == "" || req.Metric == "" {
		return req, fault.New(fault.InvalidArguments, "a comparison needs a baseline run set, a candidate run set and a metric")
	}
	if req.Baseline == req.Candidate {
		return req, fault.New(fault.ComparisonInvalid, "the baseline and the candidate are the same run set %s", req.Baseline)
	}
	if req.Polarity == "" {
		req.Polarity = inquiry.LowerIsBetter
	}
	if !slices.Contains([]string{inquiry.LowerIsBetter, inquiry.HigherIsBetter, inquiry.Neutral}, req.Polarity) {
		return req, fault.New(fault.InvalidArguments, "polarity %q is not lower_is_better, higher_is_better or neutral", req.Polarity).With("field", "polarity")
	}
	if req.Confidence == 0 {
		req.Confidence = 0.95
	}
	if !(req.Confidence > 0 && req.Confidence < 1) || !(req.Threshold >= 0 && req.Threshold < 1) {
		return req, fault.New(fault.InvalidArguments, "confidence must be in (0, 1) and the practical threshold in [0, 1)")
	}
	if req.Method == "" {
		req.Method = DefaultMethod
	}
	switch req.Method {
	case stats.OrderStatistic, stats.Interpolated:
		// Nothing is resampled: no seed or resample count is recorded.
		req.Resamples, req.Seed = 0, 0
	case stats.BCa, stats.Percentile:
		if req.Resamples == 0 {
			req.Resamples = 9999
		}
		if req.Resamples < 100 || req.Resamples > 1_000_000 {
			return req, fault.New(fault.InvalidArguments, "resamples must be in 100..1000000").With("field", "resamples")
		}
		if req.Seed == 0 {
			req.Seed = 1
		}
	default:
		return req, fault.New(fault.InvalidArguments, "interval method %q is not order_statistic, interpolated, bca or percentile", req.Method).
			With("field", "confidence_method")
	}
	return req, nil
}

// confirmEvidence is the comparison of two sets' evidence under a
// normalized request: counts, mismatches and validity, the complete
// blocks' pairs, the interval and the decision. It reads nothing, so
// FuzzConfirmEvidence drives it with arbitrary members.
func confirmEvidence(req ConfirmRequest, base, cand *query.SetEvidence) (*Comparison, error) {
	c := &Comparison{SchemaVersion: 1, CorpusCommitID: base.CorpusCommitID, Metric: req.Metric, Subject: req.Subject,
		Estimand: "median_paired_log_ratio", IndependentUnit: "block", Polarity: req.Polarity, Threshold: req.Threshold,
		Confidence: req.Confidence, Method: req.Method, Resamples: req.Resamples, Seed: req.Seed, Mismatches: []Mismatch{},
		Limitations: []string{"the ratio is candidate / baseline of each block's run medians; blocks are the independent unit"}}
	c.Baseline, c.Candidate = count(base), count(cand)
	for _, side := range []struct {
		name string
		e    *query.SetEvidence
	}{{"baseline", base}, {"candidate", cand}} {
		n := 0
		for _, m := range side.e.Members {
			if succeeded(m) && !eligible(m) {
				n++
			}
		}
		if n > 0 {
			c.Limitations = append(c.Limitations, fmt.Sprintf("%d of the %s's successful runs have no positive value of %s and are excluded", n, side.name, req.Metric))
		}
	}
	c.judge(base, cand)
	ratios, err := c.pairs(base, cand)
	if err != nil {
		return nil, err
	}
	c.Pairs = len(ratios)
	if c.Pairs < 2 {
		c.Decision = string(stats.Inconclusive)
		c.Limitations = append(c.Limitations, fmt.Sprintf("%d complete block(s): too few to estimate an interval", c.Pairs))
		if c.Validity != Invalid {
			c.Validity = Exploratory
		}
	} else {
		if err := c.estimate(ratios); err != nil {
			return nil, err
		}
	}
	if c.Validity == Invalid {
		c.Limitations = append(c.Limitations, "the comparison is invalid: its decision is not evidence (the mismatches say why)")
	}
	return c, nil
}

// succeeded: the trial succeeded (or the run, outside an experiment).
func succeeded(m query.SetMember) bool {
	return m.TrialOutcome == inquiry.TrialSucceeded || (m.TrialOutcome == "" && m.ExecutionStatus == "succeeded")
}

// eligible: it succeeded and has a positive, finite median of the metric
// (a ratio needs one).
func eligible(m query.SetMember) bool {
	return succeeded(m) && m.Median != nil && *m.Median > 0 && !math.IsInf(*m.Median, 0)
}

// count sorts a side's members: eligible; excluded (never attempted, or
// succeeded without a positive value of the metric); failed.
func count(e *query.SetEvidence) Side {
	s := Side{RunSetID: e.RunSetID, Attempted: len(e.Members)}
	for _, m := range e.Members {
		switch {
		case eligible(m):
			s.Eligible++
		case m.TrialOutcome == inquiry.TrialUnattempted || succeeded(m):
			s.Excluded++
		default:
			s.Failed++
		}
	}
	return s
}

// judge names every mismatch and sets the validity: critical ones make the
// comparison invalid, the others exploratory.
func (c *Comparison) judge(base, cand *query.SetEvidence) {
	add := func(critical bool, what, format string, args ...any) {
		c.Mismatches = append(c.Mismatches, Mismatch{What: what, Detail: fmt.Sprintf(format, args...), Critical: critical})
	}
	distinct := func(e *query.SetEvidence, f func(query.SetMember) string) []string {
		var out []string
		for _, m := range e.Members {
			if v := f(m); !slices.Contains(out, v) {
				out = append(out, v)
			}
		}
		sort.Strings(out)
		return out
	}
	across := func(what string, f func(query.SetMember) string) {
		b, k := distinct(base, f), distinct(cand, f)
		if len(b) > 1 || len(k) > 1 || !slices.Equal(b, k) {
			add(true, what, "baseline %v, candidate %v", b, k)
		}
	}
	across("environment", func(m query.SetMember) string { return m.EnvironmentID })
	across("workload_definition", func(m query.SetMember) string { return m.DefinitionID })
	across("collector", func(m query.SetMember) string { return m.Adapter + " " + m.CollectorVersion })
	across("measurement_protocol", func(m query.SetMember) string { return m.ProtocolID })
	for _, side := range []struct {
		name string
		e    *query.SetEvidence
	}{{"baseline", base}, {"candidate", cand}} {
		if src := distinct(side.e, func(m query.SetMember) string { return m.SourceStateID }); len(src) > 1 {
			add(true, "source_within_treatment", "the %s's runs ran %d source states", side.name, len(src))
		}
		for _, q := range distinct(side.e, func(m query.SetMember) string { return m.IdentityQuality }) {
			if q != "exact" && q != "clean" {
				add(false, "identity_quality", "the %s's source identity is %q", side.name, q)
			}
		}
		var oracle, validation int
		for _, m := range side.e.Members {
			if m.TrialOutcome == inquiry.TrialOracleFailed {
				oracle++
			}
			if m.ValidationStatus == "failed" || m.ValidationStatus == "error" {
				validation++
			}
		}
		if oracle > 0 {
			add(true, "oracle", "%d of the %s's trials failed their oracle", oracle, side.name)
		}
		if validation > 0 {
			add(true, "validation", "%d of the %s's runs failed validation", validation, side.name)
		}
		if blocks := distinct(side.e, func(m query.SetMember) string { return m.BlockID }); slices.Contains(blocks, "") {
			add(false, "blocks", "the %s holds runs outside any experiment block: they are not paired", side.name)
		}
	}
	c.Validity = Valid
	for _, m := range c.Mismatches {
		if m.Critical {
			c.Validity = Invalid
			return
		}
		c.Validity = Exploratory
	}
}

// pairs returns one log ratio (candidate over baseline) per block both
// sides completed, in block order; the blocks one side lacks are named as
// a mismatch. A block holds one trial of each combination of the
// experiment's other factors (the sizes of a scaling experiment, say):
// trials are paired within a block on those factors, never across them,
// and a block of several cells counts once, with the median of its cells'
// log ratios, so that blocks stay the independent unit.
func (c *Comparison) pairs(base, cand *query.SetEvidence) ([]float64, error) {
	varying := varyingFactors(base, cand)
	type cell struct{ block, key string }
	at := func(e *query.SetEvidence) map[cell]query.SetMember {
		out := map[cell]query.SetMember{}
		for _, m := range e.Members {
			if m.BlockID != "" && eligible(m) {
				out[cell{m.BlockID, factorCell(m.Factors, varying)}] = m
				c.Unit = m.Unit
			}
		}
		return out
	}
	b, k := at(base), at(cand)
	cells := map[string][]cell{}
	var incomplete []string
	for id := range b {
		if _, ok := k[id]; ok {
			cells[id.block] = append(cells[id.block], id)
		} else {
			incomplete = append(incomplete, id.block+cellLabel(id.key))
		}
	}
	for id := range k {
		if _, ok := b[id]; !ok {
			incomplete = append(incomplete, id.block+cellLabel(id.key))
		}
	}
	sort.Strings(incomplete)
	if len(incomplete) > 0 {
		c.Mismatches = append(c.Mismatches, Mismatch{What: "blocks", Critical: false,
			Detail: fmt.Sprintf("%d trial(s) lack an eligible counterpart in their block on the other side and are not paired: %v", len(incomplete), incomplete)})
		if c.Validity == Valid {
			c.Validity = Exploratory
		}
	}
	blocks := make([]string, 0, len(cells))
	for id := range cells {
		blocks = append(blocks, id)
	}
	sort.Strings(blocks)
	out := make([]float64, 0, len(blocks))
	most := 0
	for _, id := range blocks {
		cs := cells[id]
		sort.Slice(cs, func(i, j int) bool { return cs[i].key < cs[j].key })
		xs, ys := make([]float64, len(cs)), make([]float64, len(cs))
		for i, x := range cs {
			xs[i], ys[i] = *b[x].Median, *k[x].Median
		}
		lr, err := stats.PairedLogRatios(xs, ys)
		if err != nil {
			return nil, err
		}
		out = append(out, stats.Median(lr))
		most = max(most, len(cs))
		c.Baseline.Paired += len(cs)
		c.Candidate.Paired += len(cs)
	}
	if most > 1 {
		c.Limitations = append(c.Limitations, fmt.Sprintf("blocks hold up to %d cells (factors %v): trials are paired within a block on them, and a block's log ratio is the median of its cells'",
			most, varying))
	}
	return out, nil
}

// varyingFactors names the factors whose value varies among either set's
// members: the cells of a block. A factor constant in each set is the
// treatment (it differs between the sets) or a constant, and pairs ignore
// it.
func varyingFactors(sets ...*query.SetEvidence) []string {
	var out []string
	for _, e := range sets {
		seen := map[string]string{}
		for _, m := range e.Members {
			for name, v := range factorsOf(m.Factors) {
				if prev, ok := seen[name]; !ok {
					seen[name] = v
				} else if prev != v && !slices.Contains(out, name) {
					out = append(out, name)
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

// factorsOf reads a trial's factors as canonical text per name; anything
// unreadable reads as none.
func factorsOf(js string) map[string]string {
	var raw map[string]json.RawMessage
	if js == "" || json.Unmarshal([]byte(js), &raw) != nil {
		return nil
	}
	out := make(map[string]string, len(raw))
	for k, v := range raw {
		out[k] = string(v)
	}
	return out
}

// factorCell is the values of the varying factors, in name order.
func factorCell(js string, varying []string) string {
	if len(varying) == 0 {
		return ""
	}
	f := factorsOf(js)
	parts := make([]string, len(varying))
	for i, name := range varying {
		parts[i] = name + "=" + f[name]
	}
	return strings.Join(parts, ",")
}

func cellLabel(key string) string {
	if key == "" {
		return ""
	}
	return " (" + key + ")"
}

// Flags binds the decision rule's flags, shared by fox-compare compare and
// flameox experiment compare.
func (r *ConfirmRequest) Flags(fs *pflag.FlagSet) {
	fs.StringVar(&r.Metric, "metric", "", "measurement name the decision is made on, e.g. process.wall_time (required)")
	fs.StringVar(&r.Subject, "subject", "", "only this subject (a benchmark name) of the metric")
	fs.StringVar(&r.Polarity, "polarity", inquiry.LowerIsBetter, "lower_is_better, higher_is_better or neutral")
	fs.Float64Var(&r.Threshold, "threshold", 0, "practical threshold: the smallest relative change that matters, e.g. 0.05")
	fs.Float64Var(&r.Confidence, "confidence", 0.95, "confidence level of the interval")
	fs.StringVar(&r.Method, "method", DefaultMethod, "interval: order_statistic, interpolated, bca or percentile (docs/statistics.md)")
	fs.Uint64Var(&r.Seed, "seed", 0, "bootstrap seed, recorded (bca and percentile; default 1)")
	fs.IntVar(&r.Resamples, "resamples", 0, "bootstrap resamples (bca and percentile; default 9999)")
}

// Exit is the exit status of a finished comparison: COMPARISON_INVALID
// (exit 6) when it is invalid, naming the critical mismatches; nil
// otherwise (a regression is a result; a gate asks for it separately).
func Exit(c *Comparison) error {
	if c.Validity != Invalid {
		return nil
	}
	var what []string
	for _, m := range c.Mismatches {
		if m.Critical {
			what = append(what, m.What+": "+m.Detail)
		}
	}
	return fault.New(fault.ComparisonInvalid, "the comparison is invalid: %s", strings.Join(what, "; "))
}

// estimate sets the ratio, its interval and the decision from the paired
// log ratios: the median with an interval by the request's method
// (pkg/stats, whose calibration docs/statistics.md reports), mapped to
// ratios.
func (c *Comparison) estimate(logRatios []float64) error {
	iv, err := stats.MedianInterval(logRatios, stats.Options{Resamples: c.Resamples, Confidence: c.Confidence, Seed: c.Seed, Method: c.Method})
	if err != nil {
		return err
	}
	r := stats.Ratio(iv)
	c.Method, c.Degenerate = iv.Method, iv.Degenerate
	c.Ratio, c.RatioLow, c.RatioHigh = &r.Estimate, &r.Lo, &r.Hi
	if iv.Degenerate {
		c.Limitations = append(c.Limitations, "the interval is degenerate: "+iv.Reason)
	} else if iv.Lo == iv.Hi {
		c.Limitations = append(c.Limitations, fmt.Sprintf("the interval has no width: the middle blocks' ratios tie (%d blocks; a deterministic metric such as retained bytes gives one ratio in every block); the order-statistic interval keeps its confidence with ties, so the decision stands", iv.N))
	}
	d, err := stats.Decide(r, c.Threshold, c.Polarity)
	if err != nil {
		return err
	}
	c.Decision = string(d)
	if c.Threshold == 0 && d == stats.Inconclusive {
		c.Limitations = append(c.Limitations, "with a practical threshold of 0 no difference can be shown absent: give --threshold to test for it")
	}
	return nil
}
