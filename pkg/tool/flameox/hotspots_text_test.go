package flameox

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/flameox/flameox/pkg/analysis"
	"github.com/flameox/flameox/pkg/capture"
	"github.com/flameox/flameox/pkg/profile/pproftest"
)

// importFixture imports a profile fixture into dir (with an import kind,
// "" to detect it) and returns its run id.
func importFixture(t *testing.T, dir, fixture, kind string) string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("..", "..", "profile", "testdata", fixture))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, fixture), src, 0o644)
	args := []string{"import", fixture, "--json"}
	if kind != "" {
		args = append(args, "--kind", kind)
	}
	var imp capture.ImportResult
	if err := json.Unmarshal([]byte(mustOK(t, flameox(t, dir, args...)).stdout), &imp); err != nil || imp.Run == nil {
		t.Fatalf("import %s: %v", fixture, err)
	}
	return imp.Run.RunID
}

var pprofRowRE = regexp.MustCompile(`^\s*\S+\s+\S+%\s+\S+%\s+\S+\s+\S+%  `)

// tableRows returns the lines of a -top table (header line included).
func tableRows(out string) []string {
	var rows []string
	in := false
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "      flat  flat%   sum%        cum   cum%") {
			in = true
		} else if in && !pprofRowRE.MatchString(l) {
			break
		}
		if in {
			rows = append(rows, l)
		}
	}
	return rows
}

// TestHotspotsTextIsPprofTop: the text table of every row of real
// profiles (CPU seconds, heap megabytes, counts; inline and partial-inline
// labels) is go tool pprof -top's, character for character, and so are
// its "Duration:" and "Showing nodes accounting for" lines.
func TestHotspotsTextIsPprofTop(t *testing.T) {
	dir := initProject(t)
	for _, fx := range []string{"google-pprof__sample.cpu.pb.gz", "parca__profile-with-labels.pb.gz", "parca__alloc_objects.pb.gz"} {
		t.Run(fx, func(t *testing.T) {
			runID := importFixture(t, dir, fx, "")
			got := mustOK(t, flameox(t, dir, "analyze", "hotspots", runID, "--limit", "1000")).stdout
			res := hotspotsJSON(t, dir, runID, "--limit", "1000")
			want := pproftest.Output(t, "-top", "-nodefraction=0", filepath.Join("..", "..", "profile", "testdata", fx))
			g, w := tableRows(got), tableRows(want)
			if len(w) < 10 {
				t.Fatalf("pprof printed %d table lines:\n%s", len(w), want)
			}
			if len(g) != len(w) {
				t.Fatalf("flameox printed %d table lines, pprof %d\n%s", len(g), len(w), got)
			}
			diffs, markers := 0, 0
			for i := range w {
				if utf8.RuneCountInString(w[i]) > 120 || strings.ContainsAny(w[i], "\t\x1b") {
					continue // cut to the line width, or escaped: TestHotspotsTextWidth
				}
				if i > 0 { // flameox's markers, which pprof -top does not print
					r := res.Rows[i-1]
					for _, m := range []string{" [k]", " (" + filepath.Base(r.Module) + ")"} {
						if g2, ok := strings.CutSuffix(g[i], m); ok && (m == " [k]") == isKernel(r.Module) {
							g[i] = g2
							markers++
						}
					}
				}
				if g[i] != w[i] {
					if diffs++; diffs <= 5 {
						t.Errorf("line %d\nflameox %q\npprof   %q", i, g[i], w[i])
					}
				}
			}
			if diffs > 0 {
				t.Fatalf("%d of %d lines differ", diffs, len(w))
			}
			t.Logf("%d lines identical (%d with a module or kernel marker)", len(w), markers)
			for _, prefix := range []string{"Duration: ", "Showing nodes accounting for "} {
				if wl := lineWith(want, prefix); wl != lineWith(got, prefix) {
					t.Errorf("%q line: flameox %q, pprof %q", prefix, lineWith(got, prefix), wl)
				}
			}
		})
	}
}

func lineWith(out, prefix string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}

// hotspotsJSON runs hotspots with --json and decodes the result.
func hotspotsJSON(t *testing.T, dir string, args ...string) *analysis.HotspotsResult {
	t.Helper()
	var out analysis.HotspotsOutput
	r := mustOK(t, flameox(t, dir, append([]string{"analyze", "hotspots", "--json"}, args...)...))
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || out.HotspotsResult == nil {
		t.Fatalf("hotspots --json: %v\n%s", err, r.stdout)
	}
	return out.HotspotsResult
}

// TestHotspotsTextWidth: names are left-aligned after the columns and cut
// to the terminal's width; no line of the table is wider.
func TestHotspotsTextWidth(t *testing.T) {
	dir := initProject(t)
	runID := importFixture(t, dir, "parca__profile-with-labels.pb.gz", "")
	res := hotspotsJSON(t, dir, runID, "--limit", "30")
	for _, width := range []int{80, 100, 200} {
		var b bytes.Buffer
		renderHotspots(&b, res, nil, width)
		cut := 0
		for i, l := range tableRows(b.String()) {
			if i == 0 {
				continue
			}
			if n := utf8.RuneCountInString(l); n > width {
				t.Fatalf("width %d: a %d-cell line %q", width, n, l)
			}
			if strings.Contains(l, "…") {
				cut++
			}
			if l[pprofPrefix-2:pprofPrefix] != "  " || l[pprofPrefix] == ' ' {
				t.Fatalf("width %d: name not left-aligned after the columns: %q", width, l)
			}
		}
		if width == 80 && cut == 0 || width == 200 && cut != 0 {
			t.Fatalf("width %d: %d names cut", width, cut)
		}
	}
}

// TestHotspotsFormats: --format json is --json; markdown is a table with
// pprof's columns; anything else is a usage error.
func TestHotspotsFormats(t *testing.T) {
	dir := initProject(t)
	runID := importFixture(t, dir, "google-pprof__sample.cpu.pb.gz", "")
	js := mustOK(t, flameox(t, dir, "analyze", "hotspots", runID, "--format", "json")).stdout
	plain := mustOK(t, flameox(t, dir, "analyze", "hotspots", runID, "--json")).stdout
	if js != plain {
		t.Fatalf("--format json differs from --json")
	}
	md := mustOK(t, flameox(t, dir, "analyze", "hotspots", runID, "--format", "markdown", "--limit", "3")).stdout
	for _, want := range []string{"| flat | flat% | sum% | cum | cum% | name |", "| 1.28s | 72.73% | 72.73% | 1.37s | 77.84% | ` runtime.mapiternext ` |",
		"| 0.11s | 6.25% | 87.50% | 0.11s | 6.25% | ` math.Abs (inline) ` |"} {
		if !strings.Contains(md, want) {
			t.Fatalf("markdown lacks %q:\n%s", want, md)
		}
	}
	if r := flameox(t, dir, "analyze", "hotspots", runID, "--format", "html"); r.exit != 2 {
		t.Fatalf("--format html: exit %d", r.exit)
	}
}

// TestHotspotsSayWhatTheyShow: a run whose only profile is a memory
// profile says so on the first line of hotspots (and of the stack
// commands), never silently; a page after the first continues pprof's
// sum% and says which rows it shows.
func TestHotspotsSayWhatTheyShow(t *testing.T) {
	dir := initProject(t)
	mem := importFixture(t, dir, "parca__alloc_objects.pb.gz", "memory_profile")
	out := mustOK(t, flameox(t, dir, "analyze", "hotspots", mem, "--limit", "5")).stdout
	first, _, _ := strings.Cut(out, "\n")
	if !strings.HasPrefix(first, "no CPU (sample) profile in this run; showing parca__alloc_objects.pb.gz") || !strings.Contains(first, "sample type alloc_space") {
		t.Fatalf("first line %q", first)
	}
	callers := mustOK(t, flameox(t, dir, "stacks", "callers", mem, "compress/flate")).stdout
	if !strings.HasPrefix(callers, "no CPU (sample) profile in this run;") {
		t.Fatalf("callers' first line: %q", callers)
	}
	p1 := hotspotsJSON(t, dir, mem, "--limit", "5")
	p2 := hotspotsJSON(t, dir, mem, "--limit", "5", "--cursor", p1.Cursor)
	if p2.Rows[0].Rank != 6 || p2.Rows[0].SumSelf != p1.Rows[4].SumSelf+p2.Rows[0].Self {
		t.Fatalf("page 2 starts at rank %d, sum %d (page 1 ends at %d)", p2.Rows[0].Rank, p2.Rows[0].SumSelf, p1.Rows[4].SumSelf)
	}
	text := mustOK(t, flameox(t, dir, "analyze", "hotspots", mem, "--limit", "5", "--cursor", p1.Cursor)).stdout
	if !strings.Contains(text, "Showing nodes 6-10 out of") {
		t.Fatalf("page 2:\n%s", text)
	}
}

// TestOpenPlansARealPort: flameox open takes a run id, and plans pprof's
// web UI on a real port, whose URL it prints.
func TestOpenPlansARealPort(t *testing.T) {
	dir := initProject(t)
	runID := importFixture(t, dir, "google-pprof__sample.cpu.pb.gz", "")
	out := mustOK(t, flameox(t, dir, "open", runID)).stdout
	m := regexp.MustCompile(`-http=localhost:(\d+) `).FindStringSubmatch(out)
	if m == nil || m[1] == "0" || !strings.Contains(out, "http://localhost:"+m[1]+"/") {
		t.Fatalf("open:\n%s", out)
	}
}

// TestGotestRunsSayWhichProfile is the case: gotest captures
// profile only when asked, so hotspots on a run id must say on its first
// line which profile it shows, or refuse naming the option, never switch
// silently to the memory profile.
func TestGotestRunsSayWhichProfile(t *testing.T) {
	need(t, "go")
	dir := t.TempDir()
	example := "../../../contrib/examples/reverse-scan"
	for _, f := range []string{"go.mod", "scan.go", "scan_test.go"} {
		b, err := os.ReadFile(filepath.Join(example, f))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, f), b, 0o644)
	}
	mustOK(t, flameox(t, dir, "init"))
	var toml strings.Builder
	toml.WriteString("schema_version = 1\n")
	for name, opts := range map[string]string{"none": "", "mem": `options = { profiles = "mem" }`, "both": `options = { profiles = "cpu,mem" }`} {
		toml.WriteString("[workloads." + name + "]\n" +
			`argv = ["go", "test", "-run", "^$", "-bench", "DirectSum/n=32768$", "-benchtime", "50ms", "."]` + "\n" +
			"timeout_seconds = 120\nenv = { GOWORK = \"off\", GOFLAGS = \"-mod=mod\" }\n" + opts + "\n")
	}
	os.WriteFile(filepath.Join(dir, "flameox.toml"), []byte(toml.String()), 0o644)
	first := func(name string) (string, result) {
		mustOK(t, flameox(t, dir, "workload", "approve", name))
		res := runOf(t, mustOK(t, flameox(t, dir, "capture", "run", "gotest", "--workload", name, "--json")).stdout)
		r := flameox(t, dir, "analyze", "hotspots", res.Run.RunID, "--limit", "3")
		line, _, _ := strings.Cut(r.stdout, "\n")
		return line, r
	}
	if line, r := first("both"); !strings.HasPrefix(line, "this run has 2 profiles; showing cpu.pprof, its CPU (sample) profile, sample type cpu") {
		t.Fatalf("cpu and mem: first line %q\n%s", line, r.stderr)
	}
	if line, r := first("mem"); !strings.HasPrefix(line, "no CPU (sample) profile in this run; showing mem.pprof") {
		t.Fatalf("mem only: first line %q\n%s", line, r.stderr)
	}
	if _, r := first("none"); r.exit == 0 || !strings.Contains(r.stderr, `options.profiles = "cpu"`) {
		t.Fatalf("no profile: exit %d\n%s%s", r.exit, r.stdout, r.stderr)
	}
}
