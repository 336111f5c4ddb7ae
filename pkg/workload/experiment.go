package workload

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Experiment designs and polarities.
const (
	DesignRCB        = "randomized_complete_blocks"
	DesignFixedOrder = "fixed_order"
	LowerIsBetter    = "lower_is_better"
	HigherIsBetter   = "higher_is_better"
	Neutral          = "neutral"
	EstimandMPLR     = "median_paired_log_ratio"
)

type rawExperiment struct {
	Workload           *string          `toml:"workload"`
	Variants           []any            `toml:"variants"`
	Factors            map[string]any   `toml:"factors"`
	TreatmentParameter *string          `toml:"treatment_parameter"`
	Design             *string          `toml:"design"`
	Blocks             *int             `toml:"blocks"`
	ScalingParameter   *string          `toml:"scaling_parameter"`
	ScalingValues      []any            `toml:"scaling_values"`
	PrimaryMetric      *string          `toml:"primary_metric"`
	Polarity           *string          `toml:"polarity"`
	Estimand           *string          `toml:"estimand"`
	PracticalThreshold *float64         `toml:"practical_threshold"`
	ConfidenceLevel    *float64         `toml:"confidence_level"`
	RandomSeed         *int64           `toml:"random_seed"`
	MaxTrials          *int             `toml:"max_trials"`
	Combinations       *string          `toml:"combinations"`
	Include            []map[string]any `toml:"include"`
	Exclude            []map[string]any `toml:"exclude"`
}

// Factor is one varied workload parameter and the choices it takes, as
// canonical text, in declaration order.
type Factor struct {
	Parameter string   `json:"parameter"`
	Values    []string `json:"values"`
}

// Experiment is one validated `[experiments.NAME]` entry. The legacy form
// (variants + scaling) is normalised to factors: the treatment first, then
// the scaling parameter; with `factors`, the treatment first, then the
// others by name.
type Experiment struct {
	Name               string   `json:"name"`
	Workload           string   `json:"workload"`
	TreatmentParameter string   `json:"treatment_parameter"`
	Factors            []Factor `json:"factors"`
	Design             string   `json:"design"`
	Blocks             int      `json:"blocks"`
	PrimaryMetric      string   `json:"primary_metric"`
	Polarity           string   `json:"polarity"`
	Estimand           string   `json:"estimand"`
	PracticalThreshold float64  `json:"practical_threshold"`
	ConfidenceLevel    float64  `json:"confidence_level"`
	RandomSeed         int64    `json:"random_seed"`
	MaxTrials          int      `json:"max_trials"`
	// CombinationMode is cartesian (every combination of the factors'
	// values, less those matching an Exclude entry) or explicit (exactly
	// the Include entries, each naming every factor).
	CombinationMode string              `json:"combinations"`
	Include         []map[string]string `json:"include,omitempty"`
	Exclude         []map[string]string `json:"exclude,omitempty"`
}

// Combination modes.
const (
	Cartesian = "cartesian"
	Explicit  = "explicit"
)

// Variants returns the treatment values.
func (e *Experiment) Variants() []string { return e.Factors[0].Values }

// Combinations is the number of factor combinations (trials per block).
func (e *Experiment) Combinations() int { return len(e.Cells()) }

// Cells are the factor combinations every block runs once, in declaration
// order: the explicit list, or the cartesian product (the first factor
// varying slowest, each value in declaration order) less the excluded.
func (e *Experiment) Cells() []map[string]string {
	if e.CombinationMode == Explicit {
		out := make([]map[string]string, len(e.Include))
		for i, c := range e.Include {
			out[i] = maps.Clone(c)
		}
		return out
	}
	out := []map[string]string{{}}
	for _, f := range e.Factors {
		next := make([]map[string]string, 0, len(out)*len(f.Values))
		for _, c := range out {
			for _, v := range f.Values {
				m := maps.Clone(c)
				m[f.Parameter] = v
				next = append(next, m)
			}
		}
		out = next
	}
	return slices.DeleteFunc(out, func(c map[string]string) bool {
		return slices.ContainsFunc(e.Exclude, func(x map[string]string) bool { return matches(c, x) })
	})
}

// matches reports whether combination c has every value pattern x names.
func matches(c, x map[string]string) bool {
	for k, v := range x {
		if c[k] != v {
			return false
		}
	}
	return true
}

func buildExperiment(path, name string, raw *rawExperiment, workloads map[string]*Workload) (*Experiment, error) {
	key := "experiments." + clip(name)
	if err := checkName(path, key, name, nameRE()); err != nil {
		return nil, err
	}
	if raw == nil {
		raw = &rawExperiment{}
	}
	e := &Experiment{Name: name, Factors: []Factor{}, Design: DesignRCB, Blocks: 1, PrimaryMetric: "categorical_outcome",
		Polarity: Neutral, Estimand: EstimandMPLR, ConfidenceLevel: 0.95, MaxTrials: DefaultMaxTrials}
	if raw.Workload == nil {
		return nil, invalid(path, key+".workload", "is required")
	}
	w := workloads[*raw.Workload]
	if w == nil {
		return nil, invalid(path, key+".workload", "names %q, which is not declared under [workloads]", clip(*raw.Workload))
	}
	e.Workload = w.Name
	param := func(k, n string) (*Parameter, error) {
		if p := w.Parameter(n); p != nil {
			return p, nil
		}
		return nil, invalid(path, k, "names %q, which is not a parameter of workloads.%s (declared: %s)", clip(n), w.Name, strings.Join(w.ParameterNames(), ", "))
	}
	switch {
	case raw.Factors != nil && (raw.Variants != nil || raw.ScalingParameter != nil || raw.ScalingValues != nil):
		return nil, invalid(path, key+".factors", "cannot be combined with variants, scaling_parameter or scaling_values")
	case raw.Factors != nil:
		if len(raw.Factors) == 0 || len(raw.Factors) > MaxFactors {
			return nil, invalid(path, key+".factors", "must name 1..%d parameters", MaxFactors)
		}
		for _, n := range sortedKeys(raw.Factors) {
			fk := key + ".factors." + clip(n)
			p, err := param(fk, n)
			if err != nil {
				return nil, err
			}
			list, ok := raw.Factors[n].([]any)
			if !ok {
				return nil, invalid(path, fk, "must be an array of choices, not %s", typeName(raw.Factors[n]))
			}
			vals, err := choices(path, fk, p, list, MaxFactorValues)
			if err != nil {
				return nil, err
			}
			e.Factors = append(e.Factors, Factor{Parameter: n, Values: vals})
		}
		switch {
		case raw.TreatmentParameter != nil:
			e.TreatmentParameter = *raw.TreatmentParameter
		case len(e.Factors) == 1:
			e.TreatmentParameter = e.Factors[0].Parameter
		default:
			return nil, invalid(path, key+".treatment_parameter", "is required when more than one factor is declared")
		}
		i := slices.IndexFunc(e.Factors, func(f Factor) bool { return f.Parameter == e.TreatmentParameter })
		if i < 0 {
			return nil, invalid(path, key+".treatment_parameter", "names %q, which is not one of the factors", clip(e.TreatmentParameter))
		}
		treatment := e.Factors[i]
		e.Factors = append([]Factor{treatment}, slices.Delete(e.Factors, i, i+1)...)
	case raw.Variants != nil:
		var p *Parameter
		var err error
		if raw.TreatmentParameter != nil {
			if p, err = param(key+".treatment_parameter", *raw.TreatmentParameter); err != nil {
				return nil, err
			}
		} else if p, err = inferTreatment(path, key, w, raw.Variants); err != nil {
			return nil, err
		}
		vals, err := choices(path, key+".variants", p, raw.Variants, MaxVariants)
		if err != nil {
			return nil, err
		}
		e.TreatmentParameter = p.Name
		e.Factors = append(e.Factors, Factor{Parameter: p.Name, Values: vals})
		if (raw.ScalingParameter == nil) != (raw.ScalingValues == nil) {
			return nil, invalid(path, key+".scaling_parameter", "and scaling_values must be given together")
		}
		if raw.ScalingParameter != nil {
			sk := key + ".scaling_parameter"
			sp, err := param(sk, *raw.ScalingParameter)
			if err != nil {
				return nil, err
			}
			if sp == p {
				return nil, invalid(path, sk, "must differ from the treatment parameter %q", p.Name)
			}
			svals, err := choices(path, key+".scaling_values", sp, raw.ScalingValues, MaxFactorValues)
			if err != nil {
				return nil, err
			}
			e.Factors = append(e.Factors, Factor{Parameter: sp.Name, Values: svals})
		}
	default:
		return nil, invalid(path, key, "needs variants (with treatment_parameter) or factors")
	}
	return e, settings(path, key, raw, e)
}

// settings validates the design and analysis keys of an experiment.
func settings(path, key string, raw *rawExperiment, e *Experiment) error {
	set := func(dst *string, src *string, field string, allowed ...string) error {
		if src != nil {
			*dst = *src
		}
		if !slices.Contains(allowed, *dst) {
			return invalid(path, key+"."+field, "must be %s, not %q", strings.Join(allowed, " | "), clip(*dst))
		}
		return nil
	}
	if err := set(&e.Design, raw.Design, "design", DesignRCB, DesignFixedOrder); err != nil {
		return err
	}
	if err := set(&e.Polarity, raw.Polarity, "polarity", LowerIsBetter, HigherIsBetter, Neutral); err != nil {
		return err
	}
	if err := set(&e.Estimand, raw.Estimand, "estimand", EstimandMPLR); err != nil {
		return err
	}
	if raw.PrimaryMetric != nil {
		e.PrimaryMetric = *raw.PrimaryMetric
	}
	if err := checkText(path, key+".primary_metric", e.PrimaryMetric, 128); err != nil || e.PrimaryMetric == "" {
		return invalid(path, key+".primary_metric", "must be a metric name of 1..128 bytes")
	}
	if raw.Blocks != nil {
		e.Blocks = *raw.Blocks
	}
	if e.Blocks < 1 || e.Blocks > MaxBlocks {
		return invalid(path, key+".blocks", "must be in 1..%d", MaxBlocks)
	}
	if raw.PracticalThreshold != nil {
		e.PracticalThreshold = *raw.PracticalThreshold
	}
	if !(e.PracticalThreshold >= 0 && e.PracticalThreshold <= MaxPracticalThreshold) {
		return invalid(path, key+".practical_threshold", "must be in [0, %d]", MaxPracticalThreshold)
	}
	if raw.ConfidenceLevel != nil {
		e.ConfidenceLevel = *raw.ConfidenceLevel
	}
	if !(e.ConfidenceLevel > 0 && e.ConfidenceLevel < 1) {
		return invalid(path, key+".confidence_level", "must be in (0, 1)")
	}
	if raw.RandomSeed != nil {
		e.RandomSeed = *raw.RandomSeed
	}
	if e.RandomSeed < 0 {
		return invalid(path, key+".random_seed", "must not be negative")
	}
	if raw.MaxTrials != nil {
		e.MaxTrials = *raw.MaxTrials
	}
	if err := cells(path, key, raw, e); err != nil {
		return err
	}
	if e.MaxTrials < 1 || e.MaxTrials > MaxTrialsLimit {
		return invalid(path, key+".max_trials", "must be in 1..%d", MaxTrialsLimit)
	}
	if n := e.Combinations() * e.Blocks; n > e.MaxTrials {
		return invalid(path, key+".max_trials", "is %d but %d combinations × %d blocks = %d trials", e.MaxTrials, e.Combinations(), e.Blocks, n)
	}
	return nil
}

// choices resolves experiment values against p's declared choices or
// range: 1..max, each declared or in range, none repeated. It returns
// their canonical text.
func choices(path, key string, p *Parameter, list []any, max int) ([]string, error) {
	if len(list) == 0 || len(list) > max {
		return nil, invalid(path, key, "must list 1..%d values", max)
	}
	out := make([]string, 0, len(list))
	for i, v := range list {
		text, why := p.resolve(v)
		if why != "" {
			return nil, invalid(path, fmt.Sprintf("%s[%d]", key, i), "%s %s for parameter %q", describe(v), why, p.Name)
		}
		if slices.Contains(out, text) {
			return nil, invalid(path, fmt.Sprintf("%s[%d]", key, i), "repeats %s", describe(v))
		}
		out = append(out, text)
	}
	return out, nil
}

// inferTreatment finds the one parameter whose choices or range include
// every variant.
func inferTreatment(path, key string, w *Workload, variants []any) (*Parameter, error) {
	var found []*Parameter
	for _, p := range w.Parameters {
		if !slices.ContainsFunc(variants, func(v any) bool { _, why := p.resolve(v); return why != "" }) {
			found = append(found, p)
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return nil, invalid(path, key+".variants", "are not all choices of any one parameter of workloads.%s; set treatment_parameter", w.Name)
	}
	names := make([]string, len(found))
	for i, p := range found {
		names[i] = p.Name
	}
	return nil, invalid(path, key+".variants", "match parameters %s alike; set treatment_parameter", strings.Join(names, ", "))
}

// cells validates combinations, include and exclude: every value named
// must be one of its factor's values; explicit entries name every factor,
// none twice; exclusions must leave a combination to run.
func cells(path, key string, raw *rawExperiment, e *Experiment) error {
	e.CombinationMode = Cartesian
	if raw.Combinations != nil {
		e.CombinationMode = *raw.Combinations
	}
	switch e.CombinationMode {
	case Cartesian:
		if raw.Include != nil {
			return invalid(path, key+".include", "needs combinations = %q", Explicit)
		}
	case Explicit:
		if raw.Exclude != nil {
			return invalid(path, key+".exclude", "applies only to combinations = %q", Cartesian)
		}
		if len(raw.Include) == 0 {
			return invalid(path, key+".include", "must list the combinations to run when combinations = %q", Explicit)
		}
	default:
		return invalid(path, key+".combinations", "must be %s | %s, not %q", Cartesian, Explicit, clip(e.CombinationMode))
	}
	resolve := func(field string, list []map[string]any, whole bool) ([]map[string]string, error) {
		if len(list) > MaxTrialsLimit {
			return nil, invalid(path, key+"."+field, "lists more than %d entries", MaxTrialsLimit)
		}
		out := make([]map[string]string, 0, len(list))
		for i, entry := range list {
			k := fmt.Sprintf("%s.%s[%d]", key, field, i)
			if len(entry) == 0 {
				return nil, invalid(path, k, "names no factor")
			}
			c := map[string]string{}
			for name, v := range entry {
				fi := slices.IndexFunc(e.Factors, func(f Factor) bool { return f.Parameter == name })
				if fi < 0 {
					return nil, invalid(path, k+"."+clip(name), "is not a factor of the experiment")
				}
				text := fmt.Sprint(v)
				if f, ok := v.(float64); ok {
					text = strconv.FormatFloat(f, 'g', -1, 64)
				}
				if !slices.Contains(e.Factors[fi].Values, text) {
					return nil, invalid(path, k+"."+clip(name), "is %s, not one of the factor's values (%s)", describe(v), strings.Join(e.Factors[fi].Values, ", "))
				}
				c[name] = text
			}
			if whole && len(c) != len(e.Factors) {
				return nil, invalid(path, k, "must name every factor (%d), not %d", len(e.Factors), len(c))
			}
			if whole && slices.ContainsFunc(out, func(x map[string]string) bool { return maps.Equal(x, c) }) {
				return nil, invalid(path, k, "repeats a combination")
			}
			out = append(out, c)
		}
		return out, nil
	}
	var err error
	if e.Include, err = resolve("include", raw.Include, true); err != nil {
		return err
	}
	if e.Exclude, err = resolve("exclude", raw.Exclude, false); err != nil {
		return err
	}
	if len(e.Include) == 0 {
		e.Include = nil
	}
	if len(e.Exclude) == 0 {
		e.Exclude = nil
	}
	if e.Combinations() == 0 {
		return invalid(path, key+".exclude", "excludes every combination")
	}
	return nil
}
