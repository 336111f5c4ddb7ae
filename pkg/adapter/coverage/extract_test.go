package coverage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flameox/flameox/pkg/adapter"
	"github.com/flameox/flameox/pkg/adapter/adaptertest"
	"github.com/flameox/flameox/pkg/config"
	"github.com/flameox/flameox/pkg/digest"
	"github.com/flameox/flameox/pkg/fault"
)

func input(t testing.TB, path string, lim config.Limits) adapter.ExtractInput {
	head, err := os.ReadFile(path)
	if err != nil {
		panic(err)
	}
	if len(head) > 4096 {
		head = head[:4096]
	}
	return adapter.ExtractInput{RunID: "run", ArtifactID: "art", Kind: Kind, Path: path, Head: head, Limits: lim}
}

// pyReport is a coverage.py JSON report read independently of Decode,
// with encoding/json into generic values.
type pyReport struct {
	Meta   map[string]any `json:"meta"`
	Files  map[string]pyFile
	Totals map[string]any
}

// numbers keeps the numeric entries of a summary object.
func numbers(m map[string]any) map[string]float64 {
	out := map[string]float64{}
	for k, v := range m {
		if n, ok := v.(float64); ok {
			out[k] = n
		}
	}
	return out
}

type pyFile struct {
	Executed []int            `json:"executed_lines"`
	Missing  []int            `json:"missing_lines"`
	ExecArcs [][2]int         `json:"executed_branches"`
	MissArcs [][2]int         `json:"missing_branches"`
	Contexts map[string][]any `json:"contexts"`
	Summary  map[string]any   `json:"summary"`
}

func readPy(t *testing.T, path string) pyReport {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var r pyReport
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// extracted runs the extractor on path and returns the sink's rows.
type extracted struct {
	x            *adapter.Extraction
	obs, measure []map[string]any
}

func extract(t *testing.T, path string, lim config.Limits) (*extracted, error) {
	t.Helper()
	sink := adaptertest.NewSink(t, ExtractorName, ExtractorVersion)
	x, err := NewExtractor().Extract(context.Background(), input(t, path, lim), sink)
	if err != nil {
		if sink.Opened() != 0 {
			t.Errorf("%s: %d tables opened by a failed extraction", path, sink.Opened())
		}
		return nil, err
	}
	return &extracted{x: x, obs: sink.Rows(t, "observations"), measure: sink.Rows(t, "measurements")}, nil
}

// totalsOf are the run measurements by name.
func totalsOf(rows []map[string]any) map[string]float64 {
	got := map[string]float64{}
	for _, r := range rows {
		if r["scope"] != "run" {
			continue
		}
		switch v := r["value_int"].(type) {
		case int64:
			got[r["name"].(string)] = float64(v)
		}
		if v, ok := r["value_float"].(float64); ok {
			got[r["name"].(string)] = v
		}
	}
	return got
}

// wantTotals maps a coverage.py totals object to the measurements.
func wantTotals(tot map[string]float64, branch bool) map[string]float64 {
	w := map[string]float64{
		MStatements: tot["num_statements"], MCoveredStatements: tot["covered_lines"], MMissingStatements: tot["missing_lines"],
		MExcludedStatements: tot["excluded_lines"], MPercentCovered: tot["percent_covered"],
	}
	if branch {
		w[MBranches], w[MCoveredBranches] = tot["num_branches"], tot["covered_branches"]
		w[MMissingBranches], w[MPartialBranches] = tot["missing_branches"], tot["num_partial_branches"]
	}
	return w
}

// TestFixtures imports every report in testdata (the shared fixtures and
// two written here; testdata/SOURCES.md) and checks it against the same
// JSON read with encoding/json: the totals are the report's own totals
// (what `coverage report` printed on its TOTAL line) and the sum of its
// files' summaries; there is a line row per executed and missing line,
// an arc row per executed and missing branch, a summary per file.
func TestFixtures(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.json")
	if len(files) < 6 {
		t.Fatalf("fixtures %v", files)
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			py := readPy(t, path)
			if !NewExtractor().Accepts(input(t, path, config.DefaultLimits())) {
				t.Fatal("not accepted")
			}
			x, err := extract(t, path, config.DefaultLimits())
			if err != nil {
				t.Fatal(err)
			}
			branch, _ := py.Meta["branch_coverage"].(bool)
			tot := numbers(py.Totals)
			want := wantTotals(tot, branch)
			want[MFiles] = float64(len(py.Files))
			sums := map[string]float64{}
			lines, arcs := map[string]int{}, map[string]int{}
			for name, f := range py.Files {
				for k, v := range f.Summary {
					if n, ok := v.(float64); ok {
						sums[k] += n
					}
				}
				name = strings.ReplaceAll(name, "\\", "/")
				lines[name+" 1"] += len(f.Executed)
				lines[name+" 0"] += len(f.Missing)
				arcs[name+" true"] += len(f.ExecArcs)
				arcs[name+" false"] += len(f.MissArcs)
			}
			for _, k := range []string{"num_statements", "covered_lines", "missing_lines", "excluded_lines", "num_branches", "covered_branches"} {
				if sums[k] != tot[k] {
					t.Errorf("fixture: the files' %s add up to %v, totals say %v", k, sums[k], tot[k])
				}
			}
			got := totalsOf(x.measure)
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("totals\n got %v\nwant %v", got, want)
			}
			gotLines, gotArcs, summaries := map[string]int{}, map[string]int{}, 0
			for _, r := range x.obs {
				file := r["file"].(string)
				switch r["kind"] {
				case KindLine:
					var v struct{ Hits int }
					json.Unmarshal([]byte(r["value_json"].(string)), &v)
					gotLines[fmt.Sprintf("%s %d", file, v.Hits)]++
					if r["line_from"] != r["line_to"] || r["name"] != NameLine {
						t.Errorf("line row %v", r)
					}
				case KindArc:
					var v struct{ Executed bool }
					json.Unmarshal([]byte(r["value_json"].(string)), &v)
					gotArcs[fmt.Sprintf("%s %v", file, v.Executed)]++
				case KindSummary:
					summaries++
					var v map[string]any
					json.Unmarshal([]byte(r["value_json"].(string)), &v)
					orig := py.Files[file]
					if orig.Summary == nil {
						orig = py.Files[strings.ReplaceAll(file, "/", "\\")]
					}
					if fmt.Sprint(v) != fmt.Sprint(orig.Summary) {
						t.Errorf("summary of %s: %v, want %v", file, v, orig.Summary)
					}
				}
				if r["evidence_level"] != "observed" || r["run_id"] != "run" || r["artifact_id"] != "art" {
					t.Errorf("row %v", r)
				}
			}
			drop0 := func(m map[string]int) string {
				for k, v := range m {
					if v == 0 {
						delete(m, k)
					}
				}
				return fmt.Sprint(m)
			}
			if drop0(gotLines) != drop0(lines) || drop0(gotArcs) != drop0(arcs) || summaries != len(py.Files) {
				t.Errorf("lines %v\nwant  %v\narcs %v\nwant %v\nsummaries %d of %d", gotLines, lines, gotArcs, arcs, summaries, len(py.Files))
			}
			if x.x.Rows["observations"] != int64(len(x.obs)) {
				t.Errorf("rows %v, %d observations", x.x.Rows, len(x.obs))
			}
			ids := map[string]bool{}
			for _, r := range x.obs {
				id := r["observation_id"].(string)
				if ids[id] {
					t.Errorf("observation id %s twice", id)
				}
				ids[id] = true
			}
		})
	}
}

// TestBranchesAndContexts reads the report written here from
// testdata/shapes (coverage.py 7.17.5, --branch, --context=ci and the
// test_function dynamic context): an exit arc, lines with one and two
// contexts.
func TestBranchesAndContexts(t *testing.T) {
	x, err := extract(t, "testdata/flameox__contexts-branch.json", config.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	find := func(kind, file string, from, to int32) map[string]any {
		for _, r := range x.obs {
			if r["kind"] == kind && r["file"] == file && r["line_from"] == from && r["line_to"] == to {
				return r
			}
		}
		t.Fatalf("no %s %s %d-%d", kind, file, from, to)
		return nil
	}
	for _, c := range []struct {
		kind, file string
		from, to   int32
		value, ctx any
	}{
		{KindArc, "test_shapes.py", 13, -1, `{"executed":false}`, nil},
		{KindArc, "test_shapes.py", 13, 14, `{"executed":true}`, nil},
		{KindArc, "shapes.py", 7, 8, `{"executed":false}`, nil},
		{KindLine, "shapes.py", 5, 5, `{"contexts":["ci|__main__.test_positive","ci|__main__.test_negative"],"hits":1}`, nil},
		{KindLine, "shapes.py", 6, 6, `{"contexts":["ci|__main__.test_negative"],"hits":1}`, "ci|__main__.test_negative"},
		{KindLine, "shapes.py", 8, 8, `{"hits":0}`, nil},
	} {
		r := find(c.kind, c.file, c.from, c.to)
		if r["value_json"] != c.value || r["context"] != c.ctx {
			t.Errorf("%s %s %d-%d: value %v context %v, want %v %v", c.kind, c.file, c.from, c.to, r["value_json"], r["context"], c.value, c.ctx)
		}
	}
	if !hasLimitation(x.x.Limitations, "not among the report's executed lines") {
		t.Errorf("limitations %q", x.x.Limitations)
	}
}

func hasLimitation(lim []string, s string) bool {
	for _, l := range lim {
		if strings.Contains(l, s) {
			return true
		}
	}
	return false
}

// report builds a one-file report with the given executed lines'
// contexts and file name.
func report(name string, contexts []string) string {
	ctx, _ := json.Marshal(map[string][]string{"1": contexts})
	n, _ := json.Marshal(name)
	return `{"meta": {"format": 3, "version": "7.17.5", "branch_coverage": false, "show_contexts": true}, "files": {` + string(n) +
		`: {"executed_lines": [1], "missing_lines": [2], "excluded_lines": [], "contexts": ` + string(ctx) +
		`, "summary": {"covered_lines": 1, "num_statements": 2, "percent_covered": 50.0, "missing_lines": 1, "excluded_lines": 0}}},` +
		` "totals": {"covered_lines": 1, "num_statements": 2, "percent_covered": 50.0, "missing_lines": 1, "excluded_lines": 0}}`
}

// TestContextsCut: a line's contexts are kept up to MaxContextsPerLine,
// with the total and a flag.
func TestContextsCut(t *testing.T) {
	var ctxs []string
	for i := range MaxContextsPerLine + 6 {
		ctxs = append(ctxs, fmt.Sprintf("test_%03d", i))
	}
	path := filepath.Join(t.TempDir(), "many.json")
	os.WriteFile(path, []byte(report("m.py", ctxs)), 0o644)
	x, err := extract(t, path, config.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range x.obs {
		if r["kind"] == KindLine && r["line_from"] == int32(1) {
			var v struct {
				Contexts []string `json:"contexts"`
				Cut      bool     `json:"contexts_cut"`
				Total    int      `json:"contexts_total"`
			}
			if err := json.Unmarshal([]byte(r["value_json"].(string)), &v); err != nil || len(v.Contexts) != MaxContextsPerLine || !v.Cut || v.Total != len(ctxs) || v.Contexts[0] != "test_000" {
				t.Errorf("value %v (%v)", r["value_json"], err)
			}
			return
		}
	}
	t.Fatal("no row for line 1")
}

// TestHostile: broken, foreign and oversized files are refused with
// ARTIFACT_PARSE_FAILED or ARTIFACT_TOO_LARGE (naming the limit) and
// write nothing; hostile names are kept inert.
func TestHostile(t *testing.T) {
	dir := t.TempDir()
	good, _ := os.ReadFile("testdata/paleae__coverage-branch.json")
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	small := config.DefaultLimits()
	small.MaxEvents = 100
	tiny := config.DefaultLimits()
	tiny.MaxDecompressedBytes = 4096
	names := config.DefaultLimits()
	names.MaxStringBytes = 10
	ok := `{"covered_lines": 1, "num_statements": 1, "percent_covered": 100.0, "missing_lines": 0, "excluded_lines": 0}`
	one := func(files, totals string) string {
		return `{"meta": {"format": 3, "version": "7.17.5"}, "files": {` + files + `}, "totals": ` + totals + `}`
	}
	for _, c := range []struct {
		name, path string
		lim        config.Limits
		accepts    bool
		code       fault.Code
		reason     string
	}{
		{"truncated", write("cut.json", string(good[:len(good)/2])), config.DefaultLimits(), true, fault.ArtifactParseFailed, "ends early"},
		{"empty", write("empty.json", ""), config.DefaultLimits(), false, fault.ArtifactParseFailed, "empty"},
		{"not coverage", write("other.json", `{"meta": {"name": "x"}, "files": {}}`), config.DefaultLimits(), false, fault.ArtifactParseFailed, "no version"},
		{"array", write("array.json", `[1, 2]`), config.DefaultLimits(), false, fault.ArtifactParseFailed, "not a JSON object"},
		{"trailing", write("trail.json", string(good)+"{}"), config.DefaultLimits(), true, fault.ArtifactParseFailed, "after the top-level object"},
		{"too many rows", write("rows.json", string(good)), small, true, fault.ArtifactTooLarge, "max_events"},
		{"too many bytes", write("bytes.json", string(good)), tiny, true, fault.ArtifactTooLarge, "max_decompressed_bytes"},
		{"long names", write("names.json", string(good)), names, true, fault.ArtifactTooLarge, "max_string_bytes"},
		{"totals disagree", write("sum.json", one(`"a.py": {"executed_lines": [1], "missing_lines": [], "summary": `+ok+`}`,
			`{"covered_lines": 2, "num_statements": 2, "missing_lines": 0}`)), config.DefaultLimits(), true, fault.ArtifactParseFailed, "add up to"},
		{"line twice", write("twice.json", one(`"a.py": {"executed_lines": [1, 1], "missing_lines": [], "summary": `+ok+`}`, ok)),
			config.DefaultLimits(), true, fault.ArtifactParseFailed, "line 1 twice"},
		{"executed and missing", write("both.json", one(`"a.py": {"executed_lines": [1], "missing_lines": [1], "summary": `+ok+`}`, ok)),
			config.DefaultLimits(), true, fault.ArtifactParseFailed, "both executed and missing"},
		{"file twice", write("dup.json", one(`"a\u001b[2J.py": {"executed_lines": [1], "missing_lines": [], "summary": `+ok+`}, "a\u001b[2J.py": {"executed_lines": [1], "missing_lines": [], "summary": `+ok+`}`, ok)),
			config.DefaultLimits(), true, fault.ArtifactParseFailed, `"a\x1b[2J.py" is listed twice`},
		{"no summary", write("nosum.json", one(`"a.py": {"executed_lines": [1], "missing_lines": []}`, ok)),
			config.DefaultLimits(), true, fault.ArtifactParseFailed, "no summary"},
		{"bad line", write("neg.json", one(`"a.py": {"executed_lines": [-3], "missing_lines": [], "summary": `+ok+`}`, ok)),
			config.DefaultLimits(), true, fault.ArtifactParseFailed, "not a line number"},
		{"string line", write("str.json", one(`"a.py": {"executed_lines": ["1"], "missing_lines": [], "summary": `+ok+`}`, ok)),
			config.DefaultLimits(), true, fault.ArtifactParseFailed, "not a line number"},
		{"bad percent", write("pc.json", one(`"a.py": {"executed_lines": [1], "missing_lines": [], "summary": `+ok+`}`,
			`{"covered_lines": 1, "num_statements": 1, "missing_lines": 0, "percent_covered": 1e999}`)), config.DefaultLimits(), true, fault.ArtifactParseFailed, "not a percentage"},
		{"deep", write("deep.json", one(`"a.py": {"executed_lines": [1], "missing_lines": [], "summary": `+ok+`, "functions": `+strings.Repeat("[", 100)+strings.Repeat("]", 100)+`}`, ok)),
			config.DefaultLimits(), true, fault.ArtifactTooLarge, "max_json_depth"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := NewExtractor().Accepts(input(t, c.path, c.lim)); got != c.accepts {
				t.Errorf("Accepts = %v, want %v", got, c.accepts)
			}
			_, err := extract(t, c.path, c.lim)
			var fe *fault.Error
			if !errors.As(err, &fe) || fe.Code != c.code || !strings.Contains(fe.Message, c.reason) {
				t.Fatalf("err %v, want %s: %s", err, c.code, c.reason)
			}
			if strings.ContainsRune(fe.Message, 0x1b) {
				t.Errorf("the message holds a raw escape: %q", fe.Message)
			}
			if c.code == fault.ArtifactTooLarge && fe.Details["limit_key"] != "limits."+c.reason {
				t.Errorf("details %v", fe.Details)
			}
		})
	}
}

// TestHostileNames: a file name with terminal escapes is kept as written
// (the CLI escapes it when it prints it); invalid UTF-8 is stored as
// U+FFFD and said so; a report renamed .bin is read by its content.
func TestHostileNames(t *testing.T) {
	dir := t.TempDir()
	esc := filepath.Join(dir, "esc.json")
	os.WriteFile(esc, []byte(report("pkg/\x1b]0;owned\x07\u202emod.py", []string{"\x1b[31mred"})), 0o644)
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(strings.Replace(report("pkg/PLACEHOLDER.py", []string{"ok"}), "PLACEHOLDER", "\xff\xfe", 1)), 0o644)
	surrogate := filepath.Join(dir, "surrogate.json")
	os.WriteFile(surrogate, []byte(strings.Replace(report("pkg/PLACEHOLDER.py", []string{"ok"}), "PLACEHOLDER", `\udcff`, 1)), 0o644)
	bin := filepath.Join(dir, "renamed.bin")
	b, _ := os.ReadFile("testdata/pdf-toolbox__coverage.json")
	os.WriteFile(bin, b, 0o644)
	bom := filepath.Join(dir, "bom.json")
	f2, _ := os.ReadFile("testdata/flameox__format2.json")
	os.WriteFile(bom, append([]byte("\xef\xbb\xbf"), f2...), 0o644)
	for _, c := range []struct {
		path, file, limitation string
	}{
		{bom, "shapes.py", ""},
		{esc, "pkg/\x1b]0;owned\x07\u202emod.py", ""},
		{bad, "pkg/\ufffd\ufffd.py", "invalid UTF-8"},
		{surrogate, "pkg/\ufffd.py", "invalid UTF-8"},
		{bin, "src/pdf_toolbox/__init__.py", ""},
	} {
		if !NewExtractor().Accepts(input(t, c.path, config.DefaultLimits())) {
			t.Errorf("%s is not accepted", c.path)
			continue
		}
		x, err := extract(t, c.path, config.DefaultLimits())
		if err != nil {
			t.Errorf("%s: %v", c.path, err)
			continue
		}
		found := false
		for _, r := range x.obs {
			found = found || r["file"] == c.file
		}
		if !found {
			t.Errorf("%s: no row names %q", c.path, c.file)
		}
		if c.limitation != "" && !hasLimitation(x.x.Limitations, c.limitation) {
			t.Errorf("%s: limitations %q", c.path, x.x.Limitations)
		}
	}
}

// TestObservationIDs: an observation's id is digest.Of of its identity,
// as Go coverage's are (pkg/adapter/gotest), so anyone can recompute it.
func TestObservationIDs(t *testing.T) {
	x, err := extract(t, "testdata/flameox__contexts-branch.json", config.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range x.obs {
		key := map[string]any{"run_id": "run", "artifact_id": "art", "kind": r["kind"], "name": r["name"], "file": r["file"],
			"line_from": r["line_from"], "line_to": r["line_to"], "context": r["context"]}
		want, err := digest.Of(key)
		if err != nil {
			t.Fatal(err)
		}
		if r["observation_id"] != want {
			t.Fatalf("row %v: id %v, want %s", r, r["observation_id"], want)
		}
	}
}
