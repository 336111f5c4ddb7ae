package broker

import (
	"maps"
	"os"
	"os/exec"
	"slices"
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
