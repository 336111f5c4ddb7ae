package analysis

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/flameox/flameox/pkg/catalog"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/query"
	"github.com/flameox/flameox/pkg/stats"
	"github.com/flameox/flameox/pkg/workspace"
	"github.com/spf13/pflag"
)

// OpScaling is the scaling analysis's operation name.
const (
	OpScaling      = "scaling"
	ScalingVersion = "1"
)

// ScalingMethod says how a scaling analysis computes, in the result.
const ScalingMethod = "per trial: median of the run's non-warm-up values of the metric; per input: median and MAD of the succeeded trials' medians; " +
	"fits: y = a + b·g(n) for each declared model by least squares weighted 1/m² (m the input's median), standard errors σ̂²(XᵀWX)⁻¹, AICc; " +
	"choice: lowest AICc by at least the margin, not rejected by the lack-of-fit F test of the replicates, every other model rejected by it (docs/scaling.md); " +
	"frames: Spearman ρ of each function's share of the profile vs the input across runs, Benjamini–Hochberg q-values"

// maxScalingTrials bounds the trials one analysis reads; maxListedTrials
// the trials its result lists.
const (
	maxScalingTrials = 100_000
	maxListedTrials  = 1000
)

// minFrameShare is the largest share a function must reach in some run to
// be tested for correlation with the input.
const minFrameShare = 0.01

// ScalingRequest asks how an experiment's cost grows with its input size.
type ScalingRequest struct {
	ExperimentID string `json:"experiment_id" jsonschema:"the experiment id"`
	Metric       string `json:"metric,omitempty" jsonschema:"metric to fit (default: the experiment's primary metric)"`
	Variant      string `json:"variant,omitempty" jsonschema:"only this variant (treatment value)"`
	Parameter    string `json:"parameter,omitempty" jsonschema:"the numeric input-size factor (default: the experiment's scaling parameter)"`
	Limit        int    `json:"limit,omitempty" jsonschema:"correlated frames to return (default 20, max 1000)"`
}

// Flags registers the flags of a scaling request (`flameox analyze
// scaling`): --metric, --variant, --parameter and --limit.
func (r *ScalingRequest) Flags(fs *pflag.FlagSet) {
	fs.StringVar(&r.Metric, "metric", "", "metric to fit (default: the experiment's primary metric)")
	fs.StringVar(&r.Variant, "variant", "", "only this variant (treatment value)")
	fs.StringVar(&r.Parameter, "parameter", "", "the numeric input-size factor (default: the experiment's scaling parameter)")
	limitFlag(fs, &r.Limit, 20, "correlated frames")
}

// ScalingTrial is one trial of the experiment as the analysis counts it.
type ScalingTrial struct {
	TrialID  string   `json:"trial_id"`
	RunID    string   `json:"run_id,omitempty"`
	Variant  string   `json:"variant"`
	BlockID  string   `json:"block_id,omitempty"`
	Outcome  string   `json:"outcome"`
	Input    *float64 `json:"input,omitempty"`
	Values   int      `json:"values"`
	Median   *float64 `json:"median,omitempty"`
	Included bool     `json:"included"`
	// Excluded says why a trial is not in the fit: its outcome, no value
	// of the metric, or a non-numeric input.
	Excluded string `json:"excluded,omitempty"`
}

// ScalingPoint is one input size of one series: every trial attempted
// at it, and the median and dispersion of those that succeeded.
type ScalingPoint struct {
	Input     float64        `json:"input"`
	Attempted int            `json:"attempted"`
	Succeeded int            `json:"succeeded"`
	Outcomes  map[string]int `json:"outcomes"`
	// Observations are the succeeded trials with a value: the fit's data.
	Observations int      `json:"observations"`
	Median       *float64 `json:"median,omitempty"`
	MAD          *float64 `json:"mad,omitempty"`
	Min          *float64 `json:"min,omitempty"`
	Max          *float64 `json:"max,omitempty"`
}

// ScalingSeries is one variant (with any other factors held fixed) over
// the input sizes, with its fits.
type ScalingSeries struct {
	Variant string            `json:"variant"`
	Factors map[string]string `json:"factors"`
	Unit    string            `json:"unit"`
	Points  []ScalingPoint    `json:"points"`
	// MeasuredMin and MeasuredMax bound the sizes with observations: the
	// fits hold there and nothing is predicted outside.
	MeasuredMin float64     `json:"measured_min"`
	MeasuredMax float64     `json:"measured_max"`
	Fits        []stats.Fit `json:"fits"`
	// NotFitted names the models that could not be fitted, with why.
	NotFitted map[string]string `json:"not_fitted,omitempty"`
	Choice    stats.Choice      `json:"choice"`
}

// ScalingFrame is a function whose share of the profile correlates with
// the input size.
type ScalingFrame struct {
	Variant  string  `json:"variant"`
	Function string  `json:"function"`
	Measure  string  `json:"measure"` // self or inclusive share
	Rho      float64 `json:"rho"`
	P        float64 `json:"p"`
	Q        float64 `json:"q"`
	Runs     int     `json:"runs"`
}

// ScalingParameters echo what the analysis was asked.
type ScalingParameters struct {
	Metric    string   `json:"metric"`
	Variant   string   `json:"variant,omitempty"`
	Parameter string   `json:"parameter"`
	Models    []string `json:"models"`
	Margin    float64  `json:"margin"`
	Limit     int      `json:"limit"`
}

// ScalingResult is the result of `flameox analyze scaling` and MCP
// analyze_scaling.
type ScalingResult struct {
	SchemaVersion    int               `json:"schema_version"`
	Operation        string            `json:"operation"`
	OperationVersion string            `json:"operation_version"`
	CorpusCommitID   string            `json:"corpus_commit_id"`
	ExperimentID     string            `json:"experiment_id"`
	Parameters       ScalingParameters `json:"parameters"`
	Method           string            `json:"method"`
	AttemptedTrials  int               `json:"attempted_trials"`
	SucceededTrials  int               `json:"succeeded_trials"`
	Series           []ScalingSeries   `json:"series"`
	// Trials are the experiment's trials in block order, the first
	// maxListedTrials of TrialsTotal.
	Trials          []ScalingTrial `json:"trials"`
	TrialsTotal     int            `json:"trials_total"`
	TrialsTruncated bool           `json:"trials_truncated"`
	// FrameSampleType is the profile sample type the frames were read
	// under; FramesTested the count of tests the q-values adjust for.
	FrameSampleType string         `json:"frame_sample_type,omitempty"`
	FramesTested    int            `json:"frames_tested"`
	Frames          []ScalingFrame `json:"frames"`
	EvidenceLevel   string         `json:"evidence_level"`
	Limitations     []string       `json:"limitations"`
	// Page counts the frames.
	query.Page
	fault.Next

	runIDs []string // every trial's run, for the record's inputs
}

func (r *ScalingResult) provenance() (string, string, string, any, Source, any, []string) {
	return r.Operation, r.OperationVersion, r.CorpusCommitID, map[string]any{"experiment_id": r.ExperimentID, "parameters": r.Parameters}, Source{},
		map[string]any{"attempted_trials": r.AttemptedTrials, "succeeded_trials": r.SucceededTrials, "frames_total": r.Total, "returned": r.Returned, "truncated": r.Truncated}, r.Limitations
}

// inputs are the runs a scaling analysis read: every trial's run.
func (r *ScalingResult) inputs() (runs, artifacts, generations []string) {
	runs = slices.Clone(r.runIDs)
	slices.Sort(runs)
	return slices.Compact(runs), []string{}, []string{}
}

// ScalingOutput is `flameox analyze scaling --json` and the MCP
// analyze_scaling result: the analysis, and its recording when asked.
type ScalingOutput struct {
	*ScalingResult
	Recorded *Recorded `json:"recorded,omitempty"`
}

var (
	qScalingExperiment = catalog.Query{Name: "analysis.scaling.experiment", Version: "1", SQL: `
SELECT primary_metric FROM experiments WHERE experiment_id = $1 LIMIT 1`}
	qScalingTrials = catalog.Query{Name: "analysis.scaling.trials", Version: "1", SQL: `
WITH t AS (
  SELECT * FROM trials WHERE experiment_id = $1
  QUALIFY row_number() OVER (PARTITION BY trial_id ORDER BY published_at DESC) = 1
), v AS (
  SELECT x.run_id, count(*) AS n, median(coalesce(x.value_float, x.value_int::DOUBLE)) AS med, any_value(x.unit) AS unit
  FROM measurements_current x
  WHERE x.name = $2 AND NOT x.is_warmup AND coalesce(x.value_float, x.value_int::DOUBLE) IS NOT NULL
    AND x.run_id IN (SELECT run_id FROM t WHERE run_id IS NOT NULL)
  GROUP BY x.run_id
)
SELECT t.trial_id, coalesce(vr.name, ''), t.factors_json, coalesce(t.run_id, ''), t.outcome, coalesce(t.block_id, ''),
       coalesce(t.parameter_name, ''), coalesce(v.n, 0), v.med, coalesce(v.unit, ''), coalesce(r.environment_id, '')
FROM t
LEFT JOIN variants vr ON vr.variant_id = t.variant_id AND vr.experiment_id = t.experiment_id
LEFT JOIN v ON v.run_id = t.run_id
LEFT JOIN runs_current r ON r.run_id = t.run_id
ORDER BY coalesce(t.block_id, ''), t.order_in_block NULLS LAST, t.trial_id
LIMIT $3`}
	qScalingFrames = catalog.Query{Name: "analysis.scaling.frames", Version: "1", SQL: `
WITH fm AS (
  SELECT run_id, artifact_id, evidence_generation_id, frame_id, metric, self_value, inclusive_value
  FROM frame_measurements WHERE list_contains($1::VARCHAR[], run_id)
), st AS (
  SELECT metric FROM fm GROUP BY metric ORDER BY (metric = 'cpu') DESC, (metric = 'samples') DESC, count(DISTINCT run_id) DESC, metric LIMIT 1
)
SELECT fm.run_id, fm.metric, coalesce(f.function, '?'), sum(coalesce(fm.self_value, 0)), sum(coalesce(fm.inclusive_value, 0))
FROM fm JOIN st USING (metric)
LEFT JOIN frames f ON f.frame_id = fm.frame_id AND f.artifact_id = fm.artifact_id AND f.evidence_generation_id = fm.evidence_generation_id
GROUP BY 1, 2, 3`}
)

// Scaling fits how an experiment's cost grows with its input size: every
// trial counted per input, the declared models fitted to the succeeded
// trials' medians of the metric, a model chosen only by the rule of
// docs/scaling.md, and the profile frames whose share follows the input.
func Scaling(ctx context.Context, ws *workspace.Workspace, req ScalingRequest) (*ScalingResult, error) {
	if strings.TrimSpace(req.ExperimentID) == "" {
		return nil, fault.New(fault.InvalidArguments, "analyze scaling needs the experiment id").With("field", "experiment_id")
	}
	if req.Limit == 0 {
		req.Limit = 20
	}
	limit, err := query.Limit(req.Limit)
	if err != nil {
		return nil, err
	}
	s, err := query.Open(ctx, ws)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	res := &ScalingResult{SchemaVersion: 1, Operation: OpScaling, OperationVersion: ScalingVersion, CorpusCommitID: s.Commit(),
		ExperimentID: req.ExperimentID, Method: ScalingMethod, Series: []ScalingSeries{}, Trials: []ScalingTrial{},
		Frames: []ScalingFrame{}, EvidenceLevel: "derived", Limitations: []string{}, Next: fault.Next{NextSteps: []string{}}}
	found := false
	var primary string
	err = s.R.Scan(ctx, qScalingExperiment, []any{req.ExperimentID}, func(rows *sql.Rows) error {
		for rows.Next() {
			found = true
			if err := rows.Scan(&primary); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, fault.New(fault.NotFound, "no experiment %s at corpus commit %s", req.ExperimentID, s.Commit()).
			With("experiment_id", req.ExperimentID).Fix("List the experiments of an investigation with `flameox investigations show ID`.")
	}
	metric := req.Metric
	if metric == "" {
		metric = primary
	}
	if metric == "" || metric == "categorical_outcome" {
		return nil, fault.New(fault.InvalidArguments, "experiment %s declares no numeric primary metric (%q); name one with --metric", req.ExperimentID, primary).
			With("field", "metric")
	}
	type raw struct {
		ScalingTrial
		factors map[string]string
		env     string
		unit    string
	}
	var trials []raw
	swept := map[string]int{}
	err = s.R.Scan(ctx, qScalingTrials, []any{req.ExperimentID, metric, maxScalingTrials + 1}, func(rows *sql.Rows) error {
		for rows.Next() {
			var t raw
			var fj, pname string
			var med sql.NullFloat64
			if err := rows.Scan(&t.TrialID, &t.Variant, &fj, &t.RunID, &t.Outcome, &t.BlockID, &pname, &t.Values, &med, &t.unit, &t.env); err != nil {
				return err
			}
			if len(trials) == maxScalingTrials {
				return fault.New(fault.QueryBudgetExceeded, "experiment %s has more than %d trials", req.ExperimentID, maxScalingTrials)
			}
			if err := json.Unmarshal([]byte(fj), &t.factors); err != nil {
				return fault.Wrap(fault.InternalError, err, "trial %s: factors_json", t.TrialID)
			}
			if med.Valid {
				t.Median = &med.Float64
			}
			if pname != "" {
				swept[pname]++
			}
			trials = append(trials, t)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	param := req.Parameter
	if param == "" {
		for _, k := range slices.Sorted(maps.Keys(swept)) {
			if swept[k] > swept[param] {
				param = k
			}
		}
	}
	if param == "" {
		return nil, fault.New(fault.InvalidArguments, "experiment %s sweeps no input size: its trials record no scaling parameter", req.ExperimentID).
			With("field", "parameter").Fix("Declare scaling_parameter and scaling_values (or a second factor) in the experiment, or name the factor with --parameter.")
	}
	res.Parameters = ScalingParameters{Metric: metric, Variant: req.Variant, Parameter: param, Models: stats.Models, Margin: stats.DefaultMargin, Limit: limit}
	type key = string
	series := map[key]*ScalingSeries{}
	obs := map[key][][2]float64{}
	runInput := map[string]float64{}
	runSeries := map[string]key{}
	envs := map[string]bool{}
	noValue, nonNumeric := 0, 0
	for _, t := range trials {
		if req.Variant != "" && t.Variant != req.Variant {
			continue
		}
		if t.Outcome != "unattempted" {
			res.AttemptedTrials++
		}
		if t.Outcome == "succeeded" {
			res.SucceededTrials++
		}
		others := maps.Clone(t.factors)
		v, ok := others[param]
		delete(others, param)
		k := t.Variant + "\x00" + canonicalFactors(others)
		sr := series[k]
		if sr == nil {
			sr = &ScalingSeries{Variant: t.Variant, Factors: others, Points: []ScalingPoint{}, Fits: []stats.Fit{}}
			series[k] = sr
		}
		x, err := strconv.ParseFloat(v, 64)
		switch {
		case !ok || err != nil || math.IsNaN(x) || math.IsInf(x, 0):
			t.Excluded = fmt.Sprintf("input %s = %q is not a number", param, v)
			nonNumeric++
		default:
			t.Input = &x
			pt := point(sr, x)
			if t.Outcome != "unattempted" {
				pt.Attempted++
			}
			pt.Outcomes[t.Outcome]++
			switch {
			case t.Outcome != "succeeded":
				t.Excluded = "trial " + t.Outcome
			case t.Median == nil:
				t.Excluded = "no value of " + metric
				noValue++
			default:
				pt.Succeeded++
				t.Included = true
				obs[k] = append(obs[k], [2]float64{x, *t.Median})
				if sr.Unit == "" {
					sr.Unit = t.unit
				}
				runInput[t.RunID], runSeries[t.RunID] = x, k
				if t.env != "" {
					envs[t.env] = true
				}
			}
			if t.Outcome == "succeeded" && t.Median == nil {
				pt.Succeeded++
			}
		}
		res.TrialsTotal++
		if t.RunID != "" {
			res.runIDs = append(res.runIDs, t.RunID)
		}
		if len(res.Trials) < maxListedTrials {
			res.Trials = append(res.Trials, t.ScalingTrial)
		} else {
			res.TrialsTruncated = true
		}
	}
	if req.Variant != "" && len(series) == 0 {
		return nil, fault.New(fault.NotFound, "experiment %s has no trials of variant %q", req.ExperimentID, req.Variant).With("field", "variant")
	}
	for _, k := range slices.Sorted(maps.Keys(series)) {
		sr := series[k]
		slices.SortFunc(sr.Points, func(a, b ScalingPoint) int { return cmp.Compare(a.Input, b.Input) })
		var n, y []float64
		for _, o := range obs[k] {
			n, y = append(n, o[0]), append(y, o[1])
		}
		for i := range sr.Points {
			pt := &sr.Points[i]
			var vals []float64
			for _, o := range obs[k] {
				if o[0] == pt.Input {
					vals = append(vals, o[1])
				}
			}
			pt.Observations = len(vals)
			if len(vals) > 0 {
				m, mad := medianMAD(vals)
				lo, hi := slices.Min(vals), slices.Max(vals)
				pt.Median, pt.MAD, pt.Min, pt.Max = &m, &mad, &lo, &hi
			}
		}
		if len(n) > 0 {
			sr.MeasuredMin, sr.MeasuredMax = slices.Min(n), slices.Max(n)
		}
		fits, skipped, choice := stats.FitScaling(n, y, nil, stats.ChooseOptions{})
		if fits != nil {
			sr.Fits = fits
		}
		if len(skipped) > 0 && len(n) > 0 {
			sr.NotFitted = skipped
		}
		sr.Choice = choice
		res.Series = append(res.Series, *sr)
	}
	if nonNumeric > 0 {
		res.Limitations = append(res.Limitations, fmt.Sprintf("%d trial(s) have a non-numeric %s and are left out of the fits", nonNumeric, param))
	}
	if noValue > 0 {
		res.Limitations = append(res.Limitations, fmt.Sprintf("%d succeeded trial(s) have no value of %s and are left out of the fits", noValue, metric))
	}
	if len(envs) > 1 {
		res.Limitations = append(res.Limitations, fmt.Sprintf("the included runs ran in %d environments: the input is confounded with environment differences where they coincide", len(envs)))
	}
	if f := res.AttemptedTrials - res.SucceededTrials; f > 0 {
		res.Limitations = append(res.Limitations, fmt.Sprintf("%d of %d attempted trial(s) did not succeed; they are counted at their input, not fitted", f, res.AttemptedTrials))
	}
	res.Limitations = append(res.Limitations,
		"fits hold over each series' measured range only; nothing is predicted outside it",
		"a chosen model is the best of the declared candidates (constant, log, linear, n_log_n, quadratic), not proof that the growth law is one of them")
	if err := scalingFrames(ctx, s, res, runInput, runSeries, series, limit); err != nil {
		return nil, err
	}
	return res, nil
}

// point returns sr's point at input x, adding it when new.
func point(sr *ScalingSeries, x float64) *ScalingPoint {
	for i := range sr.Points {
		if sr.Points[i].Input == x {
			return &sr.Points[i]
		}
	}
	sr.Points = append(sr.Points, ScalingPoint{Input: x, Outcomes: map[string]int{}})
	return &sr.Points[len(sr.Points)-1]
}

func canonicalFactors(m map[string]string) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(m)) {
		fmt.Fprintf(&b, "%s=%s\x00", k, m[k])
	}
	return b.String()
}

// medianMAD is the median of xs and the median absolute deviation from
// it (unscaled).
func medianMAD(xs []float64) (float64, float64) {
	m := stats.Median(xs)
	dev := make([]float64, len(xs))
	for i, x := range xs {
		dev[i] = math.Abs(x - m)
	}
	return m, stats.Median(dev)
}

// scalingFrames correlates each function's share of its run's profile
// with the run's input, per series, and keeps the top rows by |ρ|.
func scalingFrames(ctx context.Context, s *query.Session, res *ScalingResult, runInput map[string]float64, runSeries map[string]string,
	series map[string]*ScalingSeries, limit int) error {
	runs := slices.Sorted(maps.Keys(runInput))
	if len(runs) == 0 {
		res.Limitations = append(res.Limitations, "no included run, so no frame is correlated with the input")
		return nil
	}
	type acc struct{ self, incl map[string]int64 }
	per := map[string]*acc{}
	totals := map[string]int64{}
	err := s.R.Scan(ctx, qScalingFrames, []any{runs}, func(rows *sql.Rows) error {
		for rows.Next() {
			var run, metric, fn string
			var self, incl int64
			if err := rows.Scan(&run, &metric, &fn, &self, &incl); err != nil {
				return err
			}
			res.FrameSampleType = metric
			a := per[run]
			if a == nil {
				a = &acc{self: map[string]int64{}, incl: map[string]int64{}}
				per[run] = a
			}
			a.self[fn] += self
			a.incl[fn] += incl
			totals[run] += self
		}
		return nil
	})
	if err != nil {
		return err
	}
	if len(per) == 0 {
		res.Limitations = append(res.Limitations, "no included run carries a profile, so no frame is correlated with the input (capture the trials with a profiling adapter, e.g. gotest or pprof)")
		return nil
	}
	if len(per) < len(runs) {
		res.Limitations = append(res.Limitations, fmt.Sprintf("%d of %d included runs carry a profile; frames are correlated over those", len(per), len(runs)))
	}
	var out []ScalingFrame
	var ps []float64
	for _, k := range slices.Sorted(maps.Keys(series)) {
		var rs []string
		for _, r := range runs {
			if runSeries[r] == k && per[r] != nil && totals[r] != 0 {
				rs = append(rs, r)
			}
		}
		if len(rs) < 3 {
			continue
		}
		fns := map[string]bool{}
		for _, r := range rs {
			for fn, v := range per[r].incl {
				if math.Abs(float64(v)/float64(totals[r])) >= minFrameShare {
					fns[fn] = true
				}
			}
		}
		x := make([]float64, len(rs))
		for i, r := range rs {
			x[i] = runInput[r]
		}
		for _, fn := range slices.Sorted(maps.Keys(fns)) {
			for _, measure := range []string{"self", "inclusive"} {
				y := make([]float64, len(rs))
				for i, r := range rs {
					v := per[r].incl[fn]
					if measure == "self" {
						v = per[r].self[fn]
					}
					y[i] = float64(v) / float64(totals[r])
				}
				rho, p, ok := stats.Spearman(x, y)
				if !ok {
					continue
				}
				out = append(out, ScalingFrame{Variant: series[k].Variant, Function: fn, Measure: measure + "_share", Rho: rho, P: p, Runs: len(rs)})
				ps = append(ps, p)
			}
		}
	}
	q := stats.BenjaminiHochberg(ps)
	for i := range out {
		out[i].Q = q[i]
	}
	res.FramesTested = len(out)
	slices.SortStableFunc(out, func(a, b ScalingFrame) int {
		return cmp.Or(cmp.Compare(math.Abs(b.Rho), math.Abs(a.Rho)), cmp.Compare(a.Q, b.Q), cmp.Compare(a.Variant, b.Variant),
			cmp.Compare(a.Function, b.Function), cmp.Compare(a.Measure, b.Measure))
	})
	res.Total = int64(len(out))
	if len(out) > limit {
		out, res.Truncated = out[:limit], true
	}
	res.Frames, res.Returned = out, len(out)
	return nil
}
