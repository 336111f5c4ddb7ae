package broker

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/flameox/flameox/pkg/fault"
)

// stubborn ignores SIGTERM and starts a grandchild in a session of its own
// (out of the child's process group) that ignores SIGTERM too; it writes
// the grandchild's pid to $1. The trailing echo keeps sh from exec'ing the
// last sleep, so the tree is sh, sleep and the detached sleep.
const stubborn = `trap '' TERM
setsid sleep 1000 &
echo $! > "$1"
sleep 1000
echo not reached`

const (
	killTimeout = 300 * time.Millisecond
	killGrace   = 500 * time.Millisecond
)

// runStubborn runs the stubborn tree next to an unrelated bystander process,
// checks that the grandchild really left the process group, and returns the
// result, the error, how long Run took and the grandchild's pid.
func runStubborn(t *testing.T, ctx context.Context, timeout time.Duration) (*Result, time.Duration, int, error) {
	bystander, stopBystander := startBystander(t)
	defer stopBystander()
	pidFile := tempFile(t, "grandchild.pid")
	detached := make(chan bool, 1)
	spec := Spec{Argv: []string{"/bin/sh", "-c", stubborn, "sh", pidFile}, Env: testEnv,
		Timeout: timeout, Grace: killGrace, OnStart: func(root int) {
			go func() { // setsid runs a moment after $! is known: poll
				gc, buf := pollPid(pidFile), make([]byte, 4096)
				for i := 0; i < 100; i++ {
					if p, ok := readProc(gc, buf); ok && p.pgid != root && !p.dead() {
						detached <- true
						return
					}
					time.Sleep(2 * time.Millisecond)
				}
				detached <- false
			}()
		}}
	start := time.Now()
	res, err := Run(ctx, spec)
	elapsed := time.Since(start)
	select {
	case ok := <-detached:
		if !ok {
			t.Error("the grandchild was not running outside the child's process group")
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("the tree never started: %v", err)
	}
	if !running(bystander, "/bin/sleep 1000") {
		t.Error("killing the tree hit an unrelated process")
	}
	return res, elapsed, readPid(t, pidFile), err
}

// startBystander starts a process through the broker that is no part of the
// tree under test; it is a child of the test process like the orphans are.
func startBystander(t *testing.T) (pid int, stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	pids := make(chan int, 1)
	done := make(chan error, 1)
	go func() {
		_, err := Run(ctx, Spec{Argv: []string{"/bin/sleep", "1000"}, OnStart: func(pid int) { pids <- pid }})
		done <- err
	}()
	return <-pids, func() {
		cancel()
		if err := <-done; !fault.Is(err, fault.ProcessCancelled) {
			t.Errorf("bystander: %v", err)
		}
	}
}

// checkTreeGone asserts that the stubborn tree is gone: the grandchild is
// neither running nor left as our zombie, and the result says so.
func checkTreeGone(t *testing.T, res *Result, elapsed time.Duration, grandchild int, budget time.Duration) {
	t.Helper()
	// The grace period was given before SIGKILL; how long a loaded machine
	// took beyond it is not asserted.
	if elapsed < budget+killGrace {
		t.Errorf("Run took %v; want at least the budget and grace, %v", elapsed, budget+killGrace)
	}
	var buf [4096]byte
	if p, ok := readProc(grandchild, buf[:]); ok && (p.ppid == os.Getpid() || cmdline(grandchild) == "sleep 1000") {
		t.Errorf("grandchild %d survived: state %c, ppid %d", grandchild, p.state, p.ppid)
	}
	if !res.CleanupComplete || len(res.Leftover) != 0 || res.Killed != 3 {
		t.Errorf("cleanup complete %v, leftover %v, killed %d; want true, none, 3", res.CleanupComplete, res.Leftover, res.Killed)
	}
	if res.Signal != "SIGKILL" || res.ExitCode != -1 {
		t.Errorf("child ended with code %d signal %q, want SIGKILL", res.ExitCode, res.Signal)
	}
}

func TestTimeoutKillsDetachedTree(t *testing.T) {
	res, elapsed, grandchild, err := runStubborn(t, context.Background(), killTimeout)
	if !fault.Is(err, fault.ProcessTimeout) || res == nil || !res.TimedOut || res.Cancelled {
		t.Fatalf("err %v, result %+v; want PROCESS_TIMEOUT with TimedOut", err, res)
	}
	checkTreeGone(t, res, elapsed, grandchild, killTimeout)
}

func TestCancelKillsDetachedTree(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	time.AfterFunc(killTimeout, cancel)
	res, elapsed, grandchild, err := runStubborn(t, ctx, 0)
	if !fault.Is(err, fault.ProcessCancelled) || res == nil || !res.Cancelled || res.TimedOut {
		t.Fatalf("err %v, result %+v; want PROCESS_CANCELLED with Cancelled", err, res)
	}
	checkTreeGone(t, res, elapsed, grandchild, killTimeout)
}

func TestCancelledBeforeStart(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	started := false
	res, err := Run(ctx, Spec{Argv: []string{"/bin/true"}, OnStart: func(int) { started = true }})
	if !fault.Is(err, fault.ProcessCancelled) || res == nil || !res.Cancelled || started {
		t.Errorf("err %v, result %+v, started %v", err, res, started)
	}
}

// TestLeftoversAfterExit: descendants still running when the child exits on
// its own are killed and reaped, whether they stayed in the process group
// (found without any scan while the child ran) or detached (found by the
// scans while the child ran).
func TestLeftoversAfterExit(t *testing.T) {
	for name, tc := range map[string]struct {
		script string
		scan   time.Duration
	}{
		"in group": {`sleep 1000 & echo $! > "$1"`, -1},
		"detached": {`setsid sleep 1000 & echo $! > "$1"; sleep 0.3`, 20 * time.Millisecond},
	} {
		pidFile := tempFile(t, "leftover.pid")
		res := run(t, Spec{Argv: []string{"/bin/sh", "-c", tc.script, "sh", pidFile}, ScanInterval: tc.scan, Grace: time.Second})
		pid := readPid(t, pidFile)
		if res.ExitCode != 0 || res.TimedOut || !res.CleanupComplete || res.Killed != 1 {
			t.Errorf("%s: exit %d, timed out %v, complete %v, killed %d", name, res.ExitCode, res.TimedOut, res.CleanupComplete, res.Killed)
		}
		if exists(pid, "sleep 1000") {
			t.Errorf("%s: leftover %d still exists", name, pid)
		}
	}
}

func TestSubreaper(t *testing.T) {
	run(t, Spec{Argv: []string{"/bin/true"}})
	// PR_GET_CHILD_SUBREAPER stores the flag through its argument.
	var flag int32
	var err error
	if _, _, errno := unix.Syscall6(unix.SYS_PRCTL, unix.PR_GET_CHILD_SUBREAPER, uintptr(unsafe.Pointer(&flag)), 0, 0, 0, 0); errno != 0 {
		err = errno
	}
	if err != nil || flag != 1 || becomeSubreaper() != nil {
		t.Errorf("not a child subreaper after Run: flag %d, %v", flag, err)
	}
}

// TestOnStartPanic: a panicking callback must not leave the child running.
func TestOnStartPanic(t *testing.T) {
	var pid int
	func() {
		defer func() {
			if recover() == nil {
				t.Error("the panic was swallowed")
			}
		}()
		Run(t.Context(), Spec{Argv: []string{"/bin/sleep", "1000"}, OnStart: func(p int) { pid = p; panic("lease store down") }})
	}()
	time.Sleep(100 * time.Millisecond) // the zombie is reaped in the background
	if pid == 0 || exists(pid, "/bin/sleep 1000") {
		t.Errorf("child %d survived a panicking OnStart", pid)
	}
}

// holdInOnStart runs a workload whose OnStart writes the child's pid to
// file and never returns: the broker of TestKilledBeforeRecord, which is
// killed while it holds.
func holdInOnStart(file string) {
	Run(context.Background(), Spec{Argv: []string{"/bin/sleep", "1000"}, Env: testEnv, OnStart: func(pid int) {
		os.WriteFile(file, []byte(strconv.Itoa(pid)), 0o600)
		select {}
	}})
	os.Exit(3)
}

// TestKilledBeforeRecord: a broker killed outright before OnStart has
// recorded its child (where a capture writes child.json) takes the child
// with it, so that no workload is left that recovery cannot find.
func TestKilledBeforeRecord(t *testing.T) {
	becomeSubreaper() // the orphaned child comes to this process, which reaps it
	pidFile := tempFile(t, "child.pid")
	os.Remove(pidFile)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "FLAMEOX_BROKER_HOLD="+pidFile)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := pollPid(pidFile)
	if pid == 0 {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatal("the broker never started its child")
	}
	cmd.Process.Kill()
	cmd.Wait()
	deadline := time.Now().Add(5 * time.Second)
	for running(pid, "/bin/sleep 1000") {
		if time.Now().After(deadline) {
			unix.Kill(pid, unix.SIGKILL)
			unix.Wait4(pid, nil, 0, nil)
			t.Fatalf("child %d outlived its killed broker", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
	unix.Wait4(pid, nil, 0, nil) // a zombie of ours now
}
