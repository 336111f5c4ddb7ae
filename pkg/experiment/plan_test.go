package experiment_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/flameox/flameox/pkg/experiment"
	"github.com/flameox/flameox/pkg/workload"
)

const file = `schema_version = 1
[workloads.scan]
argv = ["python3", "scan.py", "{impl}", "{n}"]
[workloads.scan.parameters]
impl = ["baseline", "candidate", "broken"]
n = [32768, 65536, 131072]

[experiments.cmp]
workload = "scan"
variants = ["baseline", "candidate"]
treatment_parameter = "impl"
scaling_parameter = "n"
scaling_values = [32768, 131072]
blocks = 10
random_seed = %d
design = "%s"
`

func plan(t *testing.T, seed int64, design string) *experiment.Plan {
	t.Helper()
	f, err := workload.Parse(fmt.Sprintf(file, seed, design), workload.FileName)
	if err != nil {
		t.Fatal(err)
	}
	e, _ := f.Experiment("cmp")
	w, _ := f.Workload("scan")
	p, err := experiment.PlanFor(e, w, "process", "", "")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func order(p *experiment.Plan) []string {
	var out []string
	for _, tr := range p.Trials {
		out = append(out, tr.Parameters["impl"]+"/"+tr.Parameters["n"])
	}
	return out
}

// TestSeedReproducesOrder: the same seed gives the same order, a
// different seed another one, and the first blocks of seed 7 are pinned:
// a change to the generator or the shuffle would reorder recorded
// experiments and must bump RecipeVersion instead.
func TestSeedReproducesOrder(t *testing.T) {
	a, b := plan(t, 7, workload.DesignRCB), plan(t, 7, workload.DesignRCB)
	if !slices.Equal(order(a), order(b)) || a.DesignID != b.DesignID {
		t.Fatalf("seed 7 planned twice differs:\n%v\n%v", order(a), order(b))
	}
	c := plan(t, 8, workload.DesignRCB)
	if slices.Equal(order(a), order(c)) {
		t.Fatalf("seeds 7 and 8 give the same order %v", order(a))
	}
	if a.DesignID == c.DesignID {
		t.Fatal("the design id does not bind the seed")
	}
	got := strings.Join(order(a)[:8], " ")
	const want = "candidate/32768 candidate/131072 baseline/32768 baseline/131072 candidate/32768 baseline/131072 candidate/131072 baseline/32768"
	if got != want {
		t.Fatalf("seed 7's first two blocks are\n%s\nwant\n%s", got, want)
	}
}

// TestCompleteBlocks: every block holds every combination exactly once,
// numbered 1..k in order, whatever the design.
func TestCompleteBlocks(t *testing.T) {
	for _, design := range []string{workload.DesignRCB, workload.DesignFixedOrder} {
		p := plan(t, 42, design)
		if len(p.Trials) != 10*4 {
			t.Fatalf("%s: %d trials, want 40", design, len(p.Trials))
		}
		for b := 1; b <= 10; b++ {
			seen := map[string]int{}
			var pos []int
			for _, tr := range p.Trials {
				if tr.Block == b {
					seen[tr.CombinationID]++
					pos = append(pos, tr.OrderInBlock)
					if tr.Variant != tr.Parameters["impl"] || tr.BlockID != experiment.BlockID(b) {
						t.Fatalf("%s: trial %+v is inconsistent", design, tr)
					}
				}
			}
			if len(seen) != 4 || !slices.Equal(pos, []int{1, 2, 3, 4}) {
				t.Fatalf("%s block %d: combinations %v, positions %v", design, b, seen, pos)
			}
			for id, n := range seen {
				if n != 1 {
					t.Fatalf("%s block %d: combination %s runs %d times", design, b, id, n)
				}
			}
		}
		for i, tr := range p.Trials {
			if tr.Index != i+1 {
				t.Fatalf("%s: trial %d has index %d", design, i+1, tr.Index)
			}
		}
	}
	fixed := order(plan(t, 42, workload.DesignFixedOrder))
	if got := strings.Join(fixed[:4], " "); got != "baseline/32768 baseline/131072 candidate/32768 candidate/131072" {
		t.Fatalf("fixed_order block is %s", got)
	}
}

// TestShuffleUniform: over many seeds each of the 3! orders of three
// items comes up about equally often (a biased bounded draw or an
// off-by-one in Fisher–Yates shows as a skew far past chance).
func TestShuffleUniform(t *testing.T) {
	counts := map[string]int{}
	const n = 60000
	for s := range uint64(n) {
		xs := []int{0, 1, 2}
		experiment.Shuffle(xs, [2]uint64{s, 1})
		counts[fmt.Sprint(xs)]++
	}
	if len(counts) != 6 {
		t.Fatalf("only %d of 6 orders seen: %v", len(counts), counts)
	}
	for k, c := range counts {
		// Expected 10000, sd ≈ 91; 6 sd either way.
		if c < 10000-550 || c > 10000+550 {
			t.Fatalf("order %s came up %d times of %d: %v", k, c, n, counts)
		}
	}
}

// TestExcludeAndExplicit: excluded combinations never run; explicit ones
// run exactly as listed; each block still holds each of them once.
func TestExcludeAndExplicit(t *testing.T) {
	head := `schema_version = 1
[workloads.scan]
argv = ["scan", "{impl}", "{n}"]
[workloads.scan.parameters]
impl = ["baseline", "candidate"]
n = [1, 2, 3]
[experiments.cmp]
workload = "scan"
factors = { impl = ["baseline", "candidate"], n = [1, 2, 3] }
treatment_parameter = "impl"
blocks = 3
`
	for _, tt := range []struct {
		name, extra string
		want        []string
		err         string
	}{
		{"exclude", `exclude = [{impl = "candidate", n = 3}, {n = 1}]`, []string{"baseline/2", "baseline/3", "candidate/2"}, ""},
		{"explicit", "combinations = \"explicit\"\ninclude = [{impl = \"candidate\", n = 3}, {impl = \"baseline\", n = 1}]", []string{"candidate/3", "baseline/1"}, ""},
		{"unknown value", `exclude = [{n = 4}]`, nil, "not one of the factor's values"},
		{"partial explicit", "combinations = \"explicit\"\ninclude = [{impl = \"candidate\"}]", nil, "must name every factor"},
		{"everything excluded", `exclude = [{impl = "baseline"}, {impl = "candidate"}]`, nil, "excludes every combination"},
		{"include without explicit", `include = [{impl = "baseline", n = 1}]`, nil, "needs combinations"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f, err := workload.Parse(head+tt.extra+"\n", workload.FileName)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			e, _ := f.Experiment("cmp")
			w, _ := f.Workload("scan")
			p, err := experiment.PlanFor(e, w, "process", "", "")
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Trials) != 3*len(tt.want) || p.Cells != len(tt.want) {
				t.Fatalf("%d trials (%d per block), want %d per block", len(p.Trials), p.Cells, len(tt.want))
			}
			var cells []string
			for _, c := range experiment.Cells(p) {
				cells = append(cells, c["impl"]+"/"+c["n"])
			}
			if !slices.Equal(cells, tt.want) {
				t.Fatalf("cells %v, want %v", cells, tt.want)
			}
			for b := 1; b <= 3; b++ {
				seen := map[string]bool{}
				for _, tr := range p.Trials {
					if tr.Block == b {
						seen[tr.Parameters["impl"]+"/"+tr.Parameters["n"]] = true
					}
				}
				if len(seen) != len(tt.want) {
					t.Fatalf("block %d holds %v", b, seen)
				}
			}
		})
	}
}
