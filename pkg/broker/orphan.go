package broker

import (
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// spawning is held shared by every Run from its fork to the registration
// of its tree, and exclusively by a scan while it looks for orphans: a
// child forked but not yet registered has flameox as its parent and no
// run in progress, so a scan in that window would take it for an orphan
// of the run that scans, and kill it.
var spawning sync.RWMutex

// inflight holds the trees of the runs in progress in this process, so that
// an orphan re-parented to flameox can be given to the run it came from.
// Its mutex also guards every registered tree's known map.
var inflight struct {
	mu    sync.Mutex
	trees map[*tree]struct{}
}

// register adds t to the runs in progress; unregister removes it once its
// root is reaped (until then the root's pid is pinned and still names it).
func (t *tree) register() {
	inflight.mu.Lock()
	defer inflight.mu.Unlock()
	if inflight.trees == nil {
		inflight.trees = map[*tree]struct{}{}
	}
	inflight.trees[t] = struct{}{}
}

func (t *tree) unregister() {
	inflight.mu.Lock()
	defer inflight.mu.Unlock()
	delete(inflight.trees, t)
}

// others returns the registered trees other than t. Call with inflight.mu
// held.
func (t *tree) others() []*tree {
	out := make([]*tree, 0, len(inflight.trees))
	for u := range inflight.trees {
		if u != t {
			out = append(out, u)
		}
	}
	return out
}

// ownership of an orphan, as seen by one tree.
type ownership int

const (
	notOurs   ownership = iota // another run's, or no run in progress could own it
	ours                       // this run's: adopt it
	ambiguous                  // this run or another run in progress could own it
)

// owner decides whether p, a process re-parented to flameox that is not
// the root of any run in progress, belongs to t. The rule (also in doc.go):
//
//  1. A process that a run in progress already knows (same pid and start
//     time), or that is in that run's process group, is that run's.
//  2. A process holding open a run's stdout or stderr pipe (a per-run
//     marker every descendant inherits unless it closes or redirects its
//     output) is that run's.
//  3. Otherwise it is the run's whose child started before it, when
//     exactly one run in progress did; when several did, no run adopts it
//     (each of them reports it as possibly left over), and when none did
//     it is no run's (it came from a run that has ended).
//
// other is the set of the other runs in progress. Call with inflight.mu
// held.
func (t *tree) owner(p proc, other []*tree) ownership {
	if st, ok := t.known[p.pid]; (ok && st == p.start) || p.pgid == t.root {
		return ours
	}
	for _, u := range other {
		if st, ok := u.known[p.pid]; (ok && st == p.start) || p.pgid == u.root {
			return notOurs
		}
	}
	if !p.dead() {
		if pipes := pipesOf(p.pid); len(pipes) > 0 {
			if t.holds(pipes) {
				return ours
			}
			for _, u := range other {
				if u.holds(pipes) {
					return notOurs
				}
			}
		}
	}
	if !t.before(p) {
		return notOurs
	}
	for _, u := range other {
		if u.before(p) {
			return ambiguous
		}
	}
	return ours
}

// before reports whether t's root started before p did. Start times count
// clock ticks; within one tick the pids tell, because the kernel hands out
// pids in increasing order, wrapping at pid_max (far more forks than fit
// in a tick would be needed to wrap further than half way round).
func (t *tree) before(p proc) bool {
	switch {
	case t.rootStart == 0:
		return false
	case p.start != t.rootStart:
		return p.start > t.rootStart
	}
	d := (p.pid - t.root + pidMax()) % pidMax()
	return d > 0 && d < pidMax()/2
}

var pidMaxOnce = sync.OnceValue(func() int {
	b, err := os.ReadFile("/proc/sys/kernel/pid_max")
	if n, perr := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && perr == nil && n > 0 {
		return n
	}
	return 1 << 22 // the kernel's limit on 64-bit systems
})

func pidMax() int { return pidMaxOnce() }

// holds reports whether pipes names one of t's output pipes.
func (t *tree) holds(pipes []uint64) bool {
	for _, a := range pipes {
		for _, b := range t.pipes {
			if a == b {
				return true
			}
		}
	}
	return false
}

// pipesOf returns the inode numbers of the pipes pid holds open, from
// /proc/<pid>/fd (readable for processes of flameox's own user).
func pipesOf(pid int) []uint64 {
	dir := "/proc/" + strconv.Itoa(pid) + "/fd/"
	d, err := os.Open(dir)
	if err != nil {
		return nil
	}
	names, _ := d.Readdirnames(-1)
	d.Close()
	var out []uint64
	for _, n := range names {
		link, err := os.Readlink(dir + n)
		if err != nil {
			continue
		}
		if s, ok := strings.CutPrefix(link, "pipe:["); ok {
			if ino, err := strconv.ParseUint(strings.TrimSuffix(s, "]"), 10, 64); err == nil {
				out = append(out, ino)
			}
		}
	}
	return out
}

// pipeInode returns the inode number of a pipe, or 0. It goes through
// Stat, not Fd, which would put the pipe in blocking mode (and a blocked
// read could then not be ended by closing the file).
func pipeInode(f *os.File) uint64 {
	st, err := f.Stat()
	if err != nil {
		return 0
	}
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		return s.Ino
	}
	return 0
}
