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
	a, project := live(t)
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
	a, project := live(t)
	os.WriteFile(filepath.Join(project, "hold.py"), []byte(holdPy), 0o644)
	toml := "schema_version = 1\n[workloads.hold]\nargv = [\"python3\", \"hold.py\"]\ntimeout_seconds = 60\n"
	l := adaptertest.Capture(t, project, toml, "hold", Name, process.New(), a)
	r := l.Result
	if r.Run.ExecutionStatus != run.ExecSucceeded {
		t.Fatalf("run %s: %+v\nstderr:\n%s", r.Run.ExecutionStatus, r.Run.Error, l.Stderr())
	}
	adaptertest.CheckWrappedUsage(t, r.Run.Process, 64<<20, "py-spy")
}

// TestLiveExitStatus: py-spy record exits 0 whatever its workload's exit
// status (benfred/py-spy#717) and 1 when it cannot sample: the run's exit
// status is the workload's own, read below py-spy, and a py-spy that
// failed fails the run even though its workload succeeded.
func TestLiveExitStatus(t *testing.T) {
	a, project := live(t)
	// A Python workload that fails after running long enough to be sampled.
	os.WriteFile(filepath.Join(project, "fail.py"), []byte("import sys\nsum(i * i for i in range(3000000))\nsys.exit(3)\n"), 0o644)
	toml := "schema_version = 1\n[workloads.fail]\nargv = [\"python3\", \"fail.py\"]\ntimeout_seconds = 60\n" +
		"[workloads.shell]\nargv = [\"./shell.py\"]\ntimeout_seconds = 60\n"

	l := adaptertest.Capture(t, project, toml, "fail", Name, process.New(), a)
	m := l.Result.Run
	p := m.Process
	if m.ExecutionStatus != run.ExecFailed || p == nil || p.ExitCode != 3 || p.ExitSource == "" || p.Collector == nil || p.Collector.ExitCode != 0 {
		t.Fatalf("a workload exiting 3 under py-spy: execution %s, process %+v, collector %+v, error %v", m.ExecutionStatus, p, p.Collector, m.Error)
	}
	if m.Error == nil || !strings.Contains(m.Error.Message, "the workload failed with exit status 3") {
		t.Errorf("error = %v", m.Error)
	}

	// A ".py" workload that is a shell script: py-spy finds no interpreter
	// in it, gives up and exits 1, while the script itself succeeds.
	project = t.TempDir()
	os.WriteFile(filepath.Join(project, "shell.py"), []byte("#!/bin/sh\nsleep 1\necho done\n"), 0o755)
	l = adaptertest.Capture(t, project, toml, "shell", Name, process.New(), a)
	m = l.Result.Run
	p = m.Process
	if m.ExecutionStatus != run.ExecFailed || p == nil || p.Collector == nil || p.Collector.ExitCode == 0 {
		t.Fatalf("py-spy unable to sample: execution %s, process %+v, error %v\nstderr:\n%s", m.ExecutionStatus, p, m.Error, l.Stderr())
	}
	if m.Error == nil || !strings.Contains(m.Error.Message, "the collector py-spy failed with exit status") {
		t.Errorf("error = %v", m.Error)
	}
	t.Logf("workload %s %d (%s), py-spy exit %d: %s", p.Signal, p.ExitCode, p.ExitSource, p.Collector.ExitCode, m.Error.Message)
}

// live skips a live capture under -short and where py-spy or python3 is
// missing (failing instead under CI), and returns the adapter and a
// project directory.
func live(t *testing.T) (*Adapter, string) {
	t.Helper()
	if testing.Short() {
		t.Skip("live capture")
	}
	a := New()
	adaptertest.Usable(t, a.Probe(context.Background()))
	testenv.LookPath(t, "python3")
	return a, t.TempDir()
}
