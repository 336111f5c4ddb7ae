package query

import (
	"encoding/json"
	"math"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/flameox/flameox/pkg/internal/testenv"
)

// pyperfScript prints, for each file, each benchmark's median and number
// of values as pyperf itself computes them (Benchmark.median: over the
// values of every run, warm-ups and calibration runs left out).
const pyperfScript = `import json, sys, pyperf
out = {}
for path in sys.argv[1:]:
    out[path] = {b.get_name(): [b.median(), b.get_nvalue()] for b in pyperf.BenchmarkSuite.load(path)}
print(json.dumps(out))
`

// pyperfMedians runs the real pyperf on files, or skips (fails under
// CI=true) without it.
func pyperfMedians(t *testing.T, files []string) map[string]map[string][2]float64 {
	t.Helper()
	py := testenv.LookPath(t, "python3")
	if err := exec.Command(py, "-c", "import pyperf").Run(); err != nil {
		testenv.Unable(t, "pyperf", "not installed")
	}
	out, err := exec.Command(py, append([]string{"-c", pyperfScript}, files...)...).Output()
	if err != nil {
		t.Fatalf("pyperf: %v", err)
	}
	var res map[string]map[string][2]float64
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	return res
}

// TestSummaryEqualsPyperf imports every pyperf fixture and checks every
// summary row against pyperf on the same file: one row per benchmark
// (its worker processes pooled, as pyperf pools them), pyperf's median,
// and n equal to pyperf's number of values.
func TestSummaryEqualsPyperf(t *testing.T) {
	files, _ := filepath.Glob("testdata/pyperf__*")
	if len(files) == 0 {
		t.Fatal("no pyperf fixtures")
	}
	for i, f := range files {
		files[i], _ = filepath.Abs(f)
	}
	want := pyperfMedians(t, files)
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			// Small pages, so the cursor is followed to the end.
			rows := summaryOfFile(t, file, 2)
			benches := want[file]
			if len(rows) != len(benches) {
				t.Fatalf("%d summary rows, pyperf has %d benchmarks: %+v", len(rows), len(benches), rows)
			}
			for _, r := range rows {
				w, ok := benches[r.Subject]
				if !ok {
					t.Errorf("%q: pyperf has no such benchmark", r.Subject)
					continue
				}
				if r.Worker != "" {
					t.Errorf("%s: worker %q, want the workers pooled", r.Subject, r.Worker)
				}
				if math.Abs(r.Median-w[0]) > 1e-12*math.Abs(w[0]) {
					t.Errorf("%s: median %v, pyperf %v", r.Subject, r.Median, w[0])
				}
				if float64(r.N) != w[1] {
					t.Errorf("%s: n %d, pyperf %v values", r.Subject, r.N, w[1])
				}
			}
		})
	}
}
