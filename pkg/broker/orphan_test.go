package broker

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flameox/flameox/pkg/fault"
)

// marker returns a sleep duration unique to this test process and tag, so
// that /proc can be searched for the processes a test started by their
// command line ("sleep 31.<pid><tag>").
func marker(base, tag int) string {
	return fmt.Sprintf("%d.%d%04d", base, os.Getpid(), tag)
}

// findCmd returns the pids of live (non-zombie) processes whose command line
// is cmd.
func findCmd(cmd string) []int {
	procs, _ := scanProcs()
	var out []int
	for pid, p := range procs {
		if !p.dead() && cmdline(pid) == cmd {
			out = append(out, pid)
		}
	}
	return out
}

// waitCmd polls (generous deadline) until a process with command line cmd
// runs, and returns its pid, or 0.
func waitCmd(cmd string) int {
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if pids := findCmd(cmd); len(pids) > 0 {
			return pids[0]
		}
	}
	return 0
}

// waitGone polls until no live process has command line cmd; it reports
// whether that happened within a generous deadline.
func waitGone(cmd string) bool {
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if len(findCmd(cmd)) == 0 {
			return true
		}
	}
	return false
}

// The shape of issue 12: a grandchild double-forked into a session of its
// own, whose intermediate parent exits at once, so that no scan of the tree
// ever sees its ancestry. It is re-parented to flameox (the subreaper) and
// must be found there, killed, and counted.
func TestTimeoutKillsDoubleForkedOrphan(t *testing.T) {
	for name, scan := range map[string]time.Duration{"no scans": -1, "default scans": 0} {
		t.Run(name, func(t *testing.T) {
			escaped := marker(31, len(name))
			cmd := "sleep " + escaped
			script := "sleep 30 & (setsid sleep " + escaped + " &); sleep 30"
			res, err := Run(context.Background(), Spec{Argv: []string{"/bin/sh", "-c", script}, Env: testEnv,
				Timeout: 500 * time.Millisecond, Grace: 200 * time.Millisecond, ScanInterval: scan,
				OnStart: func(int) {
					if waitCmd(cmd) == 0 {
						t.Error("the double-forked grandchild never ran")
					}
				}})
			if !fault.Is(err, fault.ProcessTimeout) || res == nil || !res.TimedOut {
				t.Fatalf("err %v, result %+v; want PROCESS_TIMEOUT", err, res)
			}
			if left := findCmd(cmd); len(left) > 0 {
				t.Errorf("%s survived the timeout: pids %v", cmd, left)
				killChildren()
			}
			// sh, the orphan and the first sleep at least (a shell may exec
			// the last command in place of itself).
			if !res.CleanupComplete || len(res.Leftover) != 0 || res.Killed < 3 {
				t.Errorf("cleanup complete %v, leftover %v, killed %d; want true, none, >= 3",
					res.CleanupComplete, res.Leftover, res.Killed)
			}
		})
	}
}

// started is a run in progress in the background.
type started struct {
	pid    int
	cancel context.CancelFunc
	done   chan struct{}
	res    *Result
	err    error
}

// startRun starts spec through Run in the background and returns once the
// child runs.
func startRun(spec Spec) *started {
	ctx, cancel := context.WithCancel(context.Background())
	s := &started{cancel: cancel, done: make(chan struct{})}
	pids := make(chan int, 1)
	spec.OnStart = func(pid int) { pids <- pid }
	if spec.Env == nil {
		spec.Env = testEnv
	}
	go func() {
		defer close(s.done)
		s.res, s.err = Run(ctx, spec)
		if s.res == nil {
			pids <- 0
		}
	}()
	s.pid = <-pids
	return s
}

// stop cancels the run and waits for it.
func (s *started) stop() (*Result, error) {
	s.cancel()
	<-s.done
	return s.res, s.err
}

// A timeout kills this run's orphans and no orphan of a concurrent run: one
// that detached before this run started (no output pipe: the start-time
// rule) and one that detached after it started but holds the other run's
// stdout (the pipe rule). Those die when their own run ends.
func TestOrphansStayWithTheirRun(t *testing.T) {
	early, late, escaped := "sleep "+marker(1001, 1), "sleep "+marker(1002, 1), "sleep "+marker(31, 100)
	trigger := tempFile(t, "trigger")
	other := startRun(Spec{Argv: []string{"/bin/sh", "-c",
		"(setsid " + early + " </dev/null >/dev/null 2>&1 &); " +
			`while [ ! -e "$1" ]; do sleep 0.01; done; (setsid ` + late + " &); sleep 1000; echo",
		"sh", trigger}, Grace: time.Second})
	if other.pid == 0 || waitCmd(early) == 0 {
		other.stop()
		t.Fatal("the concurrent run did not start its first orphan")
	}
	res, err := Run(context.Background(), Spec{Argv: []string{"/bin/sh", "-c", "sleep 30 & (setsid " + escaped + " &); sleep 30"},
		Env: testEnv, Timeout: 300 * time.Millisecond, Grace: 200 * time.Millisecond,
		OnStart: func(int) {
			os.WriteFile(trigger, nil, 0o600)
			if waitCmd(late) == 0 || waitCmd(escaped) == 0 {
				t.Error("the orphans did not start")
			}
		}})
	if !fault.Is(err, fault.ProcessTimeout) || !res.CleanupComplete || len(res.Leftover) != 0 {
		t.Errorf("err %v, cleanup complete %v, leftover %v (%s); want PROCESS_TIMEOUT, true, none", err, res.CleanupComplete, res.Leftover, describe(res.Leftover))
	}
	if !waitGone(escaped) {
		t.Errorf("%s survived its run's timeout", escaped)
	}
	for _, cmd := range []string{early, late} {
		if len(findCmd(cmd)) == 0 {
			t.Errorf("%s, an orphan of the concurrent run, was killed by the other run", cmd)
		}
	}
	ores, oerr := other.stop()
	if !fault.Is(oerr, fault.ProcessCancelled) || !ores.CleanupComplete {
		t.Errorf("concurrent run: err %v, cleanup complete %v", oerr, ores.CleanupComplete)
	}
	for _, cmd := range []string{early, late} {
		if !waitGone(cmd) {
			t.Errorf("%s survived its own run", cmd)
		}
	}
}

// An orphan with no marker that started while two runs were in progress
// could be either's: the run that ends first leaves it and says cleanup is
// incomplete, naming it; the run that ends last, then its only candidate,
// kills it.
func TestAmbiguousOrphanIsReportedThenKilled(t *testing.T) {
	orphan := "sleep " + marker(32, 1)
	first := startRun(Spec{Argv: []string{"/bin/sleep", "1000"}, Grace: time.Second})
	if first.pid == 0 {
		t.Fatal("the first run did not start")
	}
	var pid int
	res, err := Run(context.Background(), Spec{
		Argv: []string{"/bin/sh", "-c", "(setsid " + orphan + " </dev/null >/dev/null 2>&1 &); sleep 30; echo"},
		Env:  testEnv, Timeout: 300 * time.Millisecond, Grace: 200 * time.Millisecond, ScanInterval: -1,
		OnStart: func(int) { pid = waitCmd(orphan) }})
	if pid == 0 || !fault.Is(err, fault.ProcessTimeout) {
		t.Fatalf("orphan %d, err %v", pid, err)
	}
	if res.CleanupComplete || !slices.Equal(res.Leftover, []int{pid}) {
		t.Errorf("cleanup complete %v, leftover %v; want false, [%d]", res.CleanupComplete, res.Leftover, pid)
	}
	if !running(pid, orphan) {
		t.Errorf("the orphan %d, possibly the first run's, was killed by the second", pid)
	}
	fres, ferr := first.stop()
	if !fault.Is(ferr, fault.ProcessCancelled) || !fres.CleanupComplete || fres.Killed != 2 {
		t.Errorf("first run: err %v, cleanup complete %v, killed %d; want complete, 2 (sleep, orphan)", ferr, fres.CleanupComplete, fres.Killed)
	}
	if !waitGone(orphan) {
		t.Errorf("%s survived the last run that could own it", orphan)
	}
}

// A descendant that no signal ends (spare stands in for uninterruptible
// sleep) makes cleanup incomplete, with its pid, even though every signal
// was sent: completeness is read from a scan after the kill.
func TestSurvivorMakesCleanupIncomplete(t *testing.T) {
	orphan := "sleep " + marker(33, 1)
	spare = func(pid int) bool { return cmdline(pid) == orphan }
	defer func() { spare = nil }()
	var pid int
	res, err := Run(context.Background(), Spec{Argv: []string{"/bin/sh", "-c", "(setsid " + orphan + " &); sleep 30; echo"},
		Env: testEnv, Timeout: 300 * time.Millisecond, Grace: 100 * time.Millisecond, ScanInterval: -1,
		OnStart: func(int) { pid = waitCmd(orphan) }})
	spare = nil
	defer killChildren()
	if pid == 0 || !fault.Is(err, fault.ProcessTimeout) {
		t.Fatalf("orphan %d, err %v", pid, err)
	}
	if res.CleanupComplete || !slices.Equal(res.Leftover, []int{pid}) {
		t.Errorf("cleanup complete %v, leftover %v; want false, [%d]", res.CleanupComplete, res.Leftover, pid)
	}
}

// describe lists the command lines of pids, for failure messages.
func describe(pids []int) string {
	var out []string
	for _, pid := range pids {
		out = append(out, fmt.Sprintf("%d: %q", pid, cmdline(pid)))
	}
	return strings.Join(out, ", ")
}
