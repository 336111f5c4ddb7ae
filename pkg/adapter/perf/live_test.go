package perf

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

const hotC = `#include <stdio.h>
#include <time.h>

static double now(void) {
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

__attribute__((noinline)) double hot_loop(double seconds) {
	volatile double x = 0;
	double t0 = now();
	while (now() - t0 < seconds)
		for (int i = 0; i < 100000; i++)
			x += i * 0.5;
	return x;
}

__attribute__((noinline)) double cold(void) {
	volatile double x = 0;
	for (int i = 0; i < 1000; i++)
		x += i;
	return x;
}

int main(void) {
	printf("%f %f\n", hot_loop(0.5), cold());
	return 0;
}
`

// TestLiveCapture runs perf record on a compiled C program through the
// real capture service and checks that hot_loop is the top flat function
// of the registered perf script text.
func TestLiveCapture(t *testing.T) {
	if testing.Short() {
		t.Skip("live capture")
	}
	ctx := context.Background()
	a := New()
	if c := a.Probe(ctx); c.Status != adapter.Available && c.Status != adapter.Degraded {
		unable(t, "perf cannot sample here: status %s, facts %v, remediation %q", c.Status, c.Facts, c.Remediation)
	}
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		unable(t, "gcc is not on PATH: the live test compiles its workload")
	}
	res, err := workspace.Init(ctx, t.TempDir(), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	ws := res.Workspace
	src := filepath.Join(ws.ProjectRoot, "hot.c")
	os.WriteFile(src, []byte(hotC), 0o644)
	if out, err := exec.Command(gcc, "-O1", "-g", "-fno-omit-frame-pointer", "-o", filepath.Join(ws.ProjectRoot, "hot"), src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	toml := "schema_version = 1\n[workloads.hot]\nargv = [\"./hot\"]\ntimeout_seconds = 60\n"
	os.WriteFile(filepath.Join(ws.ProjectRoot, "flameox.toml"), []byte(toml), 0o644)
	file, err := workload.Load(ws.ProjectRoot)
	if err != nil {
		t.Fatal(err)
	}
	wl, err := file.Workload("hot")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := workload.Approve(ctx, ws, wl, time.Now()); err != nil {
		t.Fatal(err)
	}
	svc := &capture.Service{WS: ws, Identity: &capture.IdentityCollector{Runner: broker.Default},
		Adapters: adapter.NewRegistry(process.New(), a)}
	r, err := svc.Execute(ctx, capture.PlanRequest{Adapter: Name, Workload: "hot"})
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
		if strings.Contains(stderr, "perf_event_open") || strings.Contains(stderr, "ermission") {
			unable(t, "perf record was refused by the kernel although the probe said %s: %s", r.Plan.Capability.Status, stderr)
		}
		t.Fatalf("run %s: %+v\nstderr:\n%s", r.Run.ExecutionStatus, r.Run.Error, stderr)
	}
	for _, l := range r.Limitations {
		if strings.Contains(l, "failed validation") || strings.Contains(l, "not produced") || strings.Contains(l, "step ") {
			t.Errorf("limitation: %s", l)
		}
	}
	if _, ok := regs[DataFile]; !ok {
		t.Fatalf("perf.data is not registered: %+v", r.Run.Artifacts)
	}
	reg, ok := regs[ScriptFile]
	if !ok || reg.Role != "derived" || reg.Producer != Name {
		t.Fatalf("perf script text is not registered as derived: %+v", r.Run.Artifacts)
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
	rows := profile.Top(p.P, 0, nil)
	if len(rows) == 0 || rows[0].Function != "hot_loop" {
		t.Fatalf("top flat function is not hot_loop (events %v): %+v", p.Events, rows[:min(5, len(rows))])
	}
	total, samples := p.Totals(0)
	t.Logf("perf %s, event %s: %d samples, hot_loop flat %d of %d", r.Plan.Capability.Version, p.Events[0], samples, rows[0].Flat, total)
}
