package gotest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/flameox/flameox/pkg/adapter"
	"github.com/flameox/flameox/pkg/adapter/adaptertest"
	"github.com/flameox/flameox/pkg/config"
	"github.com/flameox/flameox/pkg/digest"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/internal/testenv"
	"golang.org/x/tools/cover"
)

func newCoverSink(t testing.TB) *adaptertest.Sink {
	return adaptertest.NewSink(t, CoverExtractorName, CoverExtractorVersion)
}

// covmodModule is testdata/covmod's module, at the project root.
func covmodModule(adapter.ExtractInput) (string, string, bool) {
	return "example.com/covmod", ".", true
}

// covmodProject copies testdata/covmod into a temporary directory.
func covmodProject(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("testdata/covmod")); err != nil {
		t.Fatal(err)
	}
	return dir
}

// goIn runs the go command in dir with a local toolchain and no workspace.
func goIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command(testenv.Go(t), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

var funcTotalRE = regexp.MustCompile(`(?m)^total:\s+\(statements\)\s+([0-9.]+%)$`)

// funcTotal is the total line of `go tool cover -func=profile`, run in dir.
func funcTotal(t *testing.T, dir, profile string) string {
	t.Helper()
	out := goIn(t, dir, "tool", "cover", "-func="+profile)
	m := funcTotalRE.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no total line in go tool cover -func:\n%s", out)
	}
	return m[1]
}

// independentTotals reads a profile line by line without
// golang.org/x/tools/cover: repeated blocks are merged (set: or, else
// added), statements summed per file and in all.
func independentTotals(t *testing.T, path string) (mode string, blocks int, stmts, covered map[string]int64) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	mode = strings.TrimPrefix(lines[0], "mode: ")
	type blk struct{ stmts, count int64 }
	merged := map[string]*blk{}
	for _, l := range lines[1:] {
		f := strings.Fields(l)
		n, _ := strconv.ParseInt(f[1], 10, 64)
		c, _ := strconv.ParseInt(f[2], 10, 64)
		if x := merged[f[0]]; x != nil {
			if mode == "set" {
				x.count |= c
			} else {
				x.count += c
			}
			continue
		}
		merged[f[0]] = &blk{n, c}
	}
	stmts, covered = map[string]int64{}, map[string]int64{}
	for key, x := range merged {
		file := key[:strings.LastIndexByte(key, ':')]
		stmts[file] += x.stmts
		stmts[""] += x.stmts
		if x.count > 0 {
			covered[file] += x.stmts
			covered[""] += x.stmts
		}
	}
	return mode, len(merged), stmts, covered
}

type coverResult struct {
	x            *adapter.Extraction
	obs          []map[string]any
	measurements map[string]map[string]any
}

func extractCover(t *testing.T, e *CoverExtractor, path string) coverResult {
	t.Helper()
	head, _ := os.ReadFile(path)
	in := adapter.ExtractInput{RunID: "run1", ArtifactID: "art1", Kind: KindCoverage, Producer: Name, Path: path, Head: head}
	if !e.Accepts(in) {
		t.Fatalf("%s is not accepted: %.200s", path, head)
	}
	sink := newCoverSink(t)
	x, err := e.Extract(context.Background(), in, sink)
	if err != nil {
		t.Fatal(err)
	}
	r := coverResult{x: x, obs: sink.Rows(t, "observations"), measurements: map[string]map[string]any{}}
	for _, m := range sink.Rows(t, "measurements") {
		r.measurements[m["name"].(string)] = m
	}
	return r
}

// check compares one extraction with go tool cover -func's total line and
// with the independent reading of the same profile.
func (r coverResult) check(t *testing.T, dir, profile string) {
	t.Helper()
	mode, blocks, stmts, covered := independentTotals(t, profile)
	total := funcTotal(t, dir, profile)
	st, cov, pct := r.measurements["coverage.statements"], r.measurements["coverage.covered_statements"], r.measurements["coverage.percent_covered"]
	if st == nil || cov == nil || pct == nil {
		t.Fatalf("measurements %v", r.measurements)
	}
	if got := fmt.Sprintf("%.1f%%", pct["value_float"].(float64)); got != total {
		t.Errorf("percent_covered %s, go tool cover -func says %s", got, total)
	}
	if st["value_int"].(int64) != stmts[""] || cov["value_int"].(int64) != covered[""] {
		t.Errorf("statements %v covered %v, independently %d and %d", st["value_int"], cov["value_int"], stmts[""], covered[""])
	}
	if pct["unit"] != "percent" || st["scope"] != "run" || st["unit"] != "count" || st["dimensions"].(map[string]string)["mode"] != mode {
		t.Errorf("measurement rows %v %v", st, pct)
	}
	nblocks, files := 0, map[string]map[string]any{}
	for _, o := range r.obs {
		switch o["name"] {
		case "coverage.block":
			nblocks++
			if o["kind"] != "line_hit" || o["line_from"].(int32) > o["line_to"].(int32) || o["evidence_level"] != "observed" {
				t.Errorf("block row %v", o)
			}
			var v map[string]int64
			if err := json.Unmarshal([]byte(o["value_json"].(string)), &v); err != nil || len(v) != 4 {
				t.Errorf("value_json %v: %v", o["value_json"], err)
			}
			if mode == "set" && v["hits"] > 1 {
				t.Errorf("set mode block with %d hits", v["hits"])
			}
		case "coverage.file":
			var v map[string]any
			if err := json.Unmarshal([]byte(o["value_json"].(string)), &v); err != nil || o["kind"] != "summary" {
				t.Fatalf("file row %v: %v", o, err)
			}
			files[o["file"].(string)] = v
		default:
			t.Errorf("row %v", o)
		}
	}
	if nblocks != blocks {
		t.Errorf("%d block rows, the profile has %d distinct blocks", nblocks, blocks)
	}
	for _, name := range []string{"calc.go", "shapes/shapes.go"} {
		v := files[name]
		if v == nil || int64(v["statements"].(float64)) != stmts["example.com/covmod/"+name] ||
			int64(v["covered_statements"].(float64)) != covered["example.com/covmod/"+name] || v["profile_file"] != "example.com/covmod/"+name {
			t.Errorf("file summary of %s: %v (independently %d statements, %d covered)", name, v, stmts["example.com/covmod/"+name], covered["example.com/covmod/"+name])
		}
	}
	if len(files) != 2 {
		t.Errorf("file summaries %v", files)
	}
}

// TestCoverMatchesGoTool: profiles made by the real go test in each mode,
// and by go tool covdata textfmt from a GOCOVERDIR, extract to the totals
// `go tool cover -func` prints, the statement counts an independent
// reading of the file finds, one row per distinct block, and
// project-relative file names.
func TestCoverMatchesGoTool(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test")
	}
	dir := covmodProject(t)
	e := &CoverExtractor{ModuleOf: covmodModule}
	for _, mode := range []string{"set", "count", "atomic"} {
		t.Run(mode, func(t *testing.T) {
			profile := filepath.Join(dir, mode+".out")
			// -coverpkg over two packages repeats shapes.go's blocks, which
			// the parser merges.
			goIn(t, dir, "test", "-covermode="+mode, "-coverpkg=./...", "-coverprofile="+profile, "./...")
			r := extractCover(t, e, profile)
			r.check(t, dir, profile)
			for _, o := range r.obs {
				// calc.go:23.26,25.3 is Sum's loop body, run 50 times.
				if o["name"] == "coverage.block" && o["file"] == "calc.go" && o["line_from"].(int32) == 23 {
					want := map[string]string{"set": `"hits":1`, "count": `"hits":50`, "atomic": `"hits":50`}[mode]
					if !strings.Contains(o["value_json"].(string), want) {
						t.Errorf("loop block %v, want %s", o["value_json"], want)
					}
				}
			}
			if !strings.Contains(strings.Join(r.x.Limitations, " "), "coverage is not causality") {
				t.Errorf("limitations %q", r.x.Limitations)
			}
		})
	}
	t.Run("covdata", func(t *testing.T) {
		cov := filepath.Join(dir, "gocoverdir")
		os.Mkdir(cov, 0o755)
		goIn(t, dir, "test", "-cover", "-covermode=count", "-coverpkg=./...", "./...", "-args", "-test.gocoverdir="+cov)
		profile := filepath.Join(dir, "textfmt.out")
		goIn(t, dir, "tool", "covdata", "textfmt", "-i="+cov, "-o="+profile)
		extractCover(t, e, profile).check(t, dir, profile)
	})
}

// TestCoverAccepts: by content, never by name.
func TestCoverAccepts(t *testing.T) {
	for _, tt := range []struct {
		name, head, kind, producer string
		want                       bool
	}{
		{"set", "mode: set\na.go:1.1,2.2 1 1\n", "", "", true},
		{"count", "mode: count\n", "metadata", "flameox.import", true},
		{"atomic", "mode: atomic\r\n", "", "", true},
		{"yaml", "mode: production\nreplicas: 3\n", "", "", false},
		{"bad mode registered as coverage", "mode: production\n", KindCoverage, "flameox.import", true},
		{"coverage.py json", `{"meta": {"format": 3}}`, KindCoverage, "flameox.import", false},
		{"mislabelled by a gotest capture", `{"meta": {"format": 3}}`, KindCoverage, Name, true},
		{"stream", `{"Action":"start"}`, KindProcessOutput, Name, false},
		{"empty", "", "", "", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "x")
			os.WriteFile(path, []byte(tt.head), 0o644)
			in := adapter.ExtractInput{Path: path, Head: []byte(tt.head), Kind: tt.kind, Producer: tt.producer}
			if got := (&CoverExtractor{}).Accepts(in); got != tt.want {
				t.Errorf("Accepts = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestCoverHostile: every broken profile is ARTIFACT_PARSE_FAILED with its
// reason, and nothing is written.
func TestCoverHostile(t *testing.T) {
	long := "mode: set\n" + strings.Repeat("x", 70<<10) + ".go:1.1,2.2 1 1\n"
	for _, tt := range []struct {
		name, data, reason string
		limits             config.Limits
	}{
		{name: "empty", data: "", reason: "empty"},
		{name: "bad mode", data: "mode: bogus\na.go:1.1,2.2 1 1\n", reason: "bad_mode"},
		{name: "no mode line", data: "a.go:1.1,2.2 1 1\n", reason: "bad_mode"},
		{name: "mode with CR", data: "mode: set\r\na.go:1.1,2.2 1 1\r\n", reason: "bad_mode"},
		{name: "mislabelled", data: `{"meta": {"format": 3}, "files": {}}`, reason: "bad_mode"},
		{name: "truncated line", data: "mode: set\na.go:1.1,2.2 1 1\na.go:3.1,4", reason: "syntax"},
		{name: "truncated count", data: "mode: set\na.go:1.1,2.2 1 ", reason: "syntax"},
		{name: "huge count", data: "mode: count\na.go:1.1,2.2 1 99999999999999999999\n", reason: "syntax"},
		{name: "negative count", data: "mode: count\na.go:1.1,2.2 1 -1\n", reason: "syntax"},
		{name: "negative line", data: "mode: count\na.go:-1.1,2.2 1 1\n", reason: "syntax"},
		{name: "second mode line", data: "mode: set\na.go:1.1,2.2 1 1\nmode: set\n", reason: "syntax"},
		{name: "inconsistent statements", data: "mode: set\na.go:1.1,2.2 1 1\na.go:1.1,2.2 2 1\n", reason: "syntax"},
		{name: "blank file name", data: "mode: set\n:1.1,2.2 1 1\n", reason: "syntax"},
		{name: "line too long", data: long, reason: "syntax"},
		{name: "count overflow", data: "mode: count\na.go:1.1,2.2 1 9223372036854775807\na.go:1.1,2.2 1 9223372036854775807\n", reason: "count_overflow"},
		{name: "statements overflow", data: "mode: count\na.go:1.1,2.2 9223372036854775807 1\na.go:3.1,4.2 9223372036854775807 1\n", reason: "statements_overflow"},
		{name: "backwards block", data: "mode: set\na.go:5.1,2.2 1 1\n", reason: "bad_block"},
		{name: "line zero", data: "mode: set\na.go:0.1,2.2 1 1\n", reason: "bad_block"},
		{name: "line past int32", data: "mode: set\na.go:1.1,4294967296.2 1 1\n", reason: "bad_block"},
		{name: "escape in name", data: "mode: set\n\x1b[31ma.go:1.1,2.2 1 1\n", reason: "bad_file_name"},
		{name: "invalid utf-8 name", data: "mode: set\n\xffa.go:1.1,2.2 1 1\n", reason: "bad_file_name"},
		{name: "too many blocks", data: "mode: set\na.go:1.1,2.2 1 1\na.go:3.1,4.2 1 1\na.go:5.1,6.2 1 1\n", reason: "too_many_blocks",
			limits: config.Limits{MaxSamples: 2}},
		{name: "too large", data: "mode: set\na.go:1.1,2.2 1 1\n", reason: "too_large", limits: config.Limits{MaxDecompressedBytes: 10}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "cover.out")
			os.WriteFile(path, []byte(tt.data), 0o644)
			sink := newCoverSink(t)
			in := adapter.ExtractInput{RunID: "r", ArtifactID: "a", Kind: KindCoverage, Producer: Name, Path: path,
				Head: []byte(tt.data), Limits: tt.limits}
			if !(&CoverExtractor{}).Accepts(in) {
				t.Fatal("a file a gotest capture registered as coverage is not accepted, so its breakage would go unreported")
			}
			_, err := (&CoverExtractor{ModuleOf: covmodModule}).Extract(context.Background(), in, sink)
			fe := fault.As(err)
			if err == nil || fe.Code != fault.ArtifactParseFailed || fe.Details["reason"] != tt.reason {
				t.Fatalf("error %v (details %v), want ARTIFACT_PARSE_FAILED with reason %s", err, fe.Details, tt.reason)
			}
			if strings.ContainsRune(fe.Message, 0x1b) {
				t.Errorf("the message quotes a terminal escape raw: %q", fe.Message)
			}
			if sink.Opened() != 0 {
				t.Errorf("%d tables written for a refused profile", sink.Opened())
			}
		})
	}
}

// TestCoverModeOnly: a profile with a mode line and no block (a package
// without statements) is valid and covers nothing.
func TestCoverModeOnly(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cover.out")
	os.WriteFile(path, []byte("mode: set\n"), 0o644)
	r := extractCover(t, &CoverExtractor{ModuleOf: covmodModule}, path)
	if len(r.obs) != 0 || r.measurements["coverage.statements"]["value_int"].(int64) != 0 ||
		r.measurements["coverage.percent_covered"]["value_float"].(float64) != 0 {
		t.Fatalf("rows %v %v", r.obs, r.measurements)
	}
}

// TestCoverFileNames: files of the project's module become
// project-relative; others (another module, the standard library, a
// profile without a known module) keep the profile's name.
func TestCoverFileNames(t *testing.T) {
	data := "mode: set\nexample.com/covmod/calc.go:1.1,2.2 1 1\nexample.com/covmod/sub/b.go:1.1,2.2 1 0\nexample.com/covmodx/c.go:1.1,2.2 1 0\nstrings/builder.go:1.1,2.2 1 0\n"
	path := filepath.Join(t.TempDir(), "cover.out")
	os.WriteFile(path, []byte(data), 0o644)
	for _, tt := range []struct {
		name string
		mod  func(adapter.ExtractInput) (string, string, bool)
		want []string
	}{
		{"module at the root", covmodModule, []string{"calc.go", "example.com/covmodx/c.go", "strings/builder.go", "sub/b.go"}},
		{"module in a subdirectory", func(adapter.ExtractInput) (string, string, bool) { return "example.com/covmod", "go/src", true },
			[]string{"example.com/covmodx/c.go", "go/src/calc.go", "go/src/sub/b.go", "strings/builder.go"}},
		{"unknown", func(adapter.ExtractInput) (string, string, bool) { return "", "", false },
			[]string{"example.com/covmod/calc.go", "example.com/covmod/sub/b.go", "example.com/covmodx/c.go", "strings/builder.go"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := extractCover(t, &CoverExtractor{ModuleOf: tt.mod}, path)
			var got []string
			for _, o := range r.obs {
				if o["name"] == "coverage.file" {
					got = append(got, o["file"].(string))
				}
			}
			slices.Sort(got)
			if strings.Join(got, " ") != strings.Join(tt.want, " ") {
				t.Errorf("files %q, want %q", got, tt.want)
			}
		})
	}
}

// TestProjectModule: the module is the go.mod at the project root of the
// workspace holding the payload.
func TestProjectModule(t *testing.T) {
	project := t.TempDir()
	ws := filepath.Join(project, ".diagnostics")
	obj := filepath.Join(ws, "objects", "ab")
	os.MkdirAll(obj, 0o755)
	os.WriteFile(filepath.Join(ws, "workspace.json"), []byte(`{"project_root": ".."}`), 0o644)
	payload := filepath.Join(obj, "payload.out")
	os.WriteFile(payload, []byte("mode: set\n"), 0o644)
	if _, _, ok := ProjectModule(adapter.ExtractInput{Path: payload}); ok {
		t.Fatal("a module found without a go.mod")
	}
	os.WriteFile(filepath.Join(project, "go.mod"), []byte("// a comment\nmodule \"example.com/m\"\n\ngo 1.26\n"), 0o644)
	if m, dir, ok := ProjectModule(adapter.ExtractInput{Path: payload}); !ok || m != "example.com/m" || dir != "." {
		t.Fatalf("ProjectModule = %q %q %v", m, dir, ok)
	}
	if _, _, ok := ProjectModule(adapter.ExtractInput{Path: filepath.Join(t.TempDir(), "x")}); ok {
		t.Fatal("a module found outside a workspace")
	}
}

// TestBlockIDs: the spliced observation ids are digest.Of's for the same
// identity, whatever the strings hold.
func TestBlockIDs(t *testing.T) {
	for _, tt := range []struct{ run, art, file string }{
		{"run1", "sha256:ab", "calc.go"},
		{"", "", "example.com/m/x.go"},
		{"r\"\\\u2028<>&", "a\u00e9\U0001F600", "dir with space/é.go"},
	} {
		ids, err := newBlockIDs(tt.run, tt.art, tt.file)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range []cover.ProfileBlock{{StartLine: 1, StartCol: 2, EndLine: 3, EndCol: 4}, {StartLine: 1 << 30, StartCol: 0, EndLine: 1 << 30, EndCol: 99999}} {
			want, err := digest.Of(map[string]any{"run_id": tt.run, "artifact_id": tt.art, "kind": "line_hit",
				"name": "coverage.block", "file": tt.file, "line_from": b.StartLine, "line_to": b.EndLine,
				"start_col": b.StartCol, "end_col": b.EndCol, "context": nil})
			if err != nil {
				t.Fatal(err)
			}
			if got := ids.block(b); got != want {
				t.Errorf("%+v %+v: id %s, digest.Of %s", tt, b, got, want)
			}
		}
	}
}
