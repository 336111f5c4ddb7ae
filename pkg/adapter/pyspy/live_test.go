package pyspy

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flameox/flameox/pkg/adapter/adaptertest"
	"github.com/flameox/flameox/pkg/adapter/process"
	"github.com/flameox/flameox/pkg/internal/testenv"
	"github.com/flameox/flameox/pkg/profile"
	"github.com/flameox/flameox/pkg/run"
)

// burn does a fixed amount of work rather than running for a fixed stretch
// of wall time, so its share of the samples does not shrink when a loaded
// machine slows the interpreter's start-up.
const burnPy = `def burn():
    x = 0
    for i in range(10000000):
        x += i
    return x


def cold():
    return sum(range(1000))


burn()
cold()
`

// TestLiveCapture runs py-spy on a Python script through the real capture
// service and checks that burn is the top flat function by sample count.
func TestLiveCapture(t *testing.T) {
	if testing.Short() {
		t.Skip("live capture")
	}
	a := New()
	adaptertest.Usable(t, a.Probe(context.Background()))
	testenv.LookPath(t, "python3")
	project := t.TempDir()
	os.WriteFile(filepath.Join(project, "burn.py"), []byte(burnPy), 0o644)
	toml := "schema_version = 1\n[workloads.burn]\nargv = [\"python3\", \"burn.py\"]\ntimeout_seconds = 60\n"
	l := adaptertest.Capture(t, project, toml, "burn", Name, process.New(), a)
	r, regs := l.Result, l.Regs
	if r.Run.ExecutionStatus != run.ExecSucceeded {
		stderr := l.Stderr()
		if strings.Contains(stderr, "ermission") || strings.Contains(stderr, "ptrace") {
			testenv.Unable(t, "py-spy", "could not read its child", "the probe said %s: %s", r.Plan.Capability.Status, stderr)
		}
		t.Fatalf("run %s: %+v\nstderr:\n%s", r.Run.ExecutionStatus, r.Run.Error, stderr)
	}
	l.CheckLimitations(t)
	reg, ok := regs[SpeedscopeFile]
	if !ok || reg.Role != "primary" || reg.Producer != Name {
		t.Fatalf("the speedscope profile is not registered: %+v", r.Run.Artifacts)
	}
	p := l.Profile(t, reg)
	idx := -1
	for i, st := range p.P.SampleType {
		if st.Type == "samples" {
			idx = i
		}
	}
	if idx < 0 {
		t.Fatalf("no samples/count type: %v", p.P.SampleType)
	}
	rows := profile.Top(p.P, idx, nil)
	if len(rows) == 0 || rows[0].Function != "burn" {
		t.Fatalf("top flat function is not burn: %+v", rows[:min(5, len(rows))])
	}
	_, samples := p.Totals(idx)
	t.Logf("py-spy %s (%s): burn flat %d of %d samples", r.Plan.Capability.Version, p.Producer, rows[0].Flat, samples)
}

// holdPy touches a 64 MiB buffer and holds it a while (so that sampling
// every 20 ms sees the peak on a loaded machine; no duration is asserted).
const holdPy = `import time
b = bytearray(64 << 20)
for i in range(0, len(b), 4096):
    b[i] = 1
sum(i * i for i in range(300000))
time.sleep(1.5)
`

// TestLiveWorkloadResources: under py-spy the run's peak RSS and CPU time
// are the Python workload's, and py-spy's own are recorded apart.
func TestLiveWorkloadResources(t *testing.T) {
	if testing.Short() {
		t.Skip("live capture")
	}
	a := New()
	adaptertest.Usable(t, a.Probe(context.Background()))
	testenv.LookPath(t, "python3")
	project := t.TempDir()
	os.WriteFile(filepath.Join(project, "hold.py"), []byte(holdPy), 0o644)
	toml := "schema_version = 1\n[workloads.hold]\nargv = [\"python3\", \"hold.py\"]\ntimeout_seconds = 60\n"
	l := adaptertest.Capture(t, project, toml, "hold", Name, process.New(), a)
	r := l.Result
	if r.Run.ExecutionStatus != run.ExecSucceeded {
		t.Fatalf("run %s: %+v\nstderr:\n%s", r.Run.ExecutionStatus, r.Run.Error, l.Stderr())
	}
	adaptertest.CheckWrappedUsage(t, r.Run.Process, 64<<20, "py-spy")
}
