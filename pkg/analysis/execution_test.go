package analysis

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/flameox/flameox/pkg/fault"
)

// observationsFile writes an SDK observations file.
func observationsFile(t *testing.T, dir, name string, lines ...string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	text := `{"flameox_observations": 1, "language": "python", "pid": 1}` + "\n" + strings.Join(lines, "\n") + "\n"
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestExecutionObservations: two runs' SDK observations and phases,
// imported as observations files: the facts of one, then what changed,
// was added or removed, each candidate value with the observation id a
// finding cites.
func TestExecutionObservations(t *testing.T) {
	dir := t.TempDir()
	good := observationsFile(t, dir, "good.jsonl",
		`{"t": "observe", "name": "policy", "values": {"clipping_enabled": true, "max_norm": 1.0}, "phase": "train"}`,
		`{"t": "observe", "name": "data", "values": {"shuffle": true}, "phase": ""}`,
		`{"t": "phase", "name": "train", "duration_ns": 1000}`)
	bad := observationsFile(t, dir, "bad.jsonl",
		`{"t": "observe", "name": "policy", "values": {"clipping_enabled": false, "max_norm": 1.0}, "phase": "train"}`,
		`{"t": "observe", "name": "policy", "values": {"clipping_enabled": false}, "phase": "train"}`,
		`{"t": "observe", "name": "optimizer", "values": {"name": "sgd"}, "phase": "train"}`,
		`{"t": "phase", "name": "train", "duration_ns": 3000}`)
	ws, runs := importProfiles(t, good, bad)
	ctx := context.Background()
	one, err := Execution(ctx, ws, ExecutionRequest{Input: runs[0]})
	if err != nil {
		t.Fatal(err)
	}
	if one.Base.FactsTotal != 3 || len(one.Base.Phases) != 1 || one.Base.Phases[0].TotalNs != 1000 || one.Base.Coverage != nil || one.Changes != nil {
		t.Fatalf("one run: %+v", one.Base)
	}
	res, err := Execution(ctx, ws, ExecutionRequest{Input: runs[0], Against: runs[1]})
	if err != nil {
		t.Fatal(err)
	}
	ch := res.Changes
	got := map[string]FactChange{}
	for _, f := range ch.Facts {
		got[f.Status+" "+f.Name] = f
	}
	clip, ok := got["changed policy.clipping_enabled"]
	if !ok || len(ch.Facts) != 3 || ch.Facts[0].Name != "policy.clipping_enabled" {
		t.Fatalf("fact changes %+v", ch.Facts)
	}
	if string(clip.Base[0].Value) != "true" || string(clip.Candidate[0].Value) != "false" || clip.Candidate[0].Count != 2 ||
		!strings.HasPrefix(clip.Candidate[0].ObservationID, "sha256:") || clip.Context != "train" {
		t.Errorf("clipping change %+v", clip)
	}
	if _, ok := got["added optimizer.name"]; !ok {
		t.Errorf("no added optimizer.name: %+v", ch.Facts)
	}
	if _, ok := got["removed data.shuffle"]; !ok {
		t.Errorf("no removed data.shuffle: %+v", ch.Facts)
	}
	if _, ok := got["changed policy.max_norm"]; ok {
		t.Error("an unchanged value is reported changed")
	}
	if len(ch.Phases) != 1 || ch.Phases[0].DeltaNs != 2000 || ch.Identical || ch.CoverageBoth {
		t.Errorf("phases %+v identical %v", ch.Phases, ch.Identical)
	}
	same, err := Execution(ctx, ws, ExecutionRequest{Input: runs[0], Against: runs[0]})
	if err != nil || !same.Changes.Identical {
		t.Fatalf("a run against itself: %v %+v", err, same)
	}
	lim, err := Execution(ctx, ws, ExecutionRequest{Input: runs[0], Against: runs[1], Limit: 1})
	if err != nil || len(lim.Changes.Facts) != 1 || !lim.Changes.Truncated || lim.Changes.FactsTotal != 3 {
		t.Fatalf("limit 1: %v %+v", err, lim.Changes)
	}
}

func TestExecutionErrors(t *testing.T) {
	ws, runs := importProfiles(t, sharedFixture(t, "pprof/google-pprof__sample.cpu.pb.gz"))
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		req  ExecutionRequest
		code fault.Code
	}{
		{"not a run", ExecutionRequest{Input: "sha256:00"}, fault.InvalidArguments},
		{"no evidence", ExecutionRequest{Input: runs[0]}, fault.NotFound},
		{"limit", ExecutionRequest{Input: runs[0], Limit: 5000}, fault.QueryBudgetExceeded},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Execution(ctx, ws, tc.req)
			if fe := fault.As(err); fe == nil || fe.Code != tc.code {
				t.Fatalf("err %v, want %s", err, tc.code)
			}
		})
	}
}

func TestRanges(t *testing.T) {
	got := ranges([]int{1, 2, 3, 5, 7, 8})
	if len(got) != 3 || got[0] != (LineRange{1, 3}) || got[1].String() != "5" || got[2].String() != "7-8" {
		t.Fatalf("ranges %v", got)
	}
}

// TestExecutionCoverage: two coverage.py reports of the same code, one
// line and one arc swapped between executed and missing: the file change
// names exactly those.
func TestExecutionCoverage(t *testing.T) {
	base := filepath.Join("..", "adapter", "coverage", "testdata", "flameox__contexts-branch.json")
	b, err := os.ReadFile(base)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	f := doc["files"].(map[string]any)["shapes.py"].(map[string]any)
	swap := func(key string, from, to float64) {
		var out []any
		for _, v := range f[key].([]any) {
			if v.(float64) != from {
				out = append(out, v)
			}
		}
		f[key] = append(out, to)
	}
	swap("executed_lines", 9, 8)
	swap("missing_lines", 8, 9)
	f["executed_branches"] = append(withoutArc(f["executed_branches"].([]any), 7, 9), []any{7.0, 8.0})
	f["missing_branches"] = append(withoutArc(f["missing_branches"].([]any), 7, 8), []any{7.0, 9.0})
	delete(f, "contexts")
	for _, k := range []string{"executed_lines", "missing_lines"} {
		sort.Slice(f[k].([]any), func(i, j int) bool { return f[k].([]any)[i].(float64) < f[k].([]any)[j].(float64) })
	}
	for _, k := range []string{"executed_branches", "missing_branches"} {
		a := f[k].([]any)
		sort.Slice(a, func(i, j int) bool {
			x, y := a[i].([]any), a[j].([]any)
			if x[0].(float64) != y[0].(float64) {
				return x[0].(float64) < y[0].(float64)
			}
			return x[1].(float64) < y[1].(float64)
		})
	}
	// coverage.py writes meta first; the reader needs it so.
	var cand []byte
	for i, k := range []string{"meta", "files", "totals"} {
		part, err := json.Marshal(doc[k])
		if err != nil {
			t.Fatal(err)
		}
		sep := ","
		if i == 0 {
			sep = "{"
		}
		cand = append(append(cand, sep+`"`+k+`":`...), part...)
	}
	cand = append(cand, '}')
	cp := filepath.Join(t.TempDir(), "cand.json")
	if err := os.WriteFile(cp, cand, 0o644); err != nil {
		t.Fatal(err)
	}
	ws, runs := importProfiles(t, base, cp)
	res, err := Execution(context.Background(), ws, ExecutionRequest{Input: runs[0], Against: runs[1]})
	if err != nil {
		t.Fatal(err)
	}
	if res.Base.Coverage == nil || res.Base.Coverage.PercentCovered == nil || !res.Changes.CoverageBoth {
		t.Fatalf("coverage %+v", res.Base.Coverage)
	}
	if len(res.Changes.Files) != 1 {
		t.Fatalf("file changes %+v", res.Changes.Files)
	}
	fc := res.Changes.Files[0]
	if fc.File != "shapes.py" || fc.Status != "changed" || len(fc.NowExecuted) != 1 || fc.NowExecuted[0] != (LineRange{8, 8}) ||
		len(fc.NoLongerExecuted) != 1 || fc.NoLongerExecuted[0] != (LineRange{9, 9}) || fc.ArcsAdded != 1 || fc.ArcsRemoved != 1 {
		t.Fatalf("shapes.py change %+v", fc)
	}
}

func withoutArc(arcs []any, from, to float64) []any {
	var out []any
	for _, a := range arcs {
		p := a.([]any)
		if p[0].(float64) == from && p[1].(float64) == to {
			continue
		}
		out = append(out, a)
	}
	return out
}
