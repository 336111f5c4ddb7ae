package publish

import (
	"maps"
	"testing"

	"github.com/flameox/flameox/pkg/run"
)

// TestProcessRowsSayWhichProcess: every process fact names the processes
// it covers; a collector's own use is published apart from the
// workload's, under collector.*, never as the workload's.
func TestProcessRowsSayWhichProcess(t *testing.T) {
	type want struct {
		v    int64
		dims map[string]string
	}
	for _, tc := range []struct {
		name string
		p    *run.ProcessInfo
		want map[string]want
	}{
		{"process adapter", &run.ProcessInfo{WallTimeNs: 5, UserTimeNs: 3, SystemTimeNs: 1, PeakRSSBytes: 64 << 20,
			PeakRSSSource: "wait4", CPUSource: "wait4", Processes: []string{"python3.11"}},
			map[string]want{
				"process.wall_time":   {5, map[string]string{"process": "started"}},
				"process.exit_code":   {0, map[string]string{"process": "started"}},
				"process.user_time":   {3, map[string]string{"process": "workload", "processes": "python3.11", "source": "wait4"}},
				"process.system_time": {1, map[string]string{"process": "workload", "processes": "python3.11", "source": "wait4"}},
				"process.peak_rss":    {64 << 20, map[string]string{"process": "workload", "processes": "python3.11", "source": "wait4"}},
			}},
		{"wrapped by py-spy", &run.ProcessInfo{WallTimeNs: 9, UserTimeNs: 3, SystemTimeNs: 1, PeakRSSBytes: 64 << 20,
			ExitCode: 3, ExitSource: "pidfd_info",
			PeakRSSSource: "sampled", CPUSource: "proc_stat", Processes: []string{"python3.11"},
			Collector: &run.Usage{Processes: []string{"py-spy"}, UserTimeNs: 2, SystemTimeNs: 4, CPUSource: "proc_stat",
				PeakRSSBytes: 8 << 20, PeakRSSSource: "sampled"}},
			map[string]want{
				"process.wall_time":     {9, map[string]string{"process": "started"}},
				"process.exit_code":     {3, map[string]string{"process": "workload", "processes": "python3.11", "source": "pidfd_info"}},
				"collector.exit_code":   {0, map[string]string{"process": "started"}},
				"process.user_time":     {3, map[string]string{"process": "workload", "processes": "python3.11", "source": "proc_stat"}},
				"process.system_time":   {1, map[string]string{"process": "workload", "processes": "python3.11", "source": "proc_stat"}},
				"process.peak_rss":      {64 << 20, map[string]string{"process": "workload", "processes": "python3.11", "source": "sampled"}},
				"collector.user_time":   {2, map[string]string{"process": "collector", "processes": "py-spy", "source": "proc_stat"}},
				"collector.system_time": {4, map[string]string{"process": "collector", "processes": "py-spy", "source": "proc_stat"}},
				"collector.peak_rss":    {8 << 20, map[string]string{"process": "collector", "processes": "py-spy", "source": "sampled"}},
			}},
		{"recorded before sources were kept", &run.ProcessInfo{UserTimeNs: 3, PeakRSSSource: "wait4"},
			map[string]want{
				"process.wall_time":   {0, map[string]string{"process": "started"}},
				"process.exit_code":   {0, map[string]string{"process": "started"}},
				"process.user_time":   {3, map[string]string{"process": "workload", "source": "wait4"}},
				"process.system_time": {0, map[string]string{"process": "workload", "source": "wait4"}},
				"process.peak_rss":    {0, map[string]string{"process": "workload", "source": "wait4"}},
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &run.Manifest{RunID: "r1", Workload: &run.WorkloadInfo{Name: "wl"}, ExecutionStatus: run.ExecSucceeded, Process: tc.p}
			rows, err := processRows(m)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]want{}
			for _, r := range rows {
				if r.Scope != "process" || r.Subject != "wl" || r.Int == nil {
					t.Errorf("%s: scope %q subject %q", r.Name, r.Scope, r.Subject)
					continue
				}
				got[r.Name] = want{*r.Int, r.Dimensions}
			}
			if len(got) != len(tc.want) {
				t.Errorf("rows %v, want %v", got, tc.want)
			}
			for name, w := range tc.want {
				if g, ok := got[name]; !ok || g.v != w.v || !maps.Equal(g.dims, w.dims) {
					t.Errorf("%s = %+v, want %+v", name, g, w)
				}
			}
		})
	}
}
