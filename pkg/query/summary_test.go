package query

import (
	"bufio"
	"bytes"
	"context"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/flameox/flameox/pkg/adapter/all"
	"github.com/flameox/flameox/pkg/capture"
	"github.com/flameox/flameox/pkg/internal/testenv"
	"github.com/flameox/flameox/pkg/publish"
)

// benchstatRow is one cell of `benchstat -format csv FILE`: the median
// and the ± of one benchmark and unit in one package.
type benchstatRow struct {
	median float64
	ci     string
}

// benchstatCSV runs the real benchstat (built from golang.org/x/perf, the
// module flameox already requires) on file and returns its cells keyed by
// package, benchmark (without the -GOMAXPROCS suffix) and unit.
func benchstatCSV(t *testing.T, file string) map[[3]string]benchstatRow {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "benchstat")
	if out, err := exec.Command(testenv.Go(t), "build", "-o", bin, "golang.org/x/perf/cmd/benchstat").CombinedOutput(); err != nil {
		t.Fatalf("building benchstat: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "-format", "csv", file).Output()
	if err != nil {
		t.Fatalf("benchstat: %v", err)
	}
	procs := regexp.MustCompile(`-\d+$`)
	cells := map[[3]string]benchstatRow{}
	pkg, unit := "", ""
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		if v, ok := strings.CutPrefix(line, "pkg: "); ok {
			pkg = v
			continue
		}
		f := strings.Split(line, ",")
		switch {
		case len(f) == 3 && f[0] == "" && f[2] == "CI":
			unit = f[1]
		case len(f) == 3 && f[0] != "" && f[0] != "geomean" && unit != "":
			v, err := strconv.ParseFloat(f[1], 64)
			if err != nil {
				t.Fatalf("benchstat csv %q: %v", line, err)
			}
			cells[[3]string{pkg, procs.ReplaceAllString(f[0], ""), unit}] = benchstatRow{v, f[2]}
		}
	}
	return cells
}

// resultLines counts the file's own result lines per package and benchmark
// (read independently of benchfmt): what n must be.
func resultLines(t *testing.T, file string) map[[2]string]int {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	procs := regexp.MustCompile(`-\d+$`)
	n := map[[2]string]int{}
	pkg := ""
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "pkg: "); ok {
			pkg = v
		}
		if f := strings.Fields(line); len(f) > 2 && strings.HasPrefix(f[0], "Benchmark") {
			if _, err := strconv.Atoi(f[1]); err == nil {
				n[[2]string{pkg, procs.ReplaceAllString(strings.TrimPrefix(f[0], "Benchmark"), "")}]++
			}
		}
	}
	return n
}

// TestSummaryEqualsBenchstat imports real go test -bench files and checks
// every summary row against benchstat on the same file: the same median
// (to float rounding), the same ± and a count equal to the file's own.
func TestSummaryEqualsBenchstat(t *testing.T) {
	for _, name := range []string{"golang-perf__suffixarray.bench", "golang-perf__crc-old.txt", "golang-perf__bent-20200101T213604.Base.stdout"} {
		t.Run(name, func(t *testing.T) {
			file, _ := filepath.Abs(filepath.Join("testdata", name))
			f := newFixture(t)
			ctx := context.Background()
			imp, err := f.svc.Import(ctx, capture.ImportRequest{Path: file, Kind: "benchmark_samples"})
			if err != nil {
				t.Fatal(err)
			}
			pub := publish.New(f.ws, publish.Options{Extractors: all.Registry().Extractors()})
			if _, err := pub.PublishRuns(ctx, []publish.RunRef{{RunID: imp.Run.RunID, Revision: imp.Run.Revision}}); err != nil {
				t.Fatal(err)
			}
			// Small pages, so the cursor is followed to the end.
			var rows []SummaryRow
			req := SummaryRequest{RunID: imp.Run.RunID, Limit: 7}
			for {
				res, err := SummarizeMeasurements(ctx, f.ws, req)
				if err != nil {
					t.Fatal(err)
				}
				rows = append(rows, res.Rows...)
				if !res.Truncated {
					if res.Total != int64(len(rows)) {
						t.Fatalf("total %d, %d rows", res.Total, len(rows))
					}
					break
				}
				req.Cursor = res.Cursor
			}
			want := benchstatCSV(t, file)
			counts := resultLines(t, file)
			if len(rows) == 0 {
				t.Fatal("no summary rows")
			}
			if len(rows) != len(want) {
				t.Errorf("%d summary rows, benchstat has %d cells", len(rows), len(want))
			}
			for _, r := range rows {
				unit := r.Unit
				w, ok := want[[3]string{r.Worker, r.Subject, unit}]
				if !ok {
					t.Errorf("%s %s %s: benchstat has no such cell", r.Worker, r.Subject, unit)
					continue
				}
				if math.Abs(r.Median-w.median) > 1e-9*math.Abs(w.median) {
					t.Errorf("%s %s %s: median %v, benchstat %v", r.Worker, r.Subject, unit, r.Median, w.median)
				}
				if r.Range != w.ci {
					t.Errorf("%s %s %s: ± %s, benchstat %s", r.Worker, r.Subject, unit, r.Range, w.ci)
				}
				if c := counts[[2]string{r.Worker, r.Subject}]; r.N != c {
					t.Errorf("%s %s %s: n %d, the file has %d result lines", r.Worker, r.Subject, unit, r.N, c)
				}
				if r.Min > r.Median || r.Median > r.Max || r.IQR < 0 || r.IQR > r.Max-r.Min {
					t.Errorf("%s %s %s: min %v median %v max %v iqr %v out of order", r.Worker, r.Subject, unit, r.Min, r.Median, r.Max, r.IQR)
				}
			}
		})
	}
}

// TestSummaryWarnings: too few values for an interval, and a wide spread,
// each give the warning benchstat or pyperf would.
func TestSummaryWarnings(t *testing.T) {
	tests := []struct {
		name   string
		xs     []float64
		warn   string
		hasCI  bool
		median float64
	}{
		{"one value", []float64{5}, "need >= 6 samples", false, 5},
		{"five values", []float64{1, 2, 3, 4, 5}, "need >= 6 samples", false, 3},
		{"tight", []float64{100, 100, 101, 101, 102, 102, 103, 103}, "", true, 101.5},
		{"wide", []float64{50, 60, 100, 100, 140, 150, 160, 200}, "wider than ±10%", true, 120},
		{"none", nil, "no values", false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := summarize(SummaryRow{}, append([]float64(nil), tt.xs...))
			if r.N != len(tt.xs) || r.Median != tt.median || (r.CILow != nil) != tt.hasCI {
				t.Fatalf("n %d median %v ci %v", r.N, r.Median, r.CILow)
			}
			joined := strings.Join(r.Warnings, "; ")
			if tt.warn == "" && joined != "" || !strings.Contains(joined, tt.warn) {
				t.Fatalf("warnings %q, want %q", joined, tt.warn)
			}
		})
	}
}

// TestSummaryNeedsARun: the run id is required, and a run with no
// benchmark values summarises to no rows.
func TestSummaryNeedsARun(t *testing.T) {
	f := newFixture(t)
	if _, err := SummarizeMeasurements(context.Background(), f.ws, SummaryRequest{}); err == nil {
		t.Fatal("a summary without a run id succeeded")
	}
	f.importAndPublish(t, 1, "benchmark_samples")
	res, err := SummarizeMeasurements(context.Background(), f.ws, SummaryRequest{RunID: f.refs[0].RunID})
	if err != nil || len(res.Rows) != 0 || res.Total != 0 {
		t.Fatalf("%+v %v", res, err)
	}
}
