package pyspy

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flameox/flameox/pkg/adapter"
	"github.com/flameox/flameox/pkg/adapter/process"
	"github.com/flameox/flameox/pkg/broker"
	"github.com/flameox/flameox/pkg/capture"
	"github.com/flameox/flameox/pkg/profile"
	"github.com/flameox/flameox/pkg/run"
	"github.com/flameox/flameox/pkg/workload"
	"github.com/flameox/flameox/pkg/workspace"
)

// unable skips a live test that this machine cannot run, saying exactly
// why; under CI=true the machine is expected to run it, so it fails.
func unable(t *testing.T, format string, args ...any) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("CI=true but: "+format, args...)
	}
	t.Skipf(format, args...)
}

const burnPy = `import time


def burn():
    t = time.perf_counter()
    x = 0
    while time.perf_counter() - t < 1.0:
        x += 1
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
	ctx := context.Background()
	a := New()
	if c := a.Probe(ctx); c.Status != adapter.Available && c.Status != adapter.Degraded {
		unable(t, "py-spy cannot sample here: status %s, facts %v, remediation %q", c.Status, c.Facts, c.Remediation)
	}
	if _, err := exec.LookPath("python3"); err != nil {
		unable(t, "python3 is not on PATH")
	}
	res, err := workspace.Init(ctx, t.TempDir(), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	ws := res.Workspace
	os.WriteFile(filepath.Join(ws.ProjectRoot, "burn.py"), []byte(burnPy), 0o644)
	toml := "schema_version = 1\n[workloads.burn]\nargv = [\"python3\", \"burn.py\"]\ntimeout_seconds = 60\n"
	os.WriteFile(filepath.Join(ws.ProjectRoot, "flameox.toml"), []byte(toml), 0o644)
	file, err := workload.Load(ws.ProjectRoot)
	if err != nil {
		t.Fatal(err)
	}
	wl, err := file.Workload("burn")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := workload.Approve(ctx, ws, wl, time.Now()); err != nil {
		t.Fatal(err)
	}
	svc := &capture.Service{WS: ws, Identity: &capture.IdentityCollector{Runner: broker.Default},
		Adapters: adapter.NewRegistry(process.New(), a)}
	r, err := svc.Execute(ctx, capture.PlanRequest{Adapter: Name, Workload: "burn"})
	if err != nil {
		t.Fatal(err)
	}
	regs := map[string]run.Registration{}
	for _, reg := range r.Run.Artifacts {
		regs[reg.DisplayName] = reg
	}
	if r.Run.ExecutionStatus != run.ExecSucceeded {
		stderr := ""
		if reg, ok := regs["stderr.txt"]; ok {
			b, _ := os.ReadFile(filepath.Join(ws.Root, reg.PayloadPath))
			stderr = string(b)
		}
		if strings.Contains(stderr, "ermission") || strings.Contains(stderr, "ptrace") {
			unable(t, "py-spy could not read its child although the probe said %s: %s", r.Plan.Capability.Status, stderr)
		}
		t.Fatalf("run %s: %+v\nstderr:\n%s", r.Run.ExecutionStatus, r.Run.Error, stderr)
	}
	for _, l := range r.Limitations {
		if strings.Contains(l, "failed validation") || strings.Contains(l, "not produced") {
			t.Errorf("limitation: %s", l)
		}
	}
	reg, ok := regs[SpeedscopeFile]
	if !ok || reg.Role != "primary" || reg.Producer != Name {
		t.Fatalf("the speedscope profile is not registered: %+v", r.Run.Artifacts)
	}
	f, err := os.Open(filepath.Join(ws.Root, reg.PayloadPath))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := profile.Parse(f, profile.Options{})
	if err != nil {
		t.Fatal(err)
	}
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
