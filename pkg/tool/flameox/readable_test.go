package flameox

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestReadableOutput runs the real commands on a real workspace: runs list
// tells an import by its file and counts its benchmarks, measurements
// query prints benchmark names sorted and values in their units, and
// workload show prints the definition without JSON.
func TestReadableOutput(t *testing.T) {
	dir := initProject(t)
	bench := filepath.Join(dir, "old.bench.txt")
	os.WriteFile(bench, []byte("goos: linux\npkg: example.com/x\n"+
		"BenchmarkZed-2  100  220025 ns/op  16 B/op  3 allocs/op\n"+
		"BenchmarkAlpha/n=2-2  100  12.5 ns/op\n"+
		"BenchmarkAlpha/n=1-2  100  11.5 ns/op\nPASS\n"), 0o644)
	mustOK(t, flameox(t, dir, "import", "--kind", "benchmark_samples", bench))
	os.WriteFile(filepath.Join(dir, "flameox.toml"), []byte(`schema_version = 1
[workloads.bench]
argv = ["go", "test", "-run", "^$", "-bench", ".", "-count", "{count}", "."]
timeout_seconds = 300
env = { GOWORK = "off" }
[workloads.bench.parameters]
count = [1, 3, 6]
`), 0o644)

	list := mustOK(t, flameox(t, dir, "runs", "list")).stdout
	meas := mustOK(t, flameox(t, dir, "measurements", "query", "--name-prefix", "gobench.")).stdout
	zed := mustOK(t, flameox(t, dir, "measurements", "query", "--subject", "Zed")).stdout
	show := mustOK(t, flameox(t, dir, "workload", "show", "bench")).stdout
	for _, tc := range []struct {
		name, out string
		want      []string
		not       []*regexp.Regexp
	}{
		{"runs list", list, []string{"WORKLOAD", "import old.bench.txt", "BENCH", "imported"}, nil},
		{"measurements query", meas, []string{"SUBJECT", "Alpha/n=1", "220.0µs/op", "12.50ns/op", "3 allocs/op", "16.00 B/op"},
			[]*regexp.Regexp{regexp.MustCompile(`0\.000220`), regexp.MustCompile(`\d\.\d{7,}`)}},
		{"measurements query --subject", zed, []string{"Zed", "220.0µs/op"}, []*regexp.Regexp{regexp.MustCompile(`Alpha`)}},
		{"workload show", show, []string{"argv        go test -run '^$' -bench . -count '{count}' .", "count (integer) one of 1, 3, 6", "env         GOWORK=off"},
			[]*regexp.Regexp{regexp.MustCompile(`\\n`), regexp.MustCompile(`"argv"`), regexp.MustCompile(`^\{`)}},
	} {
		for _, w := range tc.want {
			if !strings.Contains(tc.out, w) {
				t.Errorf("%s lacks %q:\n%s", tc.name, w, tc.out)
			}
		}
		for _, re := range tc.not {
			if re.MatchString(tc.out) {
				t.Errorf("%s matches %s:\n%s", tc.name, re, tc.out)
			}
		}
	}
	// Sorted by benchmark name, then value index: Alpha/n=1 before Alpha/n=2 before Zed.
	a1, a2, z := strings.Index(meas, "Alpha/n=1"), strings.Index(meas, "Alpha/n=2"), strings.Index(meas, "Zed")
	if !(a1 >= 0 && a1 < a2 && a2 < z) {
		t.Errorf("measurements not sorted by name:\n%s", meas)
	}
}
