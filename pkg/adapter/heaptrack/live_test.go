package heaptrack

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/flameox/flameox/pkg/adapter/adaptertest"
	"github.com/flameox/flameox/pkg/adapter/process"
	"github.com/flameox/flameox/pkg/internal/testenv"
	"github.com/flameox/flameox/pkg/run"
)

const liveToml = `schema_version = 1

[workloads.alloc]
argv = ["./alloc"]
timeout_seconds = 120
`

// TestLiveCapture compiles testdata/alloc.c, captures it with the real
// heaptrack through capture.Service and the broker, and extracts the file
// it wrote: 1,500,000 bytes of main's at the peak, 1000 bytes leaked, and
// a timeline.
func TestLiveCapture(t *testing.T) {
	if testing.Short() {
		t.Skip("live capture")
	}
	cc := testenv.LookPath(t, "cc")
	testenv.LookPath(t, "heaptrack")
	testenv.LookPath(t, "heaptrack_print")
	a := New()
	adaptertest.Usable(t, a.Probe(context.Background()))
	dir := t.TempDir()
	src, _ := filepath.Abs("testdata/alloc.c")
	if out, err := exec.Command(cc, "-g", "-O0", "-o", filepath.Join(dir, "alloc"), src).CombinedOutput(); err != nil {
		t.Fatalf("cc: %v\n%s", err, out)
	}
	l := adaptertest.Capture(t, dir, liveToml, "alloc", Name, process.New(), a)
	m := l.Result.Run
	if m.ExecutionStatus != run.ExecSucceeded || m.CaptureStatus != run.CaptureRegistered {
		t.Fatalf("run %s/%s: %+v\nstderr:\n%s", m.ExecutionStatus, m.CaptureStatus, m.Error, l.Stderr())
	}
	file := ""
	for _, d := range l.Result.Plan.Artifacts {
		if d.Kind == KindMemory {
			file = d.RelPath
		}
	}
	reg, ok := l.Regs[file]
	if !ok || reg.Kind != KindMemory {
		t.Fatalf("%s is not registered as %s: %+v", file, KindMemory, m.Artifacts)
	}
	path := l.Path(reg)
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
	_, rows, err := extract(t, path)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]any{}
	for _, r := range rows {
		got[r["name"].(string)] = r["value_int"]
	}
	if v, _ := got[MetricPeakHeap].(int64); v < 1500000 {
		t.Errorf("peak heap %v, want at least the 1,500,000 bytes alloc.c holds", got[MetricPeakHeap])
	}
	if v, _ := got[MetricLeaked].(int64); v < 1000 {
		t.Errorf("leaked %v, want at least alloc.c's 1000 bytes", got[MetricLeaked])
	}
	if v, _ := got[MetricTemporary].(int64); v < 10 {
		t.Errorf("temporary allocations %v, want at least alloc.c's 10", got[MetricTemporary])
	}
	if _, ok := got[MetricSnapshotHeap].(int64); !ok {
		t.Errorf("no timeline (%s)", MetricSnapshotHeap)
	}
	t.Logf("heaptrack %s: %v", l.Result.Plan.Capability.Version, got)
}
