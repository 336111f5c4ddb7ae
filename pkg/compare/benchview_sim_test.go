package compare

import (
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/flameox/flameox/pkg/query"
	"gonum.org/v1/gonum/stat/distuv"
)

// The benchstat view's calibration simulation (docs/statistics.md, "The
// benchstat view"). Without -sim it runs a CI-sized version with fixed
// seeds, deterministic and so unable to flake; -sim=full (the flag pkg/stats
// defines for its own simulation) runs the figures the document reports:
//
//	go test ./pkg/compare -run TestSimulationBenchView -sim=full -v
var simMode = flag.String("sim", "", `benchstat-view calibration simulation size: "" (CI-sized) or "full" (the figures in docs/statistics.md)`)

// runNoise is how the values of one run are drawn: each is the code's
// level times lognormal noise, an outlier multiplies a value by 1.5 to 3,
// and the run that goes second (a coin flip) is slowed as a whole by
// |N(0, runDrift)| on the log scale: the order effect two unpaired runs
// cannot cancel (a warmer machine, another tenant). Every term is
// symmetric between the runs, so over experiments the truth is the effect
// put in; within one experiment the drift is a real difference between
// the two runs that is not the code's.
type runNoise struct {
	name     string
	sigma    float64 // lognormal noise of one value
	outlierP float64 // chance a value is an outlier
	runDrift float64 // slowdown of the run that goes second
}

// The quiet and noisy models are pkg/stats' (their within-block drift is
// the run drift here); without run drift the values are independent and
// identically distributed within a run, what benchstat's U test assumes.
var runNoises = []runNoise{
	{name: "quiet", sigma: 0.02, outlierP: 0.02},
	{name: "noisy", sigma: 0.10, outlierP: 0.10},
	{name: "quiet, run drift", sigma: 0.02, outlierP: 0.02, runDrift: 0.01},
	{name: "noisy, run drift", sigma: 0.10, outlierP: 0.10, runDrift: 0.05},
}

const simLevel = 1e-6 // the baseline code's level, in sec/op

func (m runNoise) draw(rng *rand.Rand, n int, level float64) []float64 {
	xs := make([]float64, n)
	for i := range xs {
		x := level * math.Exp(m.sigma*rng.NormFloat64())
		if rng.Float64() < m.outlierP {
			x *= 1.5 + 1.5*rng.Float64()
		}
		xs[i] = x
	}
	return xs
}

// median is the population median of one value (before any run drift)
// at level 1: the root of the mixture's distribution function, the
// outlier part integrated over its uniform factor by the midpoint rule.
func (m runNoise) median() float64 {
	norm := distuv.UnitNormal
	cdf := func(x float64) float64 {
		lx := math.Log(x)
		const k = 2000
		out := 0.0
		for i := range k {
			u := 1.5 + 1.5*(float64(i)+0.5)/k
			out += norm.CDF((lx - math.Log(u)) / m.sigma)
		}
		return (1-m.outlierP)*norm.CDF(lx/m.sigma) + m.outlierP*out/k
	}
	lo, hi := 0.5, 2.0
	for range 100 {
		mid := (lo + hi) / 2
		if cdf(mid) < 0.5 {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// benchValues are one run's values as the gotest extractor stores them
// (benchview_test.go's valuesOf): file configuration, the name without
// its GOMAXPROCS suffix, one value per line.
func benchValues(xs []float64) []query.BenchValue {
	config := map[string]string{"goos": "linux", "goarch": "amd64", "pkg": "example.com/sim"}
	out := make([]query.BenchValue, len(xs))
	for i, x := range xs {
		out[i] = query.BenchValue{Producer: "gobench", Worker: "example.com/sim", Config: config, Subject: "BenchmarkSim", Procs: "8", Unit: "sec/op", Value: x}
	}
	return out
}

// benchSimCell is one configuration: a noise model, n values per run and
// the candidate's true ratio, over many experiments.
type benchSimCell struct {
	model       runNoise
	n           int
	ratio       float64
	experiments int
}

type benchSimResult struct {
	runs, significant        int // significant: benchstat's delta is not "~"
	meaningful0, meaningful5 int // meaningful_improvement or _regression at threshold 0, 0.05
	improved0, improved5     int
	regressed0               int
	noDifference5            int // no_meaningful_difference at 0.05
	intervals, covered       int // finite median intervals (both sides) and those holding the true median
	ratioBounds, ratioHeld   int // finite bounds of the ratio (ratioBounds) and those holding the true ratio
}

func (r benchSimResult) rate(k int) float64 { return float64(k) / float64(r.runs) }

func (r benchSimResult) coverage() float64 {
	if r.intervals == 0 {
		return math.NaN()
	}
	return float64(r.covered) / float64(r.intervals)
}

func (r benchSimResult) ratioCoverage() float64 {
	if r.ratioBounds == 0 {
		return math.NaN()
	}
	return float64(r.ratioHeld) / float64(r.ratioBounds)
}

func pct(x float64) string {
	if math.IsNaN(x) {
		return "none"
	}
	return fmt.Sprintf("%.1f%%", 100*x)
}

// run draws the cell's experiments through BuildBenchView, at threshold 0
// and 0.05. Experiment e of every cell of one model and n uses data seed
// e, so the effects differ only by the ratio put in.
func (c benchSimCell) run() (benchSimResult, error) {
	var res benchSimResult
	med := c.model.median()
	for e := range c.experiments {
		rng := rand.New(rand.NewPCG(uint64(e), uint64(c.n)<<32^math.Float64bits(c.model.sigma)^math.Float64bits(c.model.runDrift)>>1))
		a := c.model.draw(rng, c.n, simLevel)
		b := c.model.draw(rng, c.n, c.ratio*simLevel)
		slow := math.Exp(math.Abs(c.model.runDrift * rng.NormFloat64()))
		second := b
		if rng.IntN(2) == 0 {
			second = a
		}
		for i := range second {
			second[i] *= slow
		}
		res.runs++
		for _, th := range []float64{0, 0.05} {
			v, err := BuildBenchView(BenchRequest{RunA: "a", RunB: "b", Threshold: th}, benchValues(a), benchValues(b))
			if err != nil {
				return res, err
			}
			if len(v.Rows) != 1 || v.Rows[0].Old == nil || v.Rows[0].New == nil {
				return res, fmt.Errorf("want one compared row, got %+v", v.Rows)
			}
			r := v.Rows[0]
			if (r.Delta == "~") == r.Significant {
				return res, fmt.Errorf("delta %q but significant %v (p %v)", r.Delta, r.Significant, r.P)
			}
			meaningful := r.Decision == decImprovement || r.Decision == decRegression
			if th == 0 {
				if r.Significant {
					res.significant++
				}
				if meaningful {
					res.meaningful0++
				}
				switch r.Decision {
				case decImprovement:
					res.improved0++
				case decRegression:
					res.regressed0++
				}
				for side, s := range []*CellSummary{r.Old, r.New} {
					if s.Lo == nil || s.Hi == nil {
						continue
					}
					truth := med * simLevel
					if side == 1 {
						truth *= c.ratio
					}
					res.intervals++
					if *s.Lo <= truth && truth <= *s.Hi {
						res.covered++
					}
				}
				if r.Old.Lo != nil && r.Old.Hi != nil && r.New.Lo != nil && r.New.Hi != nil && *r.Old.Lo > 0 {
					res.ratioBounds++
					if *r.New.Lo / *r.Old.Hi <= c.ratio && c.ratio <= *r.New.Hi / *r.Old.Lo {
						res.ratioHeld++
					}
				}
				continue
			}
			if meaningful {
				res.meaningful5++
			}
			switch r.Decision {
			case decImprovement:
				res.improved5++
			case decNoDifference:
				res.noDifference5++
			}
		}
	}
	return res, nil
}

// runBenchSimCells runs the cells on every CPU; the first error fails t
// from the test's own goroutine.
func runBenchSimCells(t testing.TB, cells []benchSimCell) []benchSimResult {
	t.Helper()
	out := make([]benchSimResult, len(cells))
	errs := make([]error, len(cells))
	var wg sync.WaitGroup
	next := make(chan int)
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for i := range next {
				out[i], errs[i] = cells[i].run()
			}
		})
	}
	for i := range cells {
		next <- i
	}
	close(next)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestSimulationBenchViewCI is the CI-sized calibration of the benchstat
// view on values that meet its assumption (no run drift): A/A rarely
// significant or meaningful, each side's median interval covering the
// true median near or above 95%, a 20% effect found, and 5 values a side
// never decided. Seeds are fixed, so the outcome is the same on every
// run; the bounds are loose so that a change of generator or rounding
// cannot tip them.
func TestSimulationBenchViewCI(t *testing.T) {
	var cells []benchSimCell
	for _, m := range runNoises[:2] {
		cells = append(cells,
			benchSimCell{model: m, n: 20, ratio: 1, experiments: 200},
			benchSimCell{model: m, n: 20, ratio: 0.8, experiments: 50},
			benchSimCell{model: m, n: 5, ratio: 0.8, experiments: 20})
	}
	res := runBenchSimCells(t, cells)
	for i, c := range cells {
		r := res[i]
		name := fmt.Sprintf("%s/%d values/ratio %g", c.model.name, c.n, c.ratio)
		t.Logf("%s: significant %.3f, meaningful@0 %.3f, improved@0 %.3f, coverage %.3f of %d", name, r.rate(r.significant), r.rate(r.meaningful0), r.rate(r.improved0), r.coverage(), r.intervals)
		switch {
		case c.n < 6:
			if r.meaningful0 != 0 || r.meaningful5 != 0 || r.noDifference5 != 0 || r.intervals != 0 {
				t.Errorf("%s: %d values a side gave a decision or an interval: %+v", name, c.n, r)
			}
		case c.ratio == 1:
			if r.rate(r.significant) > 0.10 || r.rate(r.meaningful0) > 0.10 {
				t.Errorf("%s: A/A significant at rate %.3f, meaningful %.3f", name, r.rate(r.significant), r.rate(r.meaningful0))
			}
			if cov := r.coverage(); !(cov >= 0.9 && cov <= 0.995) {
				t.Errorf("%s: median interval coverage %.3f, want near 0.96", name, cov)
			}
			if cov := r.ratioCoverage(); !(cov >= 0.95) {
				t.Errorf("%s: the ratio's bounds cover the true ratio at rate %.3f, want at least 0.95", name, cov)
			}
		default:
			if r.regressed0 != 0 || r.rate(r.improved0) < 0.9 {
				t.Errorf("%s: a 20%% improvement found at rate %.3f (%d regressions)", name, r.rate(r.improved0), r.regressed0)
			}
		}
	}
}

// TestSimulationBenchView is the full calibration run behind
// docs/statistics.md; it prints Markdown tables and runs only with
// -sim=full.
func TestSimulationBenchView(t *testing.T) {
	if *simMode != "full" {
		t.Skip("the full calibration simulation runs with -sim=full")
	}
	const aa, effect = 1000, 500
	ns := []int{5, 6, 10, 20}
	ratios := []float64{0.95, 0.90, 0.80}
	var cells []benchSimCell
	for _, m := range runNoises {
		for _, n := range ns {
			cells = append(cells, benchSimCell{model: m, n: n, ratio: 1, experiments: aa})
			for _, r := range ratios {
				cells = append(cells, benchSimCell{model: m, n: n, ratio: r, experiments: effect})
			}
		}
	}
	res := runBenchSimCells(t, cells)
	var b strings.Builder
	fmt.Fprintf(&b, "\nA/A (%d experiments per row, two unpaired runs of n values, 95%% confidence)\n\n", aa)
	b.WriteString("| noise | n per run | significant (not ~) | meaningful, threshold 0 | meaningful, threshold 0.05 | no_meaningful_difference, 0.05 | median interval coverage | ratio bounds coverage |\n|---|---|---|---|---|---|---|---|\n")
	for i, c := range cells {
		if c.ratio != 1 {
			continue
		}
		r := res[i]
		fmt.Fprintf(&b, "| %s | %d | %.1f%% | %.1f%% | %.1f%% | %.1f%% | %s | %s |\n", c.model.name, c.n,
			100*r.rate(r.significant), 100*r.rate(r.meaningful0), 100*r.rate(r.meaningful5), 100*r.rate(r.noDifference5), pct(r.coverage()), pct(r.ratioCoverage()))
	}
	fmt.Fprintf(&b, "\nPower: meaningful_improvement for a known effect, lower is better (%d experiments per cell; threshold 0 / 0.05; no_meaningful_difference at 0.05)\n\n", effect)
	b.WriteString("| noise | n per run | 5% faster | 10% faster | 20% faster |\n|---|---|---|---|---|\n")
	for i := 0; i < len(cells); i++ {
		c := cells[i]
		if c.ratio != 1 {
			continue
		}
		fmt.Fprintf(&b, "| %s | %d |", c.model.name, c.n)
		for j := range ratios {
			r := res[i+1+j]
			fmt.Fprintf(&b, " %.0f%% / %.0f%% (nmd %.0f%%) |", 100*r.rate(r.improved0), 100*r.rate(r.improved5), 100*r.rate(r.noDifference5))
		}
		b.WriteString("\n")
	}
	t.Log(b.String())
}
