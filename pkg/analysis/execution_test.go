package analysis

import (
	"context"
	"os"
	"path/filepath"
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
