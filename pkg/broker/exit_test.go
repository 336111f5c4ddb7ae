package broker

import (
	"os/exec"
	"slices"
	"testing"
	"time"
)

// TestWorkloadExitBelowCollector: a "collector" that launches the
// workload as its child and exits 0 whatever the workload's status (as
// py-spy record does): with WatchArgv the workload's own status comes
// back, an exit code or a signal, and the started child's stays its own.
func TestWorkloadExitBelowCollector(t *testing.T) {
	for _, tc := range []struct {
		name, workload string
		code           int
		signal         string
	}{
		{"exit", "sleep 0.05; exit 3", 3, ""},
		{"success", "sleep 0.05; exit 0", 0, ""},
		{"signal", "sleep 0.05; kill -TERM $$", -1, "SIGTERM"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Helper children of the collector run first (as pyenv's
			// do beside a shimmed py-spy), one of them a subshell with
			// the collector's own command line: neither is the workload.
			// The collector's command line ends with the workload's
			// arguments, as py-spy's does.
			res := run(t, Spec{Argv: []string{"/bin/sh", "-c", `/bin/sh -c "sleep 0.02; exit 9"; (sleep 0.02; exit 8); /bin/sh -c "$1" w; exit 0`, "-c", tc.workload, "w"},
				WorkloadDepth: 1, WatchArgv: []string{"/bin/sh", "-c", tc.workload, "w"}})
			if res.ExitCode != 0 {
				t.Fatalf("the collector's exit = %d, want 0", res.ExitCode)
			}
			e := res.WorkloadExit
			if e == nil {
				t.Fatal("the workload's exit was not read")
			}
			t.Logf("read from %s", e.Source)
			if e.Code != tc.code || e.Signal != tc.signal || (e.Source != ExitPidfd && e.Source != ExitProcStat) {
				t.Errorf("workload exit = %+v, want code %d signal %q", e, tc.code, tc.signal)
			}
		})
	}
	// Not asked for: nothing is read.
	if res := run(t, Spec{Argv: []string{"/bin/sh", "-c", `/bin/sh -c "sleep 0.05; exit 3"; exit 0`}, WorkloadDepth: 1}); res.WorkloadExit != nil {
		t.Errorf("WorkloadExit = %+v without WatchArgv", res.WorkloadExit)
	}
}

// TestExitWatchZombie: before its parent reaps it, an exited process's
// status is read from /proc (the path kernels before 6.15 depend on).
func TestExitWatchZombie(t *testing.T) {
	cmd := exec.Command("/bin/sh", "-c", "sleep 0.1; exit 7")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	var buf [4096]byte
	p, ok := readProc(cmd.Process.Pid, buf[:])
	if !ok {
		t.Fatal("cannot read the child")
	}
	w := watchExit(cmd.Process.Pid, p.start, buf[:])
	if w == nil {
		t.Fatal("watchExit refused a live child")
	}
	select {
	case <-w.done:
	case <-time.After(30 * time.Second):
		t.Fatal("the watch never saw the exit")
	}
	// Still a zombie (not reaped): /proc has its status, whatever the
	// kernel's own record holds by now.
	if e := w.stat; e == nil || e.Code != 7 || e.Source != ExitProcStat {
		t.Errorf("exit read from /proc = %+v, want 7 from proc_stat", e)
	}
	if e := w.finish(); e == nil || e.Code != 7 {
		t.Errorf("exit = %+v, want 7", e)
	}
	if w := watchExit(cmd.Process.Pid, p.start+1, buf[:]); w != nil {
		w.finish()
		t.Error("watchExit followed a process with another start time")
	}
}

func TestRunsArgv(t *testing.T) {
	py := []string{"/w/.venv/bin/python3", "train.py", "good"}
	for _, tc := range []struct {
		cmdline string
		argv    []string
		want    bool
	}{
		{"/w/.venv/bin/python3\x00train.py\x00good\x00", py, true},
		// A shim (a bash script) and its exec chain keep the arguments.
		{"bash\x00/root/.pyenv/shims/python3\x00train.py\x00good\x00", py, true},
		{"bash\x00/root/.pyenv/libexec/pyenv\x00exec\x00python3\x00train.py\x00good\x00", py, true},
		{"/usr/bin/python3.11\x00train.py\x00good\x00", py, true},
		// The collector's helpers and its child before exec do not.
		{"bash\x00/root/.pyenv/libexec/pyenv-version-name\x00", py, false},
		{"py-spy\x00record\x00--\x00/w/.venv/bin/python3\x00train.py\x00good\x00x\x00", py, false},
		{"train.py\x00good\x00", py, false}, // no program word before the arguments
		{"", py, false},
		// Without arguments the program's name decides.
		{"./bench\x00", []string{"/w/bench"}, true},
		{"bash\x00/root/.pyenv/libexec/pyenv-which\x00", []string{"/w/bench"}, false},
		{"x\x00", nil, false},
	} {
		if got := runs([]byte(tc.cmdline), tc.argv); got != tc.want {
			t.Errorf("runs(%q, %q) = %v, want %v", tc.cmdline, tc.argv, got, tc.want)
		}
	}
}

// TestWorkloadUsageBelowShimmedCollector: a collector reached through a
// shim whose helpers run before it launches the workload (pyenv's beside
// a shimmed py-spy): with the workload followed, the helpers' CPU time
// and names are the collector's, not the workload's.
func TestWorkloadUsageBelowShimmedCollector(t *testing.T) {
	helper := `(i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done)` // CPU-bound work in a subshell
	res := run(t, Spec{Argv: []string{"/bin/sh", "-c", helper + `; /bin/sh -c "$1" w; exit 0`, "-c", "sleep 0.2", "w"},
		WorkloadDepth: 1, WatchArgv: []string{"/bin/sh", "-c", "sleep 0.2", "w"}})
	if res.WorkloadExit == nil || res.Collector == nil {
		t.Fatalf("the workload was not followed: %+v", res)
	}
	w, c := res.Workload.UserCPU+res.Workload.SysCPU, res.Collector.UserCPU+res.Collector.SysCPU
	if c < 50*time.Millisecond {
		t.Fatalf("the helper's work took %s of CPU, too little to tell apart", c)
	}
	if w >= c/2 {
		t.Errorf("the workload (sleep) is charged %s of CPU, the collector %s: the helper's work went to the workload", w, c)
	}
	if len(res.Workload.Processes) == 0 || res.Workload.Processes[0] != "sh" || !slices.Contains(res.Workload.Processes, "sleep") {
		t.Errorf("workload processes %q", res.Workload.Processes)
	}
	t.Logf("workload %s %s (%s), collector %s %s", w, res.Workload.Processes, res.Workload.CPUSource, c, res.Collector.Processes)
}
