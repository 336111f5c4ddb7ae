package workload

import (
	"fmt"
	"slices"
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
	Workload           *string        `toml:"workload"`
	Variants           []any          `toml:"variants"`
	Factors            map[string]any `toml:"factors"`
	TreatmentParameter *string        `toml:"treatment_parameter"`
	Design             *string        `toml:"design"`
	Blocks             *int           `toml:"blocks"`
	ScalingParameter   *string        `toml:"scaling_parameter"`
	ScalingValues      []any          `toml:"scaling_values"`
	PrimaryMetric      *string        `toml:"primary_metric"`
	Polarity           *string        `toml:"polarity"`
	Estimand           *string        `toml:"estimand"`
	PracticalThreshold *float64       `toml:"practical_threshold"`
	ConfidenceLevel    *float64       `toml:"confidence_level"`
	RandomSeed         *int64         `toml:"random_seed"`
	MaxTrials          *int           `toml:"max_trials"`
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
}

// Variants returns the treatment values.
func (e *Experiment) Variants() []string { return e.Factors[0].Values }

// Combinations is the number of factor combinations (trials per block).
func (e *Experiment) Combinations() int {
	n := 1
	for _, f := range e.Factors {
		n *= len(f.Values)
	}
	return n
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
