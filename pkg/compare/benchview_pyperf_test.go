package compare

import (
	"context"
	"encoding/json"
	"math"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flameox/flameox/pkg/internal/testenv"
	"github.com/flameox/flameox/pkg/query"
)

// pyperfMedians asks the real pyperf for each benchmark's median and
// number of values, per file.
func pyperfMedians(t *testing.T, files ...string) map[string]map[string][2]float64 {
	t.Helper()
	py := testenv.LookPath(t, "python3")
	if err := exec.Command(py, "-c", "import pyperf").Run(); err != nil {
		testenv.Unable(t, "pyperf", "not installed")
	}
	const script = `import json, sys, pyperf
print(json.dumps({p: {b.get_name(): [b.median(), b.get_nvalue()] for b in pyperf.BenchmarkSuite.load(p)} for p in sys.argv[1:]}))`
	out, err := exec.Command(py, append([]string{"-c", script}, files...)...).Output()
	if err != nil {
		t.Fatalf("pyperf: %v", err)
	}
	var res map[string]map[string][2]float64
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	return res
}

// TestCompareRunsPyperf: two pyperf runs compare benchmark by benchmark,
// each side's median and n those of pyperf itself, and a significant
// delta points the way the medians moved.
func TestCompareRunsPyperf(t *testing.T) {
	oldFile, _ := filepath.Abs("testdata/pyperf__mult_list_py36.json")
	newFile, _ := filepath.Abs("testdata/pyperf__mult_list_py37_tags.json")
	want := pyperfMedians(t, oldFile, newFile)
	ws, ids := importRuns(t, oldFile, newFile)
	v, err := CompareRuns(context.Background(), ws, BenchRequest{RunA: ids[0], RunB: ids[1], Limit: query.MaxLimit})
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Rows) != len(want[oldFile]) {
		t.Fatalf("%d rows, pyperf has %d benchmarks", len(v.Rows), len(want[oldFile]))
	}
	for _, r := range v.Rows {
		if r.Old == nil || r.New == nil || r.Unit != "sec" || r.Polarity != polLower {
			t.Fatalf("%s: %+v", r.Benchmark, r)
		}
		for _, side := range []struct {
			s    *CellSummary
			file string
		}{{r.Old, oldFile}, {r.New, newFile}} {
			w := want[side.file][r.Benchmark]
			if math.Abs(*side.s.Center-w[0]) > 1e-9*w[0] || float64(side.s.N) != w[1] {
				t.Errorf("%s: median %v n %d, pyperf %v n %v", r.Benchmark, *side.s.Center, side.s.N, w[0], w[1])
			}
		}
		if r.Significant && strings.HasPrefix(r.Delta, "-") != (*r.New.Center < *r.Old.Center) {
			t.Errorf("%s: delta %s but medians %v -> %v", r.Benchmark, r.Delta, *r.Old.Center, *r.New.Center)
		}
	}
}
