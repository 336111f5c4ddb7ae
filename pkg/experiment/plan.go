package experiment

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"

	"github.com/flameox/flameox/pkg/digest"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/workload"
)

// Generator names the algorithm that orders trials, as plans record it.
const Generator = "fisher-yates over pcg-dxsm(random_seed, block), rejection-sampled bounds"

// Recipe is the recipe name experiments are recorded under, and its
// version: a change to how plans are derived bumps it.
const (
	Recipe        = "declared_experiment"
	RecipeVersion = "1"
)

// Plan is every trial of one experiment in execution order, with what
// binds it. It is what `flameox experiment plan` prints.
type Plan struct {
	SchemaVersion      int               `json:"schema_version"`
	Experiment         string            `json:"experiment"`
	Workload           string            `json:"workload"`
	DefinitionID       string            `json:"workload_definition_id"`
	Adapter            string            `json:"adapter"`
	InvestigationID    string            `json:"investigation_id,omitempty"`
	HypothesisID       string            `json:"hypothesis_id,omitempty"`
	Design             string            `json:"design"`
	Blocks             int               `json:"blocks"`
	RandomSeed         int64             `json:"random_seed"`
	Generator          string            `json:"generator"`
	TreatmentParameter string            `json:"treatment_parameter"`
	Factors            []workload.Factor `json:"factors"`
	// Combinations are what every block runs once: cartesian (less the
	// excluded) or explicit.
	CombinationMode    string              `json:"combinations"`
	Exclude            []map[string]string `json:"exclude,omitempty"`
	Include            []map[string]string `json:"include,omitempty"`
	Cells              int                 `json:"combinations_per_block"`
	Variants           []string            `json:"variants"`
	PrimaryMetric      string              `json:"primary_metric"`
	Polarity           string              `json:"polarity"`
	Estimand           string              `json:"estimand"`
	PracticalThreshold float64             `json:"practical_threshold"`
	ConfidenceLevel    float64             `json:"confidence_level"`
	MaxTrials          int                 `json:"max_trials"`
	Oracle             string              `json:"oracle_strength,omitempty"`
	Trials             []Trial             `json:"trials"`
	// DesignID digests everything above but the trials, which follow
	// from it; two plans with the same DesignID have the same trials.
	DesignID string `json:"experiment_design_id"`
}

// Trial is one planned trial.
type Trial struct {
	// Index is the 1-based position in execution order.
	Index        int    `json:"index"`
	Block        int    `json:"block"`
	BlockID      string `json:"block_id"`
	OrderInBlock int    `json:"order_in_block"`
	// Variant is the treatment value; Parameters every factor's value.
	Variant       string            `json:"variant"`
	Parameters    map[string]string `json:"parameters"`
	CombinationID string            `json:"combination_id"`
	// Seed is the PCG stream the block's order came from:
	// (random_seed, block).
	Seed [2]uint64 `json:"seed"`

	cell int // index in Cells
}

// PlanFor plans experiment e of workload w for adapter. Every block holds
// every factor combination (e.Cells) exactly once; in a
// randomized_complete_blocks design its order is shuffled from
// (random_seed, block), in fixed_order it is the declaration order
// (treatment values slowest).
func PlanFor(e *workload.Experiment, w *workload.Workload, adapter, investigationID, hypothesisID string) (*Plan, error) {
	if e.Workload != w.Name {
		return nil, fault.New(fault.InvalidArguments, "experiment %s runs workload %s, not %s", e.Name, e.Workload, w.Name)
	}
	p := &Plan{SchemaVersion: 1, Experiment: e.Name, Workload: w.Name, DefinitionID: w.DefinitionID(), Adapter: adapter,
		InvestigationID: investigationID, HypothesisID: hypothesisID, Design: e.Design, Blocks: e.Blocks,
		RandomSeed: e.RandomSeed, Generator: Generator, TreatmentParameter: e.TreatmentParameter,
		Factors: slices.Clone(e.Factors), Variants: slices.Clone(e.Variants()), PrimaryMetric: e.PrimaryMetric,
		CombinationMode: e.CombinationMode, Exclude: e.Exclude, Include: e.Include, Cells: e.Combinations(),
		Polarity: e.Polarity, Estimand: e.Estimand, PracticalThreshold: e.PracticalThreshold,
		ConfidenceLevel: e.ConfidenceLevel, MaxTrials: e.MaxTrials, Trials: []Trial{}}
	if w.Oracle != nil {
		p.Oracle = w.Oracle.Strength
	}
	design := *p
	design.Trials = nil
	id, err := digest.Of(design)
	if err != nil {
		return nil, fault.Wrap(fault.InternalError, err, "digest the experiment design")
	}
	p.DesignID = id
	combos := e.Cells()
	if n := len(combos) * e.Blocks; n > e.MaxTrials {
		return nil, fault.New(fault.InvalidArguments, "experiment %s has %d trials, over its max_trials %d", e.Name, n, e.MaxTrials)
	}
	ids := make([]string, len(combos))
	for i, c := range combos {
		if ids[i], err = CombinationID(c); err != nil {
			return nil, err
		}
	}
	for b := 1; b <= e.Blocks; b++ {
		order := make([]int, len(combos))
		for i := range order {
			order[i] = i
		}
		seed := [2]uint64{uint64(e.RandomSeed), uint64(b)}
		if e.Design == workload.DesignRCB {
			Shuffle(order, seed)
		}
		for pos, ci := range order {
			p.Trials = append(p.Trials, Trial{Index: len(p.Trials) + 1, Block: b, BlockID: BlockID(b), OrderInBlock: pos + 1,
				Variant: combos[ci][e.Factors[0].Parameter], Parameters: combos[ci], CombinationID: ids[ci], Seed: seed, cell: ci})
		}
	}
	return p, nil
}

// BlockID names block b (1-based).
func BlockID(b int) string { return fmt.Sprintf("block-%03d", b) }

// Cells are the factor combinations every block of plan p runs once, in
// declaration order (workload.Experiment.Cells).
func Cells(p *Plan) []map[string]string {
	out := make([]map[string]string, p.Cells)
	for _, t := range p.Trials {
		if t.Block == 1 {
			out[t.cell] = t.Parameters
		}
	}
	return out
}

// CombinationID names one combination of factor values: "cb-" and 32
// hex digits of its digest.
func CombinationID(c map[string]string) (string, error) { return ShortID("cb-", c) }

// ShortID is prefix and the first 32 hex digits (128 bits) of v's digest:
// the ids of variants (va-), trials (tr-) and combinations (cb-), short
// enough to read in a result and unique for any realistic corpus.
func ShortID(prefix string, v any) (string, error) {
	d, err := digest.Of(v)
	if err != nil {
		return "", fault.Wrap(fault.InternalError, err, "digest an id")
	}
	h, err := digest.Hex(d)
	if err != nil {
		return "", err
	}
	return prefix + h[:32], nil
}

// Shuffle permutes xs in place, Fisher–Yates from the last element down,
// with draws from PCG-DXSM seeded by seed.
func Shuffle(xs []int, seed [2]uint64) {
	src := rand.NewPCG(seed[0], seed[1])
	for i := len(xs) - 1; i > 0; i-- {
		j := int(below(src, uint64(i+1)))
		xs[i], xs[j] = xs[j], xs[i]
	}
}

// below returns a uniform value in [0, n), n > 0, by rejection: draws in
// the incomplete last span of 2^64 mod n values are discarded, so every
// result is equally likely.
func below(src *rand.PCG, n uint64) uint64 {
	limit := -n % n // 2^64 mod n
	for {
		x := src.Uint64()
		if x >= limit {
			return x % n
		}
	}
}

// ScalingValue returns the non-treatment factor a trial sweeps (the
// second factor, the legacy scaling parameter) and its value as an
// integer or a float; ok is false when there is none or it is not a
// number.
func ScalingValue(p *Plan, t Trial) (name string, i *int64, f *float64, ok bool) {
	if len(p.Factors) < 2 {
		return "", nil, nil, false
	}
	name = p.Factors[1].Parameter
	v := t.Parameters[name]
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		return name, &n, nil, true
	}
	if x, err := strconv.ParseFloat(v, 64); err == nil {
		return name, nil, &x, true
	}
	return name, nil, nil, false
}
