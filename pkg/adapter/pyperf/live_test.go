package pyperf

import (
	"context"
	"os"
	"slices"
	"testing"

	"github.com/flameox/flameox/pkg/adapter"
	"github.com/flameox/flameox/pkg/adapter/adaptertest"
	"github.com/flameox/flameox/pkg/adapter/process"
	"github.com/flameox/flameox/pkg/config"
	"github.com/flameox/flameox/pkg/run"
)

// liveToml benchmarks a tiny Python command with 2 worker processes of 1
// warm-up and 2 values each; loops are left to pyperf, which adds a
// calibration run.
const liveToml = `schema_version = 1

[workloads.sum]
argv = ["python3", "-c", "sum(range(1000))"]
timeout_seconds = 300
options = { processes = "2", values = "2", warmups = "1", min_time = "0.02", name = "sum" }
`

// TestLiveCapture runs the real pyperf through capture.Service and finds,
// in the measurements of the bench.json it wrote, every worker process,
// warm-up and value the file holds.
func TestLiveCapture(t *testing.T) {
	if testing.Short() {
		t.Skip("live capture")
	}
	a := New()
	adaptertest.Usable(t, a.Probe(context.Background()))
	l := adaptertest.Capture(t, t.TempDir(), liveToml, "sum", Name, process.New(), a)
	m := l.Result.Run
	if m.ExecutionStatus != run.ExecSucceeded || m.CaptureStatus != run.CaptureRegistered {
		t.Fatalf("run %s/%s: %+v\nstderr:\n%s", m.ExecutionStatus, m.CaptureStatus, m.Error, l.Stderr())
	}
	l.CheckLimitations(t)
	reg, ok := l.Regs[BenchFile]
	if !ok || reg.Kind != KindBenchmark || reg.Role != "primary" {
		t.Fatalf("%s is not registered as %s: %+v", BenchFile, KindBenchmark, m.Artifacts)
	}
	path := l.Path(reg)
	wants, nmeta := count(t, path)
	w, ok := wants["sum"]
	if !ok || len(wants) != 1 {
		t.Fatalf("the file holds %v, want one benchmark named sum", wants)
	}
	if w.values != 4 || w.runs-w.calibration != 2 || w.calibration < 1 {
		t.Fatalf("pyperf wrote %+v: want 2 workers of 2 values and a calibration run", *w)
	}
	head, _ := os.ReadFile(path)
	in := adapter.ExtractInput{RunID: m.RunID, ArtifactID: reg.ArtifactID, Path: path, Head: head, Limits: config.DefaultLimits()}
	e := &Extractor{}
	if !e.Accepts(in) {
		t.Fatalf("the captured file is not accepted: %.300s", head)
	}
	sink := newSink(t)
	x, err := e.Extract(context.Background(), in, sink)
	if err != nil {
		t.Fatal(err)
	}
	workers := map[string]bool{}
	var values, warmups int
	for _, r := range sink.Rows(t, "measurements") {
		workers[r["worker_id"].(string)] = true
		if r["is_warmup"].(bool) {
			warmups++
		} else {
			values++
		}
		if r["subject"] != "sum" || r["unit"] != "sec" || !(r["value_float"].(float64) > 0) {
			t.Errorf("row %v", r)
		}
	}
	if values != w.values || warmups != w.warmups || len(workers) != w.runs {
		t.Fatalf("%d values, %d warm-ups, %d workers; the file has %d, %d, %d", values, warmups, len(workers), w.values, w.warmups, w.runs)
	}
	if x.Rows["observations"] != int64(nmeta) {
		t.Fatalf("%v observations, the file has %d metadata entries", x.Rows, nmeta)
	}
	if !slices.Contains(m.Command.Argv, "--copy-env") {
		t.Errorf("argv %q", m.Command.Argv)
	}
	t.Logf("pyperf %s: %d runs (%d calibration), %d values, %d warm-ups", l.Result.Plan.Capability.Version, w.runs, w.calibration, values, warmups)
}
