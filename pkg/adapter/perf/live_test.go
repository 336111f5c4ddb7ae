package perf

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flameox/flameox/pkg/adapter/adaptertest"
	"github.com/flameox/flameox/pkg/adapter/process"
	"github.com/flameox/flameox/pkg/internal/testenv"
	"github.com/flameox/flameox/pkg/profile"
	"github.com/flameox/flameox/pkg/run"
)

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
	a := New()
	adaptertest.Usable(t, a.Probe(context.Background()))
	gcc := testenv.LookPath(t, "gcc") // the live test compiles its workload
	project := t.TempDir()
	src := filepath.Join(project, "hot.c")
	os.WriteFile(src, []byte(hotC), 0o644)
	if out, err := exec.Command(gcc, "-O1", "-g", "-fno-omit-frame-pointer", "-o", filepath.Join(project, "hot"), src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	toml := "schema_version = 1\n[workloads.hot]\nargv = [\"./hot\"]\ntimeout_seconds = 60\n"
	l := adaptertest.Capture(t, project, toml, "hot", Name, process.New(), a)
	r, regs := l.Result, l.Regs
	if r.Run.ExecutionStatus != run.ExecSucceeded {
		stderr := l.Stderr()
		if strings.Contains(stderr, "perf_event_open") || strings.Contains(stderr, "ermission") {
			testenv.Unable(t, "perf", "refused by the kernel", "the probe said %s: %s", r.Plan.Capability.Status, stderr)
		}
		t.Fatalf("run %s: %+v\nstderr:\n%s", r.Run.ExecutionStatus, r.Run.Error, stderr)
	}
	l.CheckLimitations(t)
	if _, ok := regs[DataFile]; !ok {
		t.Fatalf("perf.data is not registered: %+v", r.Run.Artifacts)
	}
	reg, ok := regs[ScriptFile]
	if !ok || reg.Role != "derived" || reg.Producer != Name {
		t.Fatalf("perf script text is not registered as derived: %+v", r.Run.Artifacts)
	}
	p := l.Profile(t, reg)
	rows := profile.Top(p.P, 0, nil)
	if len(rows) == 0 || rows[0].Function != "hot_loop" {
		t.Fatalf("top flat function is not hot_loop (events %v): %+v", p.Events, rows[:min(5, len(rows))])
	}
	total, samples := p.Totals(0)
	t.Logf("perf %s, event %s: %d samples, hot_loop flat %d of %d", r.Plan.Capability.Version, p.Events[0], samples, rows[0].Flat, total)
}

// holdC touches a 64 MiB buffer and holds it a while (so that sampling
// every 20 ms sees the peak on a loaded machine; no duration is asserted).
const holdC = `#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int main(void) {
	size_t n = (size_t)64 << 20;
	char *b = malloc(n);
	if (!b)
		return 1;
	memset(b, 1, n);
	struct timespec t = {1, 500000000};
	nanosleep(&t, NULL);
	printf("%d\n", b[n / 2]);
	return 0;
}
`

// TestLiveWorkloadResources: under perf record the run's peak RSS is the
// workload's, and perf's own use is recorded apart.
func TestLiveWorkloadResources(t *testing.T) {
	if testing.Short() {
		t.Skip("live capture")
	}
	a := New()
	adaptertest.Usable(t, a.Probe(context.Background()))
	gcc := testenv.LookPath(t, "gcc") // the live test compiles its workload
	project := t.TempDir()
	src := filepath.Join(project, "hold.c")
	os.WriteFile(src, []byte(holdC), 0o644)
	if out, err := exec.Command(gcc, "-O1", "-o", filepath.Join(project, "hold"), src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	toml := "schema_version = 1\n[workloads.hold]\nargv = [\"./hold\"]\ntimeout_seconds = 60\n"
	l := adaptertest.Capture(t, project, toml, "hold", Name, process.New(), a)
	r := l.Result
	if r.Run.ExecutionStatus != run.ExecSucceeded {
		stderr := l.Stderr()
		if strings.Contains(stderr, "perf_event_open") || strings.Contains(stderr, "ermission") {
			testenv.Unable(t, "perf", "refused by the kernel", "the probe said %s: %s", r.Plan.Capability.Status, stderr)
		}
		t.Fatalf("run %s: %+v\nstderr:\n%s", r.Run.ExecutionStatus, r.Run.Error, stderr)
	}
	adaptertest.CheckWrappedUsage(t, r.Run.Process, 64<<20, "perf")
	if p := r.Run.Process; len(p.Processes) != 1 || p.Processes[0] != "hold" {
		t.Errorf("workload processes %q, want [hold]", p.Processes)
	}
}
