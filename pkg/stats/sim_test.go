package stats

import (
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// The calibration simulation (docs/statistics.md). Without -sim it runs a
// CI-sized version with fixed seeds, so it is deterministic and cannot
// flake; -sim=full runs the figures the document reports:
//
//	go test ./pkg/stats -run TestSimulation -sim=full -v -timeout 30m
var (
	simMode    = flag.String("sim", "", `calibration simulation size: "" (CI-sized) or "full" (the figures in docs/statistics.md)`)
	simMethods = flag.String("sim-methods", strings.Join(allMethods, ","), "interval methods the full simulation compares")
)

var allMethods = []string{BCa, Percentile, OrderStatistic, Interpolated}

// noiseModel is how one block's two measurements are drawn. Each value is
// the block's level (a slow trend across blocks, which pairing cancels)
// times lognormal noise; an outlier multiplies a value by 1.5 to 3; the
// treatment that runs second in its block (the order is a coin flip, as
// a randomized complete block design draws it) is slowed by a drift of
// |N(0, drift)| on the log scale. Every term is symmetric between the
// two sides, so the population median of the paired log ratio is exactly
// log(ratio): the known truth the intervals must cover.
type noiseModel struct {
	name     string
	sigma    float64 // lognormal noise of one measurement
	outlierP float64 // chance a measurement is an outlier
	drift    float64 // within-block drift against the second run
	trend    float64 // log-scale level change per block
}

var noiseModels = []noiseModel{
	{name: "quiet", sigma: 0.02, outlierP: 0.02, drift: 0.01, trend: 0.01},
	{name: "noisy", sigma: 0.10, outlierP: 0.10, drift: 0.05, trend: 0.03},
}

func (m noiseModel) blocks(rng *rand.Rand, n int, ratio float64) (base, cand []float64) {
	base, cand = make([]float64, n), make([]float64, n)
	one := func(level float64) float64 {
		v := level * math.Exp(m.sigma*rng.NormFloat64())
		if rng.Float64() < m.outlierP {
			v *= 1.5 + 1.5*rng.Float64()
		}
		return v
	}
	for b := range n {
		level := 1e6 * math.Exp(m.trend*float64(b))
		base[b], cand[b] = one(level), ratio*one(level)
		slow := math.Exp(math.Abs(m.drift * rng.NormFloat64()))
		if rng.IntN(2) == 0 {
			cand[b] *= slow
		} else {
			base[b] *= slow
		}
	}
	return base, cand
}

// simCell is one configuration: a method, a noise model, a block count
// and a true ratio, over many experiments.
type simCell struct {
	method      string
	model       noiseModel
	blocks      int
	ratio       float64
	experiments int
	resamples   int
}

type simResult struct {
	runs, degenerate, covered int
	meaningful0, meaningful5  int // any meaningful verdict at threshold 0 and 0.05
	improved0, improved5      int
	equivalent5               int
}

func (r simResult) rate(k int) float64 { return float64(k) / float64(r.runs) }

// run draws the cell's experiments through the comparison's own code:
// PairedLogRatios, MedianInterval, Ratio and Decide. Experiment e of every
// cell uses data seed e and bootstrap seed e, so two methods see the same
// data.
func (c simCell) run(t testing.TB) simResult {
	var res simResult
	for e := range c.experiments {
		rng := rand.New(rand.NewPCG(uint64(e), uint64(c.blocks)<<32|uint64(math.Float64bits(c.ratio)>>40)^math.Float64bits(c.model.sigma)))
		base, cand := c.model.blocks(rng, c.blocks, c.ratio)
		lr, err := PairedLogRatios(base, cand)
		if err != nil {
			t.Fatal(err)
		}
		iv, err := MedianInterval(lr, Options{Seed: uint64(e), Method: c.method, Resamples: c.resamples})
		if err != nil {
			t.Fatal(err)
		}
		r := Ratio(iv)
		res.runs++
		if r.Degenerate {
			res.degenerate++
		} else if r.Lo <= c.ratio && c.ratio <= r.Hi {
			res.covered++
		}
		for _, th := range []float64{0, 0.05} {
			d, err := Decide(r, th, LowerIsBetter)
			if err != nil {
				t.Fatal(err)
			}
			meaningful := d == MeaningfulImprovement || d == MeaningfulRegression
			switch {
			case th == 0 && meaningful:
				res.meaningful0++
			case th > 0 && meaningful:
				res.meaningful5++
			}
			if d == MeaningfulImprovement {
				if th == 0 {
					res.improved0++
				} else {
					res.improved5++
				}
			}
			if d == NoMeaningfulDifference {
				res.equivalent5++
			}
		}
	}
	return res
}

func runCells(t testing.TB, cells []simCell) []simResult {
	out := make([]simResult, len(cells))
	var wg sync.WaitGroup
	next := make(chan int)
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for i := range next {
				out[i] = cells[i].run(t)
			}
		})
	}
	for i := range cells {
		next <- i
	}
	close(next)
	wg.Wait()
	return out
}

// TestSimulationCI is the CI-sized calibration check: A/A experiments
// must rarely be called meaningful and their intervals must cover the
// true ratio near the nominal rate; a 20% effect must be found. Seeds
// are fixed, so the outcome is the same on every run; the bounds are
// loose so that a change of generator or float rounding cannot tip them.
func TestSimulationCI(t *testing.T) {
	var cells []simCell
	for _, m := range allMethods {
		for _, model := range noiseModels {
			cells = append(cells,
				simCell{method: m, model: model, blocks: 20, ratio: 1, experiments: 200, resamples: 999},
				simCell{method: m, model: model, blocks: 20, ratio: 0.8, experiments: 50, resamples: 999},
				simCell{method: m, model: model, blocks: 5, ratio: 1, experiments: 20, resamples: 999})
		}
	}
	res := runCells(t, cells)
	for i, c := range cells {
		r := res[i]
		name := fmt.Sprintf("%s/%s/%d blocks/ratio %g", c.method, c.model.name, c.blocks, c.ratio)
		t.Logf("%s: coverage %.3f, meaningful@0 %.3f, improved@0 %.3f, degenerate %d", name, r.rate(r.covered), r.rate(r.meaningful0), r.rate(r.improved0), r.degenerate)
		switch {
		case c.blocks < MinMedianN(DefaultConfidence):
			if r.degenerate != r.runs || r.meaningful0 != 0 || r.equivalent5 != 0 {
				t.Errorf("%s: %d blocks gave a confident interval: %+v", name, c.blocks, r)
			}
		case c.ratio == 1:
			if r.rate(r.meaningful0) > 0.10 {
				t.Errorf("%s: A/A called meaningful at rate %.3f", name, r.rate(r.meaningful0))
			}
			if cov := r.rate(r.covered); cov < 0.88 || cov > 0.995 {
				t.Errorf("%s: coverage %.3f, want near 0.95", name, cov)
			}
		default:
			if r.meaningful0 != r.improved0 || r.rate(r.improved0) < 0.9 {
				t.Errorf("%s: a 20%% improvement found at rate %.3f (%d regressions)", name, r.rate(r.improved0), r.meaningful0-r.improved0)
			}
		}
	}
}

// TestSimulation is the full calibration run behind docs/statistics.md;
// it prints Markdown tables and runs only with -sim=full.
func TestSimulation(t *testing.T) {
	if *simMode != "full" {
		t.Skip("the full calibration simulation runs with -sim=full")
	}
	const aa, effect, resamples = 1000, 500, DefaultResamples
	blockCounts := []int{5, 6, 10, 20, 40}
	ratios := []float64{0.95, 0.90, 0.80}
	var cells []simCell
	for _, m := range strings.Split(*simMethods, ",") {
		for _, model := range noiseModels {
			for _, n := range blockCounts {
				cells = append(cells, simCell{method: m, model: model, blocks: n, ratio: 1, experiments: aa, resamples: resamples})
				for _, r := range ratios {
					cells = append(cells, simCell{method: m, model: model, blocks: n, ratio: r, experiments: effect, resamples: resamples})
				}
			}
		}
	}
	res := runCells(t, cells)
	var b strings.Builder
	fmt.Fprintf(&b, "\nA/A (%d experiments per row, %d resamples, 95%% confidence)\n\n", aa, resamples)
	b.WriteString("| method | noise | blocks | coverage | meaningful, threshold 0 | meaningful, threshold 0.05 | no_meaningful_difference, 0.05 | degenerate |\n|---|---|---|---|---|---|---|---|\n")
	for i, c := range cells {
		if c.ratio != 1 {
			continue
		}
		r := res[i]
		fmt.Fprintf(&b, "| %s | %s | %d | %.1f%% | %.1f%% | %.1f%% | %.1f%% | %.0f%% |\n", c.method, c.model.name, c.blocks,
			100*r.rate(r.covered), 100*r.rate(r.meaningful0), 100*r.rate(r.meaningful5), 100*r.rate(r.equivalent5), 100*r.rate(r.degenerate))
	}
	fmt.Fprintf(&b, "\nPower: meaningful_improvement for a known effect, lower is better (%d experiments per cell; threshold 0 / 0.05; coverage of the true ratio)\n\n", effect)
	b.WriteString("| method | noise | blocks | 5% faster | 10% faster | 20% faster |\n|---|---|---|---|---|---|\n")
	for i := 0; i < len(cells); i++ {
		c := cells[i]
		if c.ratio != 1 {
			continue
		}
		fmt.Fprintf(&b, "| %s | %s | %d |", c.method, c.model.name, c.blocks)
		for j := range ratios {
			r := res[i+1+j]
			fmt.Fprintf(&b, " %.0f%% / %.0f%% (cov %.1f%%) |", 100*r.rate(r.improved0), 100*r.rate(r.improved5), 100*r.rate(r.covered))
		}
		b.WriteString("\n")
	}
	t.Log(b.String())
}
