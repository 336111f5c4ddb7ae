package compare

import (
	"bytes"
	"debug/buildinfo"
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flameox/flameox/pkg/internal/testenv"
	"github.com/flameox/flameox/pkg/query"
	"golang.org/x/perf/benchfmt"
)

// valuesOf reads a go test -bench file the way the gotest extractor
// stores it: file configuration keys, the name without its GOMAXPROCS
// suffix, the suffix apart, one value per unit.
func valuesOf(t testing.TB, file string) []query.BenchValue {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []query.BenchValue
	r := benchfmt.NewReader(f, file)
	for r.Scan() {
		res, ok := r.Result().(*benchfmt.Result)
		if !ok {
			continue
		}
		config := map[string]string{}
		for _, c := range res.Config {
			if c.File {
				config[c.Key] = string(c.Value)
			}
		}
		base, parts := res.Name.Parts()
		subject, procs := string(base), ""
		for i, p := range parts {
			if p[0] == '-' && i == len(parts)-1 {
				procs = string(p[1:])
				continue
			}
			subject += string(p)
		}
		for _, v := range res.Values {
			out = append(out, query.BenchValue{Producer: "gobench", Worker: config["pkg"], Config: config, Subject: subject, Procs: procs, Unit: v.Unit, Value: v.Value})
		}
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// BenchstatDelta is one comparison cell of `benchstat -format csv OLD
// NEW`: its table's configuration (sorted key=value), the row's name, the
// unit and the delta ("~" where not significant).
type benchstatKey struct{ config, name, unit string }

// BenchstatDeltas runs the real benchstat (benchstatBinary) on two files
// with extra flags and returns every comparison cell's delta.
func BenchstatDeltas(t testing.TB, flags []string, oldFile, newFile string) map[benchstatKey]string {
	t.Helper()
	bin := benchstatBinary(t)
	// Run from the files' directory, so the column labels are the names.
	cmd := exec.Command(bin, append(append([]string{"-format", "csv"}, flags...), filepath.Base(oldFile), filepath.Base(newFile))...)
	cmd.Dir = filepath.Dir(oldFile)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("benchstat: %v\n%s", err, stderr.String())
	}
	return parseBenchstatCSV(t, stdout.Bytes())
}

// benchstatBinary is the benchstat scripts/install-collectors.sh installs
// (on PATH, else in GOBIN or GOPATH/bin) when its build information says
// it was built from the golang.org/x/perf and go-moremath versions this
// module builds with; otherwise benchstat built here from the module, as
// the only way to compare against the code the view links. Without
// either the test is Unable (a failure under CI=true).
func benchstatBinary(t testing.TB) string {
	t.Helper()
	goCmd := testenv.Go(t)
	want := map[string]string{}
	out, err := exec.Command(goCmd, "list", "-m", "-f", "{{.Path}} {{if .Replace}}{{.Replace.Version}}{{else}}{{.Version}}{{end}}", "golang.org/x/perf", "github.com/aclements/go-moremath").Output()
	if err != nil {
		t.Fatalf("go list -m golang.org/x/perf: %v", err)
	}
	for line := range strings.Lines(string(out)) {
		if path, version, ok := strings.Cut(strings.TrimSpace(line), " "); ok {
			want[path] = version
		}
	}
	var candidates []string
	if p, err := exec.LookPath("benchstat"); err == nil {
		candidates = append(candidates, p)
	}
	if out, err := exec.Command(goCmd, "env", "GOBIN", "GOPATH").Output(); err == nil {
		gobin, gopath, _ := strings.Cut(string(out), "\n")
		if gobin = strings.TrimSpace(gobin); gobin != "" {
			candidates = append(candidates, filepath.Join(gobin, "benchstat"))
		}
		if first, _, _ := strings.Cut(strings.TrimSpace(gopath), string(os.PathListSeparator)); first != "" {
			candidates = append(candidates, filepath.Join(first, "bin", "benchstat"))
		}
	}
	var why []string
	for _, p := range candidates {
		if _, err := os.Stat(p); err != nil {
			continue
		}
		if mismatch := benchstatMismatch(p, want); mismatch != "" {
			why = append(why, p+": "+mismatch)
			continue
		}
		t.Logf("benchstat: installed %s (golang.org/x/perf %s)", p, want["golang.org/x/perf"])
		return p
	}
	bin := filepath.Join(t.TempDir(), "benchstat")
	if out, err := exec.Command(goCmd, "build", "-o", bin, "golang.org/x/perf/cmd/benchstat").CombinedOutput(); err != nil {
		testenv.Unable(t, "benchstat", "go build golang.org/x/perf/cmd/benchstat failed", string(out))
	}
	t.Logf("benchstat: built from the module (golang.org/x/perf %s); no installed one matches %v", want["golang.org/x/perf"], why)
	return bin
}

// benchstatMismatch says why the benchstat at path is not the one this
// module would build ("" when it is): not a Go binary of
// golang.org/x/perf/cmd/benchstat, or built from other versions of the
// modules in want.
func benchstatMismatch(path string, want map[string]string) string {
	bi, err := buildinfo.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	if bi.Path != "golang.org/x/perf/cmd/benchstat" {
		return "built from " + bi.Path
	}
	got := map[string]string{bi.Main.Path: bi.Main.Version}
	for _, d := range bi.Deps {
		if d.Replace != nil {
			d = d.Replace
		}
		got[d.Path] = d.Version
	}
	for mod, v := range want {
		if got[mod] != v {
			return fmt.Sprintf("%s %q, the module requires %s", mod, got[mod], v)
		}
	}
	return ""
}

// ParseBenchstatCSV reads benchstat's csv: per table, the configuration
// lines that changed ("key: value"), the column labels, the unit line,
// then name,center,CI,center,CI,delta,P lines and the geomean.
func parseBenchstatCSV(t testing.TB, b []byte) map[benchstatKey]string {
	t.Helper()
	r := csv.NewReader(bytes.NewReader(b))
	r.FieldsPerRecord = -1
	recs, err := r.ReadAll()
	if err != nil {
		t.Fatalf("benchstat csv: %v", err)
	}
	config := map[string]string{}
	unit := ""
	out := map[benchstatKey]string{}
	for _, f := range recs {
		switch {
		case len(f) == 1 && f[0] == "":
		case len(f) == 1:
			k, v, _ := strings.Cut(f[0], ": ")
			config[k] = v
		case f[0] == "" && len(f) > 1 && f[1] != "" && f[2] == "CI":
			unit = f[1]
		case f[0] == "" || f[0] == "geomean":
		case len(f) >= 6:
			out[benchstatKey{configKey(config), f[0], unit}] = f[5]
		}
	}
	return out
}

func configKey(c map[string]string) string {
	var kv []string
	for k, v := range c {
		if v != "" {
			kv = append(kv, k+"="+v)
		}
	}
	slices.Sort(kv)
	return strings.Join(kv, " ")
}

// tableKey is a row's table label in configKey's form.
func tableKey(label string) string {
	f := strings.Fields(label)
	var kv []string
	// A value may hold spaces: re-join words that carry no '='.
	for _, w := range f {
		if strings.Contains(w, "=") || len(kv) == 0 {
			kv = append(kv, w)
		} else {
			kv[len(kv)-1] += " " + w
		}
	}
	slices.Sort(kv)
	return strings.Join(kv, " ")
}

// TestBenchViewAgreesWithBenchstat: on the file pairs benchstat's own
// tests compare, every comparison row has benchstat's delta (its
// direction and "~"), and the decision follows the delta's direction.
func TestBenchViewAgreesWithBenchstat(t *testing.T) {
	tests := []struct {
		name     string
		old, new string
		req      BenchRequest
		flags    []string
	}{
		{"crc ignore note", "golang-perf__crc-old.txt", "golang-perf__crc-new.txt", BenchRequest{Ignore: "note"}, []string{"-ignore", "note"}},
		{"crc filter", "golang-perf__crc-old.txt", "golang-perf__crc-new.txt", BenchRequest{Ignore: "note", Filter: "/poly:IEEE"}, []string{"-ignore", "note", "-filter", "/poly:IEEE"}},
		{"crc row by size", "golang-perf__crc-old.txt", "golang-perf__crc-new.txt", BenchRequest{Ignore: "note", Row: "/size"}, []string{"-ignore", "note", "-row", "/size"}},
		{"old new", "golang-perf__old.txt", "golang-perf__new.txt", BenchRequest{}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			oldFile, _ := filepath.Abs(filepath.Join("testdata", tt.old))
			newFile, _ := filepath.Abs(filepath.Join("testdata", tt.new))
			want := BenchstatDeltas(t, tt.flags, oldFile, newFile)
			if len(want) == 0 {
				t.Fatal("benchstat compared nothing")
			}
			req := tt.req
			req.RunA, req.RunB, req.Limit = tt.old, tt.new, query.MaxLimit
			v, err := BuildBenchView(req, valuesOf(t, oldFile), valuesOf(t, newFile))
			if err != nil {
				t.Fatal(err)
			}
			got := 0
			for _, r := range v.Rows {
				if r.Old == nil || r.New == nil {
					continue
				}
				got++
				where := r.Benchmark + " " + r.Unit + " [" + r.Table + "]"
				d, ok := want[benchstatKey{tableKey(r.Table), r.Benchmark, r.Unit}]
				if !ok {
					t.Errorf("%s: benchstat has no such comparison", where)
					continue
				}
				if r.Delta != d {
					t.Errorf("%s: delta %q, benchstat %q", where, r.Delta, d)
				}
				switch {
				case d == "~" && r.Decision != decInconclusive && r.Decision != decDescriptive:
					t.Errorf("%s: ~ but decision %s", where, r.Decision)
				case d != "~" && r.Polarity != polNeutral && (strings.HasPrefix(d, "-") == (r.Polarity == polLower)) != (r.Decision == decImprovement):
					t.Errorf("%s: delta %s (%s) but decision %s", where, d, r.Polarity, r.Decision)
				}
				if r.Validity != validityExploratory {
					t.Errorf("%s: validity %s", where, r.Validity)
				}
			}
			if got != len(want) {
				t.Errorf("%d comparisons, benchstat has %d", got, len(want))
			}
		})
	}
}

// TestBenchViewNeedsIgnore: files whose note: lines differ are separate
// tables, as in benchstat, until -ignore note.
func TestBenchViewNeedsIgnore(t *testing.T) {
	a, b := valuesOf(t, "testdata/golang-perf__crc-old.txt"), valuesOf(t, "testdata/golang-perf__crc-new.txt")
	v, err := BuildBenchView(BenchRequest{RunA: "a", RunB: "b", Limit: 1000}, a, b)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range v.Rows {
		if r.Old != nil && r.New != nil {
			t.Fatalf("%s compared across differing note: keys", r.Benchmark)
		}
		if r.Decision != decInconclusive {
			t.Fatalf("%s: %s without a comparison", r.Benchmark, r.Decision)
		}
	}
}

func TestDecide(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		pol    string
		sig    bool
		ratio  float64
		lo, hi float64 // the ratio's bounds
		th     float64
		want   string
	}{
		{polLower, true, 0.9, 0.85, 0.95, 0, decImprovement},
		{polLower, true, 1.1, 1.05, 1.15, 0, decRegression},
		{polHigher, true, 1.1, 1.05, 1.15, 0, decImprovement},
		{polHigher, true, 0.9, 0.85, 0.95, 0, decRegression},
		// At threshold 0, benchstat's verdict: significance and direction,
		// whatever the bounds.
		{polLower, true, 0.9, 0.8, 1.02, 0, decImprovement},
		{polLower, true, 0.9, nan, nan, 0, decImprovement},
		// Medians that tie are no direction; threshold 0 is no band.
		{polLower, true, 1, 0.99, 1.01, 0, decInconclusive},
		{polLower, false, 1, 0.99, 1.01, 0, decInconclusive},
		// Beyond a threshold, the whole of [lo, hi] decides.
		{polLower, true, 0.9, 0.85, 0.94, 0.05, decImprovement},
		{polLower, true, 0.9, 0.85, 0.96, 0.05, decInconclusive},
		{polLower, true, 1.1, 1.06, 1.15, 0.05, decRegression},
		{polHigher, true, 1.1, 1.06, 1.15, 0.05, decImprovement},
		{polHigher, true, 0.9, 0.85, 0.94, 0.05, decRegression},
		{polLower, true, 1.01, 0.99, 1.03, 0.05, decNoDifference},
		{polLower, false, 1.01, 0.99, 1.03, 0.05, decNoDifference},
		{polLower, true, 1.01, 0.99, 1.06, 0.05, decInconclusive},
		{polLower, true, 1.01, nan, nan, 0.05, decInconclusive},
		{polLower, false, 0.5, 0.4, 0.6, 0, decInconclusive},
		{polNeutral, true, 0.5, 0.4, 0.6, 0, decDescriptive},
	}
	for _, tt := range tests {
		if got := decide(tt.pol, tt.sig, tt.ratio, tt.lo, tt.hi, tt.th); got != tt.want {
			t.Errorf("decide(%s, %v, %v, [%v, %v], %v) = %s, want %s", tt.pol, tt.sig, tt.ratio, tt.lo, tt.hi, tt.th, got, tt.want)
		}
	}
	for unit, want := range map[string]string{"sec/op": polLower, "B/op": polLower, "allocs/op": polLower, "B/s": polHigher, "sec": polLower, "total-bytes": polNeutral, "build-real-ns/op": polLower} {
		if got := UnitPolarity(unit); got != want {
			t.Errorf("UnitPolarity(%s) = %s, want %s", unit, got, want)
		}
	}
}

// TestBenchstatMismatch: a benchstat is used only when its build
// information names the versions this module builds with.
func TestBenchstatMismatch(t *testing.T) {
	bin := benchstatBinary(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path string
		want       map[string]string
		mismatch   bool
	}{
		{"no requirement", bin, nil, false},
		{"other x/perf", bin, map[string]string{"golang.org/x/perf": "v0.0.0-20200101000000-000000000000"}, true},
		{"not benchstat", self, nil, true},
		{"not a Go binary", "testdata/golang-perf__old.txt", nil, true},
	}
	for _, tt := range tests {
		if got := benchstatMismatch(tt.path, tt.want); (got != "") != tt.mismatch {
			t.Errorf("%s: mismatch %q, want one: %v", tt.name, got, tt.mismatch)
		}
	}
}
