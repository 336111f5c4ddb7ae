package broker

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// How the tree is polled while it is being terminated.
const (
	termPoll   = 20 * time.Millisecond
	killPoll   = 10 * time.Millisecond
	killWindow = 2 * time.Second
)

var subreaper struct {
	once sync.Once
	err  error
}

// becomeSubreaper makes this process a child subreaper (once; the flag is
// per process and cannot usefully be undone while children may be running).
// Orphaned descendants of a started child are then re-parented to flameox
// instead of init, so they stay visible in the ppid tree and can be killed
// and reaped. The error is kept for diagnostics: without it the broker still
// kills what it finds, but init reaps the orphans.
func becomeSubreaper() error {
	subreaper.once.Do(func() {
		subreaper.err = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
	})
	return subreaper.err
}

// proc is one line of /proc/<pid>/stat.
type proc struct {
	pid, ppid, pgid int
	state           byte
	start           uint64 // clock ticks after boot; (pid, start) names a process
	// CPU time in clock ticks: the process's own (every thread, living or
	// not), and that of the children it has waited for (cutime, cstime).
	utime, stime, cutime, cstime uint64
	// exit is field 52, the wait status the process exited with (as
	// waitpid reports it); meaningful only once it is dead.
	exit    int
	hasExit bool
	comm    string // field 2 without its parentheses: what /proc/<pid>/comm holds
}

func (p proc) dead() bool { return p.state == 'Z' || p.state == 'X' }

// readProc reads /proc/<pid>/stat with three system calls.
func readProc(pid int, buf []byte) (proc, bool) {
	fd, err := unix.Open("/proc/"+strconv.Itoa(pid)+"/stat", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return proc{}, false
	}
	n, err := unix.Read(fd, buf)
	unix.Close(fd)
	if err != nil || n <= 0 {
		return proc{}, false
	}
	return parseStat(pid, buf[:n])
}

// parseStat parses the contents of /proc/<pid>/stat.
func parseStat(pid int, b []byte) (proc, bool) {
	i := bytes.LastIndexByte(b, ')') // the command name may hold spaces and ')'
	if i < 0 {
		return proc{}, false
	}
	f := bytes.Fields(b[i+1:]) // f[0] is field 3 (state)
	if len(f) < 20 || len(f[0]) == 0 {
		return proc{}, false
	}
	p := proc{pid: pid, state: f[0][0]}
	if j := bytes.IndexByte(b, '('); j >= 0 && j < i {
		p.comm = string(b[j+1 : i])
	}
	var e1, e2, e3 error
	p.ppid, e1 = strconv.Atoi(string(f[1]))
	p.pgid, e2 = strconv.Atoi(string(f[2]))
	p.start, e3 = strconv.ParseUint(string(f[19]), 10, 64)
	for i, v := range []*uint64{&p.utime, &p.stime, &p.cutime, &p.cstime} {
		*v, _ = strconv.ParseUint(string(f[11+i]), 10, 64) // fields 14-17
	}
	if len(f) >= 50 {
		var err error
		p.exit, err = strconv.Atoi(string(f[49]))
		p.hasExit = err == nil
	}
	return p, e1 == nil && e2 == nil && e3 == nil
}

// scanProcs reads every process in /proc.
func scanProcs() (map[int]proc, error) {
	d, err := os.Open("/proc")
	if err != nil {
		return nil, err
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return nil, err
	}
	buf := make([]byte, 4096)
	procs := make(map[int]proc, len(names))
	for _, n := range names {
		pid, err := strconv.Atoi(n)
		if err != nil {
			continue
		}
		if p, ok := readProc(pid, buf); ok {
			procs[pid] = p
		}
	}
	return procs, nil
}

// descendants reads flameox's own descendants by walking down the
// kernel's children lists (/proc/<pid>/task/<tid>/children) from this
// process. As a child subreaper flameox keeps every living descendant of a
// started child below itself (orphans are re-parented to it, never to
// init), so this set holds every process a tree can own, at a cost that
// grows with flameox's descendants instead of with every process on the
// machine (a full /proc scan is ~3 system calls per process: on a desktop
// with 500 processes, milliseconds after every child).
//
// The children lists are walked without a snapshot: a process that exits
// mid-walk re-parents its children to flameox, so flameox's own list is
// read again after each walk and anything new on it is walked too, until
// nothing is new. ok is false when the files are missing (a kernel without
// CONFIG_PROC_CHILDREN), unreadable (a setuid descendant) or flameox's
// children keep changing; the caller then reads all of /proc.
func descendants(self int) (procs map[int]proc, ok bool) {
	buf := make([]byte, 4096)
	procs = map[int]proc{}
	visited := map[int]bool{}
	for range 8 {
		top, ok := childrenOf(self, buf)
		if !ok {
			return nil, false
		}
		var queue []int
		for _, pid := range top {
			if !visited[pid] {
				queue = append(queue, pid)
			}
		}
		if len(queue) == 0 {
			return procs, true
		}
		for len(queue) > 0 {
			pid := queue[len(queue)-1]
			queue = queue[:len(queue)-1]
			if visited[pid] {
				continue
			}
			visited[pid] = true
			p, alive := readProc(pid, buf)
			if !alive {
				continue // gone (reaped) since its parent's list was read
			}
			procs[pid] = p
			kids, ok := childrenOf(pid, buf)
			if !ok {
				return nil, false
			}
			queue = append(queue, kids...)
		}
	}
	return nil, false
}

// childrenOf lists the children of every thread of pid, sorted. A process
// that is gone has none; any other failure is reported as !ok.
func childrenOf(pid int, buf []byte) (kids []int, ok bool) {
	return childrenOfThreads(pid, 0, buf)
}

// childrenOfThreads is childrenOf for a process last seen with threads
// threads (0: not known). A single-threaded process's only thread is pid
// itself, so its task directory is not listed: the sampler reads this at
// every poll, and a listing is four more system calls. A thread started
// since it was counted, and a child it forked, are seen at the next poll,
// as is any fork that races a poll.
func childrenOfThreads(pid, threads int, buf []byte) (kids []int, ok bool) {
	dir := "/proc/" + strconv.Itoa(pid) + "/task"
	if threads == 1 {
		kids, ok, gone := readChildren(dir+"/"+strconv.Itoa(pid)+"/children", buf, nil)
		if gone {
			if _, err := os.Stat(dir + "/" + strconv.Itoa(pid)); err == nil {
				return nil, false // the thread is there, its children file is not
			}
			return nil, true
		}
		if !ok {
			return nil, false
		}
		slices.Sort(kids)
		return slices.Compact(kids), true
	}
	d, err := os.Open(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, true
	}
	if err != nil {
		return nil, false
	}
	tids, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return nil, false
	}
	for _, tid := range tids {
		var gone bool
		kids, ok, gone = readChildren(dir+"/"+tid+"/children", buf, kids)
		if gone {
			if _, err := os.Stat(dir + "/" + tid); err == nil {
				return nil, false // the thread is there, its children file is not
			}
			continue // the thread exited
		}
		if !ok {
			return nil, false
		}
	}
	slices.Sort(kids)
	return slices.Compact(kids), true
}

// readChildren appends the pids a thread's children file lists to kids;
// gone says the file could not be opened because it (or its thread) does
// not exist.
func readChildren(path string, buf []byte, kids []int) (_ []int, ok, gone bool) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err == unix.ENOENT || err == unix.ESRCH {
		return kids, false, true
	}
	if err != nil {
		return kids, false, false
	}
	var data []byte
	for {
		n, err := unix.Read(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			unix.Close(fd)
			return kids, false, false
		}
		if n == 0 {
			break
		}
		data = append(data, buf[:n]...)
	}
	unix.Close(fd)
	kids, ok = parseChildren(data, kids)
	return kids, ok, false
}

// parseChildren appends the pids of a children file's contents to kids.
func parseChildren(data []byte, kids []int) ([]int, bool) {
	for _, f := range bytes.Fields(data) {
		k, err := strconv.Atoi(string(f))
		if err != nil {
			return kids, false
		}
		kids = append(kids, k)
	}
	return kids, true
}

// tree tracks the descendants of one started child. The child (root) stays
// unreaped until the tree is done, so its pid, and with it its process
// group id, cannot be reused meanwhile.
type tree struct {
	root      int
	rootStart uint64   // the root's start time (0: unknown); orphans started before it are not its
	pipes     []uint64 // inodes of the child's output pipes, the run's marker
	self      int
	known     map[int]uint64 // every descendant seen: pid -> start time (guarded by inflight.mu)
	termed    map[int]uint64 // sent SIGTERM
	signalled map[int]uint64 // sent any signal (pid -> start: counts distinct processes)
	unsure    []int          // live orphans this run or another run in progress may own (last scan)
}

func newTree(root int, pipes ...uint64) *tree {
	t := &tree{root: root, self: os.Getpid(), known: map[int]uint64{},
		termed: map[int]uint64{}, signalled: map[int]uint64{}}
	var buf [4096]byte
	if p, ok := readProc(root, buf[:]); ok {
		t.rootStart = p.start
	}
	for _, ino := range pipes {
		if ino != 0 {
			t.pipes = append(t.pipes, ino)
		}
	}
	return t
}

// scan snapshots the tree: the root, every process whose (pid, start time)
// was seen before, every member of the root's process group, the orphans
// re-parented to flameox that belong to this run (see owner), and, through
// ppid links, everything below them. It records what it finds, reaps the
// zombies that are flameox's children (orphans re-parented to the
// subreaper) and returns the processes still running and the number of
// zombies it could not reap yet (their parent has not exited or been seen
// to exit). Live orphans that this run may own but cannot claim (another
// run in progress may own them as well) are left in t.unsure.
func (t *tree) scan() (live []proc, zombies int, err error) {
	spawning.Lock()
	defer spawning.Unlock()
	procs, ok := map[int]proc(nil), false
	if becomeSubreaper() == nil {
		procs, ok = descendants(t.self)
	}
	if !ok {
		if procs, err = scanProcs(); err != nil {
			return nil, 0, err
		}
	}
	inflight.mu.Lock()
	defer inflight.mu.Unlock()
	other := t.others()
	roots := make(map[int]bool, len(other)+1)
	roots[t.root] = true
	for _, u := range other {
		roots[u.root] = true
	}
	children := map[int][]int{}
	var queue []int
	t.unsure = t.unsure[:0]
	for pid, p := range procs {
		children[p.ppid] = append(children[p.ppid], pid)
		if st, ok := t.known[pid]; pid == t.root || p.pgid == t.root || (ok && st == p.start) {
			queue = append(queue, pid)
			continue
		}
		if p.ppid != t.self || roots[pid] {
			continue
		}
		switch t.owner(p, other) {
		case ours:
			queue = append(queue, pid)
		case ambiguous:
			if p.dead() {
				t.reap(p) // a zombie harms no run: collect it
			} else {
				t.unsure = append(t.unsure, pid)
			}
		}
	}
	slices.Sort(t.unsure)
	in := map[int]bool{}
	t.known = map[int]uint64{} // forget the dead: only what is in this snapshot stays
	for len(queue) > 0 {
		pid := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		if in[pid] {
			continue
		}
		in[pid] = true
		p := procs[pid]
		t.known[pid] = p.start
		queue = append(queue, children[pid]...)
		switch {
		case !p.dead():
			live = append(live, p)
		case pid != t.root && !t.reap(p):
			zombies++
		}
	}
	return live, zombies, nil
}

// reap collects a zombie descendant that is our child. wait4 on a pid that
// is our zombie cannot hit anything else: nobody else in flameox waits
// for processes the broker discovered.
func (t *tree) reap(p proc) bool {
	if p.ppid != t.self {
		return false
	}
	var ws unix.WaitStatus
	got, err := unix.Wait4(p.pid, &ws, unix.WNOHANG, nil)
	return err == nil && got == p.pid
}

// spare, set only by tests, names processes that signal must leave alone:
// it stands in for a process no signal can end (uninterruptible sleep).
var spare func(pid int) bool

// signal sends sig to p if p is still the process that was scanned. Other
// processes go through a pidfd so that a recycled pid is never hit; the
// root cannot be recycled (it is unreaped), so plain kill is safe.
func (t *tree) signal(p proc, sig unix.Signal) {
	t.signalled[p.pid] = p.start
	if spare != nil && spare(p.pid) {
		return
	}
	if p.pid == t.root {
		unix.Kill(p.pid, sig)
		return
	}
	fd, err := unix.PidfdOpen(p.pid, 0)
	if err == nil {
		defer unix.Close(fd)
	}
	var buf [4096]byte
	if q, ok := readProc(p.pid, buf[:]); !ok || q.start != p.start {
		return // gone, or the pid now names another process
	}
	if err == nil {
		unix.PidfdSendSignal(fd, sig, nil, 0)
	} else if !errors.Is(err, unix.ESRCH) {
		// No pidfd (kernel before 5.3, or out of descriptors): the start
		// time was checked just above, which leaves only a tiny window.
		unix.Kill(p.pid, sig)
	}
}

// terminate ends the tree: SIGTERM (and SIGCONT, so stopped processes
// can act on it) to everything running, then up to grace for it to go away,
// then SIGKILL to whatever is left, repeated as new processes appear,
// for at most killWindow. It returns the pids still running (or nil), and
// complete=false also when the tree could not be read. Complete is decided
// by a scan after the last signal, never by the signals sent; orphans that
// this run may own but cannot claim (t.unsure) are left alone and make it
// incomplete too.
func (t *tree) terminate(grace time.Duration) (leftover []int, complete bool) {
	deadline := time.Now().Add(grace)
	for {
		live, zombies, err := t.scan()
		if err != nil {
			break
		}
		if len(live) == 0 && zombies == 0 {
			return t.settled()
		}
		if time.Now().After(deadline) {
			break
		}
		for _, p := range live {
			if st, ok := t.termed[p.pid]; !ok || st != p.start {
				t.termed[p.pid] = p.start
				t.signal(p, unix.SIGTERM)
				t.signal(p, unix.SIGCONT)
			}
		}
		time.Sleep(termPoll)
	}
	end := time.Now().Add(killWindow)
	for {
		unix.Kill(-t.root, unix.SIGKILL) // catches group members forked since the scan
		live, zombies, err := t.scan()
		for _, p := range live {
			t.signal(p, unix.SIGKILL)
		}
		if err == nil && len(live) == 0 && zombies == 0 {
			return t.settled()
		}
		if time.Now().After(end) {
			for _, p := range live {
				leftover = append(leftover, p.pid)
			}
			leftover = append(leftover, t.unsure...)
			slices.Sort(leftover)
			return slices.Compact(leftover), false
		}
		time.Sleep(killPoll)
	}
}

// settled is terminate's answer once no process of the tree is left: done,
// unless the last scan found orphans this run may own but could not claim.
func (t *tree) settled() (leftover []int, complete bool) {
	if len(t.unsure) > 0 {
		return slices.Clone(t.unsure), false
	}
	return nil, true
}
