package flameox

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/flameox/flameox/pkg/run"
)

// liveCmd lists the pids of running processes whose command line is cmd.
func liveCmd(cmd string) []int {
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	var out []int
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, "cmdline"))
		if err != nil || string(bytes.TrimRight(bytes.ReplaceAll(b, []byte{0}, []byte{' '}), " ")) != cmd {
			continue
		}
		if st, _ := os.ReadFile(filepath.Join(d, "stat")); bytes.Contains(st, []byte(") Z ")) {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(d))
		out = append(out, pid)
	}
	return out
}

// The workload of issue 12, defect 6: a grandchild double-forked into a
// session of its own outlived the timeout while the run said
// cleanup_complete: true.
func TestCaptureTimeoutKillsDoubleForkedGrandchild(t *testing.T) {
	escaped := fmt.Sprintf("sleep 31.%d", os.Getpid())
	dir := captureProject(t, `schema_version = 1
[workloads.daemon]
argv = ["/bin/sh", "-c", "sleep 30 & (setsid `+escaped+` &); sleep 30"]
timeout_seconds = 1
`, "daemon")
	r := tool(t, "flameox", dir, nil, "capture", "run", "process", "--workload", "daemon", "--json")
	if r.exit != 8 {
		t.Fatalf("exit %d, want 8 (timed out)\n%s", r.exit, r.stderr)
	}
	res := runOf(t, r.stdout)
	if res.Run.ExecutionStatus != run.ExecTimedOut || res.Run.Process == nil || !res.Run.Process.CleanupComplete ||
		len(res.Run.Process.Leftover) != 0 {
		t.Errorf("run %+v, process %+v", res.Run, res.Run.Process)
	}
	// flameox has exited: a survivor would now be init's child. Poll with a
	// generous deadline in case a kill is still being delivered.
	var left []int
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if left = liveCmd(escaped); len(left) == 0 {
			return
		}
	}
	for _, pid := range left {
		if p, err := os.FindProcess(pid); err == nil {
			p.Kill()
		}
	}
	t.Errorf("%s survived the capture's timeout: %v", escaped, left)
}
