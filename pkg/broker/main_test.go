package broker

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestMain fails the suite if any child of the test process (running or
// zombie) is left once every test has run: with the subreaper set, every
// orphan of every test ends up as our child, so this sees all leaks.
func TestMain(m *testing.M) {
	if f := os.Getenv("FLAMEOX_BROKER_HOLD"); f != "" {
		holdInOnStart(f) // TestKilledBeforeRecord's broker
	}
	code := m.Run()
	if left := ourChildren(); len(left) > 0 {
		fmt.Fprintf(os.Stderr, "leaked child processes: %v\n", left)
		code = 1
		killChildren()
	}
	os.Exit(code)
}

// killChildren kills and reaps what a failed test left behind, so that it
// does not outlive the test binary. Everything whose parent is the test
// process was started by a test or is an orphan of one (we are a subreaper).
func killChildren() {
	for i := 0; i < 50; i++ {
		procs, _ := scanProcs()
		n := 0
		for pid, p := range procs {
			if p.ppid == os.Getpid() {
				n++
				unix.Kill(pid, unix.SIGKILL)
				unix.Wait4(pid, nil, unix.WNOHANG, nil)
			}
		}
		if n == 0 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// ourChildren lists "pid state cmdline" for every child of this process.
func ourChildren() []string {
	var out []string
	deadline := time.Now().Add(time.Second) // allow racing exits to settle
	for {
		out = out[:0]
		procs, err := scanProcs()
		if err != nil {
			return []string{err.Error()}
		}
		for pid, p := range procs {
			if p.ppid == os.Getpid() {
				out = append(out, fmt.Sprintf("%d %c %s", pid, p.state, cmdline(pid)))
			}
		}
		if len(out) == 0 || time.Now().After(deadline) {
			return out
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func cmdline(pid int) string {
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	return strings.TrimSpace(string(bytes.ReplaceAll(b, []byte{0}, []byte{' '})))
}

// running reports whether pid is a live (non-zombie) process whose command
// line is cmd. The cmdline check keeps a recycled pid from passing as the
// process the test started.
func running(pid int, cmd string) bool {
	var buf [4096]byte
	p, ok := readProc(pid, buf[:])
	return ok && !p.dead() && cmdline(pid) == cmd
}

// exists reports whether any process (zombie or not) with pid and cmdline
// cmd remains.
func exists(pid int, cmd string) bool {
	_, err := os.Stat("/proc/" + strconv.Itoa(pid))
	return err == nil && cmdline(pid) == cmd
}

var testEnv = []string{"PATH=/usr/bin:/bin"}

// run is Run with a test timeout and the test's failure on refusal or spawn
// failure.
func run(t *testing.T, spec Spec) *Result {
	t.Helper()
	if spec.Timeout == 0 {
		spec.Timeout = 30 * time.Second
	}
	if spec.Env == nil {
		spec.Env = testEnv
	}
	res, err := Run(context.Background(), spec)
	if err != nil {
		t.Fatalf("Run(%q): %v", spec.Argv, err)
	}
	return res
}

// pollPid waits up to 2 s for a pid file written by a test script; 0 if
// none appears.
func pollPid(path string) int {
	for i := 0; i < 200; i++ {
		b, _ := os.ReadFile(path)
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && pid > 0 {
			return pid
		}
		time.Sleep(10 * time.Millisecond)
	}
	return 0
}

func readPid(t *testing.T, path string) int {
	t.Helper()
	pid := pollPid(path)
	if pid == 0 {
		t.Fatalf("no pid in %s", path)
	}
	return pid
}

func tempFile(t *testing.T, name string) string {
	return filepath.Join(t.TempDir(), name)
}
