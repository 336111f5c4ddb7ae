package stats

import (
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// The scaling simulation (docs/scaling.md): five growth laws, each
// y = a + b·g(n) with a fixed part of 20% of the cost at the smallest
// size, measured with lognormal noise at three levels, fitted and chosen
// through FitScaling, the code `flameox analyze scaling` runs. Without
// -scaling-sim it runs a CI-sized, fixed-seed version; -scaling-sim=full
// prints the confusion tables the document reports:
//
//	go test ./pkg/stats -run TestScalingSimulation -scaling-sim=full -v
var scalingSim = flag.String("scaling-sim", "", `scaling simulation size: "" (CI-sized) or "full" (the tables in docs/scaling.md)`)

var scalingNoise = []struct {
	name  string
	sigma float64
}{{"low", 0.01}, {"medium", 0.05}, {"high", 0.20}}

type scalingCell struct {
	law         string
	sigma       float64
	noise       string
	sizes       int // doubling from 1024
	blocks      int // trials per size
	experiments int
}

// scalingOutcome counts how the cell's experiments were decided.
type scalingOutcome struct {
	runs    int
	chosen  map[string]int
	indist  int
	inconc  int
	covered int // indistinguishable sets holding the true law
}

func (c scalingCell) sizesList() []float64 {
	out := make([]float64, c.sizes)
	for i := range out {
		out[i] = 1024 * math.Pow(2, float64(i))
	}
	return out
}

func (c scalingCell) run() scalingOutcome {
	ns := c.sizesList()
	o := scalingOutcome{chosen: map[string]int{}}
	truth := func(n float64) float64 {
		if c.law == ModelConstant {
			return 1e6
		}
		g0, _ := Growth(c.law, ns[0])
		g, _ := Growth(c.law, n)
		return 1e6 * (0.2 + 0.8*g/g0)
	}
	lawIndex := slices.Index(Models, c.law)
	for e := range c.experiments {
		rng := rand.New(rand.NewPCG(uint64(e), uint64(lawIndex)<<48|uint64(c.sizes)<<32|uint64(c.blocks)<<16|uint64(math.Float64bits(c.sigma)>>48)))
		var n, y []float64
		for b := 0; b < c.blocks; b++ {
			for _, x := range ns {
				n = append(n, x)
				y = append(y, truth(x)*math.Exp(c.sigma*rng.NormFloat64()))
			}
		}
		_, _, ch := FitScaling(n, y, nil, ChooseOptions{})
		o.runs++
		switch ch.Decision {
		case Chosen:
			o.chosen[ch.Model]++
		case Indistinguishable:
			o.indist++
			if slices.Contains(ch.Candidates, c.law) {
				o.covered++
			}
		default:
			o.inconc++
		}
	}
	return o
}

func (o scalingOutcome) wrong(law string) int {
	w := 0
	for m, k := range o.chosen {
		if m != law {
			w += k
		}
	}
	return w
}

func scalingCells(designs [][2]int, experiments int) []scalingCell {
	var cells []scalingCell
	for _, d := range designs {
		for _, nz := range scalingNoise {
			for _, law := range Models {
				cells = append(cells, scalingCell{law: law, sigma: nz.sigma, noise: nz.name, sizes: d[0], blocks: d[1], experiments: experiments})
			}
		}
	}
	return cells
}

// TestScalingSimulationCI: no experiment chooses a wrong model; with low
// noise a linear or quadratic law is chosen most of the time; an
// indistinguishable set almost always holds the true law. Seeds are
// fixed, so the outcome is the same on every run.
func TestScalingSimulationCI(t *testing.T) {
	for _, c := range scalingCells([][2]int{{4, 3}, {3, 1}}, 100) {
		o := c.run()
		name := fmt.Sprintf("%s/%s/%d sizes × %d", c.law, c.noise, c.sizes, c.blocks)
		t.Logf("%s: chosen %v, indistinguishable %d (holding the truth %d), inconclusive %d", name, o.chosen, o.indist, o.covered, o.inconc)
		if w := o.wrong(c.law); w != 0 {
			t.Errorf("%s: %d experiments chose a wrong model: %v", name, w, o.chosen)
		}
		if c.blocks == 1 && o.runs-o.inconc-o.indist != 0 {
			t.Errorf("%s: no replicates, yet %d chosen", name, o.runs-o.inconc-o.indist)
		}
		if c.sigma == 0.01 && c.blocks > 1 && (c.law == ModelLinear || c.law == ModelQuadratic) && o.chosen[c.law] < o.runs*8/10 {
			t.Errorf("%s: the true law chosen in %d of %d", name, o.chosen[c.law], o.runs)
		}
		if o.indist > 0 && o.covered < o.indist*9/10 {
			t.Errorf("%s: %d of %d indistinguishable sets miss the truth", name, o.indist-o.covered, o.indist)
		}
	}
}

// TestScalingSimulation prints the full confusion tables (-scaling-sim=full).
func TestScalingSimulation(t *testing.T) {
	if *scalingSim != "full" {
		t.Skip("the full scaling simulation runs with -scaling-sim=full")
	}
	const experiments = 1000
	designs := [][2]int{{3, 3}, {3, 5}, {4, 3}, {5, 1}, {5, 3}}
	var b strings.Builder
	fmt.Fprintf(&b, "\n%d experiments per row; lognormal noise σ = 0.01 (low), 0.05 (medium), 0.20 (high); sizes doubling from 1024; a fixed part of 20%% at the smallest size\n\n", experiments)
	b.WriteString("| sizes × trials | noise | true law | constant | log | linear | n_log_n | quadratic | indistinguishable (holding the truth) | inconclusive | wrong |\n|---|---|---|---|---|---|---|---|---|---|---|\n")
	totalWrong, total := 0, 0
	for _, c := range scalingCells(designs, experiments) {
		o := c.run()
		pct := func(k int) string { return fmt.Sprintf("%.1f%%", 100*float64(k)/float64(o.runs)) }
		fmt.Fprintf(&b, "| %d × %d | %s | %s |", c.sizes, c.blocks, c.noise, c.law)
		for _, m := range Models {
			fmt.Fprintf(&b, " %s |", pct(o.chosen[m]))
		}
		fmt.Fprintf(&b, " %s (%s) | %s | %d |\n", pct(o.indist), pct(o.covered), pct(o.inconc), o.wrong(c.law))
		totalWrong += o.wrong(c.law)
		total += o.runs
	}
	fmt.Fprintf(&b, "\nwrong choices: %d of %d experiments\n", totalWrong, total)
	t.Log(b.String())
}
