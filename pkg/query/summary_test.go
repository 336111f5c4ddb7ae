package query

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"maps"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/flameox/flameox/pkg/adapter/all"
	"github.com/flameox/flameox/pkg/capture"
	"github.com/flameox/flameox/pkg/internal/testenv"
	"github.com/flameox/flameox/pkg/publish"
)

// benchstatRow is one cell of `benchstat -format csv FILE`: the median
// and the ± of one benchmark and unit under one configuration.
type benchstatRow struct {
	median float64
	ci     string
}

// cellKey names a benchmark's cell: its configuration (sorted key=value
// text of the keys in force, empty values left out, gomaxprocs apart), its
// name as benchstat prints it (with the -N suffix) and its unit.
type cellKey struct{ config, name, unit string }

// configLine is a benchfmt configuration line: a key that starts with a
// lower-case letter and holds no space or upper-case letter, a colon,
// and the value (possibly empty).
var configLine = regexp.MustCompile(`^([a-z][^\sA-Z:]*):(?:\s(.*))?$`)

func configText(c map[string]string) string {
	var kv []string
	for k, v := range c {
		if v != "" {
			kv = append(kv, k+"="+v)
		}
	}
	sort.Strings(kv)
	return strings.Join(kv, " ")
}

// benchstatCSV runs the real benchstat (built from golang.org/x/perf, the
// module flameox already requires) on file and returns its cells. Each
// table starts with the configuration lines that changed; names may hold
// commas, so the other lines are read as CSV.
func benchstatCSV(t *testing.T, file string) map[cellKey]benchstatRow {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "benchstat")
	if out, err := exec.Command(testenv.Go(t), "build", "-o", bin, "golang.org/x/perf/cmd/benchstat").CombinedOutput(); err != nil {
		t.Fatalf("building benchstat: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "-format", "csv", file).Output()
	if err != nil {
		t.Fatalf("benchstat: %v", err)
	}
	cells := map[cellKey]benchstatRow{}
	config, unit := map[string]string{}, ""
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		// A table names the configuration keys that changed since the
		// one before (an empty value: the key is gone).
		if m := configLine.FindStringSubmatch(line); m != nil {
			config[m[1]] = strings.TrimSpace(m[2])
			continue
		}
		r := csv.NewReader(strings.NewReader(line))
		r.FieldsPerRecord = -1
		f, err := r.Read()
		if err != nil {
			continue // a blank line between tables
		}
		switch {
		case len(f) == 3 && f[0] == "" && f[2] == "CI":
			unit = f[1]
		case len(f) == 3 && f[0] != "" && f[0] != "geomean" && unit != "":
			v, err := strconv.ParseFloat(f[1], 64)
			if err != nil {
				t.Fatalf("benchstat csv %q: %v", line, err)
			}
			cells[cellKey{configText(config), f[0], unit}] = benchstatRow{v, f[2]}
		}
	}
	return cells
}

// resultLines counts the file's own result lines per configuration and
// benchmark (read independently of benchfmt): what n must be. A
// configuration line sets its key for the lines after it, an empty value
// deletes it.
func resultLines(t *testing.T, file string) map[[2]string]int {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	n := map[[2]string]int{}
	config := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		if m := configLine.FindStringSubmatch(line); m != nil {
			config[m[1]] = strings.TrimSpace(m[2])
			continue
		}
		if f := strings.Fields(line); len(f) > 2 && strings.HasPrefix(f[0], "Benchmark") {
			if _, err := strconv.Atoi(f[1]); err == nil {
				n[[2]string{configText(config), strings.TrimPrefix(f[0], "Benchmark")}]++
			}
		}
	}
	return n
}

// key is the cell of summary row r: its configuration without gomaxprocs,
// and its subject with the -N suffix back on, as benchstat names it.
func (r SummaryRow) key() (config, name string) {
	c := maps.Clone(r.Config)
	if c == nil {
		c = map[string]string{}
	}
	name = r.Subject
	if p, ok := c["gomaxprocs"]; ok {
		name += "-" + p
		delete(c, "gomaxprocs")
	}
	return configText(c), name
}

// TestSummaryEqualsBenchstat imports real go test -bench files and checks
// every summary row against benchstat on the same file: the same median
// (to float rounding), the same ± and a count equal to the file's own.
func TestSummaryEqualsBenchstat(t *testing.T) {
	for _, name := range []string{"golang-perf__suffixarray.bench", "golang-perf__crc-old.txt", "golang-perf__bent-20200101T213604.Base.stdout",
		"golang-perf__benchseries-Go1.17-opt.20220105T213212", "golang-perf__bent-20200101T024818.BaseNl.benchsize"} {
		t.Run(name, func(t *testing.T) {
			file, _ := filepath.Abs(filepath.Join("testdata", name))
			// Small pages, so the cursor is followed to the end.
			rows := summaryOfFile(t, file, 7)
			want := benchstatCSV(t, file)
			counts := resultLines(t, file)
			if len(rows) == 0 {
				t.Fatal("no summary rows")
			}
			if len(rows) != len(want) {
				t.Errorf("%d summary rows, benchstat has %d cells", len(rows), len(want))
			}
			for _, r := range rows {
				config, name := r.key()
				where := name + " " + r.Unit + " [" + config + "]"
				w, ok := want[cellKey{config, name, r.Unit}]
				if !ok {
					t.Errorf("%s: benchstat has no such cell", where)
					continue
				}
				if math.Abs(r.Median-w.median) > 1e-9*math.Abs(w.median) {
					t.Errorf("%s: median %v, benchstat %v", where, r.Median, w.median)
				}
				if r.Range != w.ci {
					t.Errorf("%s: ± %s, benchstat %s", where, r.Range, w.ci)
				}
				if c := counts[[2]string{config, name}]; r.N != c {
					t.Errorf("%s: n %d, the file has %d result lines", where, r.N, c)
				}
				if r.Min > r.Median || r.Median > r.Max || r.IQR < 0 || r.IQR > r.Max-r.Min {
					t.Errorf("%s: min %v median %v max %v iqr %v out of order", where, r.Min, r.Median, r.Max, r.IQR)
				}
			}
		})
	}
}

// summaryOfFile imports file into a fresh workspace, publishes it and
// returns every summary row, following the cursor in pages of limit rows
// (so paging is checked too).
func summaryOfFile(t *testing.T, file string, limit int) []SummaryRow {
	t.Helper()
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
	var rows []SummaryRow
	req := SummaryRequest{RunID: imp.Run.RunID, Limit: limit}
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
			return rows
		}
		req.Cursor = res.Cursor
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
