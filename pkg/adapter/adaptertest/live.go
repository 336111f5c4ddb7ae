package adaptertest

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flameox/flameox/pkg/adapter"
	"github.com/flameox/flameox/pkg/broker"
	"github.com/flameox/flameox/pkg/capture"
	"github.com/flameox/flameox/pkg/internal/testenv"
	"github.com/flameox/flameox/pkg/profile"
	"github.com/flameox/flameox/pkg/publish"
	"github.com/flameox/flameox/pkg/run"
	"github.com/flameox/flameox/pkg/workload"
	"github.com/flameox/flameox/pkg/workspace"
)

// Usable skips t (fails it under CI=true) unless the probe found the
// collector usable here: available or degraded.
func Usable(t testing.TB, c adapter.Capability) {
	t.Helper()
	if c.Status == adapter.Available || c.Status == adapter.Degraded {
		return
	}
	why := string(c.Status)
	if c.Status == adapter.Unavailable && c.Executable == "" {
		why = "not installed"
	}
	testenv.Unable(t, c.Adapter, why, "facts %v, remediation %q", c.Facts, c.Remediation)
}

// Live is one real capture through capture.Service.
type Live struct {
	WS     *workspace.Workspace
	Result *capture.Result
	Regs   map[string]run.Registration // by display name
}

// Capture initializes a workspace in project (which already holds the
// workload's files), declares flameox.toml, approves the workload and
// executes it with adapterName through the real capture service, broker
// and identity collector. adapters form the registry (the process adapter
// is usually among them).
func Capture(t testing.TB, project, toml, name, adapterName string, adapters ...adapter.Adapter) *Live {
	t.Helper()
	return CaptureWith(t, project, toml, name, adapterName, nil, adapters...)
}

// CaptureWith is Capture with setup called on the capture service before
// it executes (e.g. to set its Progress or Output hooks).
func CaptureWith(t testing.TB, project, toml, name, adapterName string, setup func(*capture.Service), adapters ...adapter.Adapter) *Live {
	t.Helper()
	ctx := context.Background()
	if err := os.WriteFile(filepath.Join(project, workload.FileName), []byte(toml), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := workspace.Init(ctx, project, time.Now(), publish.FirstCommit)
	if err != nil {
		t.Fatal(err)
	}
	ws := res.Workspace
	file, err := workload.Load(project)
	if err != nil {
		t.Fatal(err)
	}
	wl, err := file.Workload(name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := workload.Approve(ctx, ws, wl, time.Now()); err != nil {
		t.Fatal(err)
	}
	svc := capture.New(ws, capture.Options{Identity: &capture.IdentityCollector{Runner: broker.Default},
		Adapters: adapter.NewRegistry(adapters...)})
	if setup != nil {
		setup(svc)
	}
	r, err := svc.Execute(ctx, capture.PlanRequest{Adapter: adapterName, Workload: name})
	if err != nil {
		t.Fatal(err)
	}
	l := &Live{WS: ws, Result: r, Regs: map[string]run.Registration{}}
	for _, reg := range r.Run.Artifacts {
		l.Regs[reg.DisplayName] = reg
	}
	return l
}

// Path is the stored payload path of a registration.
func (l *Live) Path(reg run.Registration) string { return filepath.Join(l.WS.Root, reg.PayloadPath) }

// Stderr is the workload's captured stderr, or "".
func (l *Live) Stderr() string {
	reg, ok := l.Regs["stderr.txt"]
	if !ok {
		return ""
	}
	b, _ := os.ReadFile(l.Path(reg))
	return string(b)
}

// Profile parses a registered profile.
func (l *Live) Profile(t testing.TB, reg run.Registration) *profile.Profile {
	t.Helper()
	f, err := os.Open(l.Path(reg))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := profile.Parse(f, profile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// CheckLimitations fails on limitations that mean an artifact the plan
// declared is missing or invalid.
func (l *Live) CheckLimitations(t testing.TB) {
	t.Helper()
	for _, s := range append(append([]string{}, l.Result.Limitations...), l.Result.Run.Limitations...) {
		if strings.Contains(s, "failed validation") || strings.Contains(s, "not produced") || strings.Contains(s, "step ") {
			t.Errorf("limitation: %s", s)
		}
	}
}

// CheckWrappedUsage checks the resource figures of a run whose collector
// (named collector, as in /proc/<pid>/comm) launched the workload: the
// peak RSS is the workload's (at least minRSS, which the workload
// allocates and touches), the CPU time is split exactly, and the
// collector's own use is recorded apart, below the workload's peak.
func CheckWrappedUsage(t testing.TB, p *run.ProcessInfo, minRSS int64, collector string) {
	t.Helper()
	if p == nil {
		t.Fatal("the run has no process facts")
	}
	t.Logf("workload %q: peak RSS %d KiB (%s), user %v sys %v (%s)", p.Processes, p.PeakRSSBytes>>10, p.PeakRSSSource,
		time.Duration(p.UserTimeNs), time.Duration(p.SystemTimeNs), p.CPUSource)
	if p.PeakRSSBytes < minRSS {
		t.Errorf("workload peak RSS %d bytes (%s), want >= %d: the workload's, not the collector's", p.PeakRSSBytes, p.PeakRSSSource, minRSS)
	}
	if p.UserTimeNs+p.SystemTimeNs <= 0 || p.CPUSource != broker.CPUProcStat {
		t.Errorf("workload CPU %d+%d ns from %q, want > 0 from %q", p.UserTimeNs, p.SystemTimeNs, p.CPUSource, broker.CPUProcStat)
	}
	c := p.Collector
	if c == nil {
		t.Fatal("the collector's own use is not recorded")
	}
	t.Logf("collector %q: peak RSS %d KiB (%s), user %v sys %v (%s)", c.Processes, c.PeakRSSBytes>>10, c.PeakRSSSource,
		time.Duration(c.UserTimeNs), time.Duration(c.SystemTimeNs), c.CPUSource)
	// Outermost first: wrappers (bwrap), the collector, then the
	// collector's own helpers (a pyenv shim's) when it has any.
	if !slices.Contains(c.Processes, collector) {
		t.Errorf("collector processes %q, want %s among them", c.Processes, collector)
	}
	if c.PeakRSSBytes <= 0 || c.PeakRSSBytes >= p.PeakRSSBytes {
		t.Errorf("collector peak RSS %d bytes (%s), want its own, below the workload's %d", c.PeakRSSBytes, c.PeakRSSSource, p.PeakRSSBytes)
	}
	for _, n := range p.Processes {
		if n == collector {
			t.Errorf("the workload's figures cover the collector too: %q", p.Processes)
		}
	}
}
