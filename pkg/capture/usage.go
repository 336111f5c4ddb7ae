package capture

import (
	"slices"
	"strings"

	"github.com/flameox/flameox/pkg/adapter"
	"github.com/flameox/flameox/pkg/broker"
	"github.com/flameox/flameox/pkg/contain"
	"github.com/flameox/flameox/pkg/run"
)

// workloadDepth says where the approved workload runs in the tree the
// broker starts, so that its resource use is recorded as its own rather
// than the collector's: one level below the collector when the adapter's
// argv is a prefix followed by the approved workload argv (`py-spy record
// … -- argv`, `perf record … -- argv`: the collector launches and reaps
// the workload), and two more under Bubblewrap, whose --unshare-pid (see
// contain.Wrap) puts a pid-namespace init between bwrap and the command.
// A collector that runs the workload in its own process (valgrind:
// adapter.InProcess) adds no level.
func workloadDepth(p *prepared) int {
	w := workloadArgv(p)
	d := 0
	in, _ := p.ad.(adapter.InProcess)
	if a := p.plan.Argv; len(a) > len(w) && slices.Equal(a[len(a)-len(w):], w) && (in == nil || !in.RunsWorkloadInProcess()) {
		d++
	}
	if p.plan.Containment.State == contain.Contained && len(p.plan.Wrapped) > len(p.plan.Argv) {
		d += 2
	}
	return d
}

// workloadArgv is the workload's argv as the plan runs it: the resolved
// executable and the instance's arguments.
func workloadArgv(p *prepared) []string {
	return append([]string{p.plan.Executable}, p.inst.Argv[1:]...)
}

// usageOf records the workload's resource use in p and, when processes
// ran above the workload, theirs in p.Collector.
func usageOf(p *run.ProcessInfo, res *broker.Result) {
	w := res.Workload
	p.UserTimeNs, p.SystemTimeNs, p.CPUSource = int64(w.UserCPU), int64(w.SysCPU), w.CPUSource
	p.PeakRSSBytes, p.PeakRSSSource = w.PeakRSS, w.PeakRSSSource
	p.Processes = w.Processes
	if c := res.Collector; c != nil {
		p.Collector = &run.Usage{Processes: append([]string{}, c.Processes...), ExitCode: res.ExitCode, Signal: res.Signal,
			UserTimeNs: int64(c.UserCPU), SystemTimeNs: int64(c.SysCPU), CPUSource: c.CPUSource,
			PeakRSSBytes: c.PeakRSS, PeakRSSSource: c.PeakRSSSource}
	}
}

// usageLimitations says which resource figures are not exact, and why.
func usageLimitations(p *run.ProcessInfo) []string {
	if p == nil {
		return nil
	}
	var lim []string
	switch {
	case p.PeakRSSSource == broker.RSSSampled && p.Collector != nil:
		lim = append(lim, "The workload's peak RSS was sampled from /proc while it ran (the collector "+
			strings.Join(p.Collector.Processes, ", ")+" reaps it, so only the collector's wait4 sees its exact peak); a peak reached just before a process exits can be missed. The collector's own use is recorded apart.")
	case p.PeakRSSSource == broker.RSSSampled:
		lim = append(lim, "Peak RSS was sampled from /proc while the workload ran (wait4 would have reported flameox's own memory); a peak shorter than the sampling interval can be missed.")
	case p.PeakRSSSource == broker.RSSUnknown:
		lim = append(lim, "Peak RSS is unknown: the workload ended before it could be sampled and wait4's value includes flameox's own memory.")
	}
	if p.ExitSource == ExitFromCollector && p.Collector != nil {
		lim = append(lim, "The workload's own exit status could not be read (its collector "+strings.Join(p.Collector.Processes, ", ")+
			" hides it, and the workload ended before flameox saw it or was reaped first on a kernel older than 6.15, which keeps no record); the exit status shown is the collector's, which need not say whether the workload succeeded.")
	}
	if p.CPUSource == broker.CPUSampled {
		lim = append(lim, "The workload's CPU time was sampled from /proc (a containment wrapper reaps the collector before flameox can read its children's total): a lower bound.")
	}
	return lim
}
