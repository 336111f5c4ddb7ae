package broker

import (
	"slices"
	"strings"
	"testing"

	"github.com/flameox/flameox/pkg/internal/testenv"
)

// holdPy allocates and touches 64 MiB, burns some CPU and holds the memory
// a while, so that the sampler (every 20 ms) sees the peak even on a
// loaded machine; nothing about the duration is asserted.
const holdPy = `import time
b = bytearray(64 << 20)
for i in range(0, len(b), 4096):
    b[i] = 1
sum(i * i for i in range(300000))
time.sleep(1.5)
`

// TestWrappedWorkloadUsage: with the workload one level below the started
// child (a collector that launches and reaps it, played by sh), the
// workload's peak RSS is its own, the collector's is reported apart, and
// the CPU time splits wait4's total exactly. The parent holds 200 MiB so
// that wait4's ru_maxrss carries flameox's memory and cannot be used.
func TestWrappedWorkloadUsage(t *testing.T) {
	ballast := make([]byte, 200<<20)
	for i := 0; i < len(ballast); i += 4096 {
		ballast[i] = 1
	}
	defer func() { ballast[0]++ }()
	// "; true" keeps sh from exec'ing python in its own place.
	wrapped := []string{"/bin/sh", "-c", `python3 -c "$0"; true`, holdPy}
	for _, tc := range []struct {
		name      string
		argv      []string
		depth     int
		collector []string
		cpu       string // the workload's CPU source
	}{
		{"direct", []string{"python3", "-c", holdPy}, 0, nil, CPUWait4},
		{"wrapped", wrapped, 1, []string{"sh"}, CPUProcStat},
		// Bubblewrap and its pid-namespace init stand above sh.
		{"contained", append([]string{"bwrap", "--die-with-parent", "--unshare-pid", "--ro-bind", "/", "/",
			"--dev", "/dev", "--proc", "/proc", "--"}, wrapped...), 3, []string{"bwrap", "sh"}, CPUSampled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.argv[0] == "bwrap" {
				testenv.LookPath(t, "bwrap")
			}
			res := run(t, Spec{Argv: tc.argv, WorkloadDepth: tc.depth})
			if res.ExitCode != 0 {
				t.Fatalf("exit %d: %s", res.ExitCode, res.Stderr.Data)
			}
			w := res.Workload
			if w.PeakRSS < 64<<20 || w.PeakRSSSource != RSSSampled {
				t.Errorf("workload peak RSS %d bytes (%s), want >= 64 MiB, sampled", w.PeakRSS, w.PeakRSSSource)
			}
			if res.PeakRSS < 64<<20 || res.PeakRSS > 150<<20 || res.PeakRSSSource != RSSSampled {
				t.Errorf("tree peak RSS %d bytes (%s), want the workload's 64 MiB and more, not the parent's 200 MiB", res.PeakRSS, res.PeakRSSSource)
			}
			// The kernel splits a process's exact CPU time into user and
			// system by where its clock ticks landed, and on a loaded
			// machine python's user share can round to nothing (seen in CI);
			// only the sum is exact, so the sum is what is asserted.
			if w.UserCPU+w.SysCPU <= 0 {
				t.Errorf("workload CPU %v+%v", w.UserCPU, w.SysCPU)
			}
			if !slices.ContainsFunc(w.Processes, func(n string) bool { return strings.HasPrefix(n, "python3") }) {
				t.Errorf("workload processes %q, want python3", w.Processes)
			}
			if tc.depth == 0 {
				if res.Collector != nil || w.CPUSource != CPUWait4 || w.UserCPU != res.UserCPU {
					t.Errorf("direct: collector %+v, workload %+v, tree user %v", res.Collector, w, res.UserCPU)
				}
				return
			}
			c := res.Collector
			if c == nil {
				t.Fatal("no collector usage")
			}
			if !slices.Equal(c.Processes, tc.collector) {
				t.Errorf("collector processes %q, want %q", c.Processes, tc.collector)
			}
			if c.PeakRSS <= 0 || c.PeakRSS >= 32<<20 || c.PeakRSSSource != RSSSampled {
				t.Errorf("collector (sh) peak RSS %d bytes (%s), want its own few MiB", c.PeakRSS, c.PeakRSSSource)
			}
			if w.CPUSource != tc.cpu || (tc.cpu == CPUProcStat && (w.UserCPU+c.UserCPU != res.UserCPU || w.SysCPU+c.SysCPU != res.SysCPU)) {
				t.Errorf("CPU split: workload %v+%v (%s), collector %v+%v, tree %v+%v",
					w.UserCPU, w.SysCPU, w.CPUSource, c.UserCPU, c.SysCPU, res.UserCPU, res.SysCPU)
			}
			if w.UserCPU+w.SysCPU < c.UserCPU+c.SysCPU {
				t.Errorf("python's CPU %v+%v is below sh's %v+%v", w.UserCPU, w.SysCPU, c.UserCPU, c.SysCPU)
			}
		})
	}
}

// TestPeakRSSSource: wait4's maximum is the workload's only when it
// clearly exceeds flameox's own high-water mark; one within a few percent
// of it is flameox's memory seen through the fork, and the sampled peak
// (or nothing) is reported instead.
func TestPeakRSSSource(t *testing.T) {
	const mib = 1 << 20
	sampled := &sampler{seen: map[procKey]*procUse{{pid: 2}: {depth: 0, hwm: 70 * mib}}}
	empty := &sampler{seen: map[procKey]*procUse{}}
	for _, tt := range []struct {
		name        string
		rusage, hwm int64
		s           *sampler
		want        int64
		source      string
	}{
		{"clearly above flameox's own", 300 * mib, 200 * mib, sampled, 300 * mib, RSSWait4},
		{"just above flameox's own", 205 * mib, 200 * mib, sampled, 70 * mib, RSSSampled},
		{"at flameox's own", 200 * mib, 200 * mib, sampled, 70 * mib, RSSSampled},
		{"nothing sampled", 205 * mib, 200 * mib, empty, 0, RSSUnknown},
		{"own mark unknown", 205 * mib, 0, empty, 205 * mib, RSSWait4},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, src := peakRSS(tt.rusage, tt.hwm, tt.s)
			if got != tt.want || src != tt.source {
				t.Fatalf("peakRSS(%d, %d) = %d %s, want %d %s", tt.rusage, tt.hwm, got, src, tt.want, tt.source)
			}
		})
	}
}
