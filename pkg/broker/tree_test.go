package broker

import (
	"maps"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/flameox/flameox/pkg/internal/testenv"
)

// belowSelf filters a full /proc scan to the processes below pid by ppid
// links: what descendants must find.
func belowSelf(procs map[int]proc, pid int) []int {
	children := map[int][]int{}
	for p, pr := range procs {
		children[pr.ppid] = append(children[pr.ppid], p)
	}
	var out []int
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, k := range children[p] {
			out = append(out, k)
			queue = append(queue, k)
		}
	}
	slices.Sort(out)
	return out
}

// The children-list walk finds exactly what a full /proc scan finds below
// flameox: a child, its grandchild in a new session (escaped from the
// group) and the orphan of an exited intermediate process, re-parented to
// the subreaper.
func TestDescendantsMatchFullScan(t *testing.T) {
	if err := becomeSubreaper(); err != nil {
		t.Fatalf("subreaper: %v", err)
	}
	if _, ok := childrenOf(os.Getpid(), make([]byte, 4096)); !ok {
		testenv.Skip(t, "/proc children lists", "missing", "this kernel has no /proc/<pid>/task/<tid>/children (CONFIG_PROC_CHILDREN); the broker falls back to a full scan")
	}
	// sh forks a setsid sleeper and a sub-shell that forks another sleeper
	// and exits, orphaning it onto us.
	cmd := exec.Command("/bin/sh", "-c", "setsid sleep 30 & (sleep 30 &) ; sleep 30")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	root := cmd.Process.Pid
	defer func() {
		tr := newTree(root)
		tr.terminate(0)
		cmd.Wait()
		killChildren()
	}()
	var got, want []int
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		d, ok := descendants(os.Getpid())
		if !ok {
			t.Fatal("descendants failed on a kernel that has children files")
		}
		all, err := scanProcs()
		if err != nil {
			t.Fatal(err)
		}
		got, want = slices.Sorted(maps.Keys(d)), belowSelf(all, os.Getpid())
		if len(want) >= 4 && slices.Equal(got, want) {
			break
		}
	}
	if len(want) < 4 || !slices.Equal(got, want) {
		t.Fatalf("descendants %v, full scan %v (want the shell and three sleepers)", got, want)
	}
}

func BenchmarkTreeScan(b *testing.B) {
	becomeSubreaper()
	cmd := exec.Command("/bin/sleep", "30")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	b.Run("children", func(b *testing.B) {
		for b.Loop() {
			descendants(os.Getpid())
		}
	})
	b.Run("proc", func(b *testing.B) {
		for b.Loop() {
			scanProcs()
		}
	})
}

// What the sampler reads at every poll, with fewer system calls, is what
// the files it no longer opens say: the command name from stat equals
// /proc/<pid>/comm (a name with spaces and parentheses included), status
// gives VmHWM and Threads as the file lists them, and a single-threaded
// process's children, read without listing its task directory, are the
// ones childrenOf finds.
func TestPollReadsMatchProcFiles(t *testing.T) {
	if _, ok := childrenOf(os.Getpid(), make([]byte, 4096)); !ok {
		testenv.Skip(t, "/proc children lists", "missing", "this kernel has no /proc/<pid>/task/<tid>/children (CONFIG_PROC_CHILDREN)")
	}
	odd := t.TempDir() + "/a) (b c"
	sh, err := os.ReadFile("/bin/sh")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(odd, sh, 0o755); err != nil {
		t.Fatal(err)
	}
	pid, kids := shellWithSleepers(t, odd, 2)
	buf := make([]byte, 4096)
	for _, p := range append([]int{pid, os.Getpid()}, kids...) {
		st, ok := readProc(p, buf)
		comm, err := os.ReadFile("/proc/" + strconv.Itoa(p) + "/comm")
		if !ok || err != nil || st.comm != strings.TrimSuffix(string(comm), "\n") {
			t.Errorf("pid %d: comm from stat %q, /proc/<pid>/comm %q (%v)", p, st.comm, comm, err)
		}
		status, err := os.ReadFile("/proc/" + strconv.Itoa(p) + "/status")
		if err != nil {
			t.Fatal(err)
		}
		hwm, threads := readStatus(p, buf)
		if want := statusField(status, "Threads:"); int64(threads) != want || want == 0 {
			t.Errorf("pid %d: Threads %d, the file says %d", p, threads, want)
		}
		if p != os.Getpid() { // this test's own peak may grow between the reads
			if want := statusField(status, "VmHWM:") * 1024; hwm != want || want == 0 {
				t.Errorf("pid %d: VmHWM %d, the file says %d", p, hwm, want)
			}
		}
		want, ok1 := childrenOf(p, buf)
		got, ok2 := childrenOfThreads(p, threads, buf)
		if !ok1 || !ok2 || !slices.Equal(got, want) {
			t.Errorf("pid %d (%d threads): children %v, childrenOf %v", p, threads, got, want)
		}
	}
	if st, _ := readProc(pid, buf); st.comm != "a) (b c" {
		t.Errorf("comm %q, want the executable's name", st.comm)
	}
	// A process that is gone has no children, whichever way they are read.
	if kids, ok := childrenOfThreads(1<<22+1, 1, buf); !ok || kids != nil {
		t.Errorf("children of a pid that does not exist: %v, %v", kids, ok)
	}
	if hwm, threads := readStatus(1<<22+1, buf); hwm != 0 || threads != 0 {
		t.Errorf("status of a pid that does not exist: %d, %d", hwm, threads)
	}
}

// The sampler's files kept open between polls read what opening them anew
// reads, over several polls of a shell and its children; a child that
// is killed and reaped has its files closed at the next sweep, at most maxOpenProcs
// processes keep files open, and none stays open once the sampler stops.
func TestSamplerFilesMatchFreshReads(t *testing.T) {
	if _, ok := childrenOf(os.Getpid(), make([]byte, 4096)); !ok {
		testenv.Skip(t, "/proc children lists", "missing", "this kernel has no /proc/<pid>/task/<tid>/children (CONFIG_PROC_CHILDREN)")
	}
	openFDs := func() int {
		ents, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Fatal(err)
		}
		return len(ents)
	}
	pid, kids := shellWithSleepers(t, "/bin/sh", 41)
	before := openFDs() // after the start: the os.Process holds a pidfd
	buf := make([]byte, 4096)
	pf := procFiles{}
	poll := func() (gone int) {
		for _, p := range append([]int{pid}, kids...) {
			got, f, ok := pf.stat(p, buf)
			want, wok := readProc(p, buf)
			if ok != wok || got != want {
				t.Fatalf("pid %d: stat through kept files %+v %v, read anew %+v %v", p, got, ok, want, wok)
			}
			if !ok {
				gone++
				continue
			}
			hwm, threads := pf.status(p, f, buf)
			whwm, wthreads := readStatus(p, buf)
			if hwm != whwm || threads != wthreads {
				t.Fatalf("pid %d: status %d %d, read anew %d %d", p, hwm, threads, whwm, wthreads)
			}
			c, cok := pf.children(p, threads, f, buf)
			wc, wcok := childrenOf(p, buf)
			if cok != wcok || !slices.Equal(c, wc) {
				t.Fatalf("pid %d: children %v, read anew %v", p, c, wc)
			}
		}
		pf.sweep()
		return gone
	}
	for range 3 {
		poll()
	}
	if len(pf) > maxOpenProcs {
		t.Fatalf("%d processes keep files open, the bound is %d", len(pf), maxOpenProcs)
	}
	kept := len(pf)
	// One sleeper ends, and the shell reaps it.
	if err := syscall.Kill(kids[0], syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if _, ok := readProc(kids[0], buf); !ok {
			break
		}
	}
	if gone := poll(); gone != 1 {
		t.Fatalf("%d processes gone after a sleeper was killed, want 1", gone)
	}
	poll()
	if len(pf) > kept {
		t.Fatalf("files open for %d processes after one exited, %d before", len(pf), kept)
	}
	pf.closeAll()
	if n := openFDs(); n != before {
		t.Fatalf("%d descriptors open after closeAll, %d before", n, before)
	}
	// The sampler itself closes what it kept once it stops.
	s := sampleTree(pid, make(chan struct{}), -1, nil)
	time.Sleep(60 * time.Millisecond)
	s.halt()
	if n := openFDs(); n != before {
		t.Fatalf("%d descriptors open after the sampler stopped, %d before", n, before)
	}
}

// shellWithSleepers starts the shell sh with n sleeping children, waits
// until it has them all and returns its pid and theirs; the tree is
// ended when the test is.
func shellWithSleepers(t *testing.T, sh string, n int) (int, []int) {
	t.Helper()
	cmd := exec.Command(sh, "-c", "for i in $(seq "+strconv.Itoa(n)+"); do sleep 30 & done; wait")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { newTree(cmd.Process.Pid).terminate(0); cmd.Wait() })
	var kids []int
	buf := make([]byte, 4096)
	for deadline := time.Now().Add(5 * time.Second); len(kids) < n && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		kids, _ = childrenOf(cmd.Process.Pid, buf)
	}
	if len(kids) != n {
		t.Fatalf("the shell's children: %v, want %d sleepers", kids, n)
	}
	return cmd.Process.Pid, kids
}
