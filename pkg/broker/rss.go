package broker

import (
	"bytes"
	"slices"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// Sources of a peak RSS figure.
const (
	RSSWait4   = "wait4"   // ru_maxrss from wait4: exact
	RSSSampled = "sampled" // the highest VmHWM read from /proc while the processes ran
	RSSUnknown = "unknown" // neither could be trusted
)

// Sources of a CPU time figure.
const (
	CPUWait4 = "wait4" // rusage from wait4: exact
	// CPUProcStat: split off wait4's exact total by the started child's
	// cutime and cstime (the CPU time of the children it waited for), read
	// from /proc/<pid>/stat while it was an unreaped zombie: exact to a
	// clock tick.
	CPUProcStat = "proc_stat"
	// CPUSampled: the CPU times last read from /proc/<pid>/stat while the
	// processes ran: a lower bound.
	CPUSampled = "sampled"
)

// Usage is the resource use of some of the processes of a run, and how
// each figure was obtained.
type Usage struct {
	// Processes names the processes covered (their distinct command
	// names, /proc/<pid>/comm, outermost first; at most maxNames), as
	// the sampler saw them.
	Processes       []string
	UserCPU, SysCPU time.Duration
	CPUSource       string
	PeakRSS         int64 // the largest peak of any one of the processes, in bytes
	PeakRSSSource   string
}

// Why the whole tree's peak is sampled at times: Go starts children with
// clone(CLONE_VM|CLONE_VFORK), so until exec the child shares flameox's
// memory, and the kernel folds that memory's high-water mark into the
// child's ru_maxrss at exec. A child that never grows past flameox's own
// footprint therefore reports flameox's peak, not its own. When ru_maxrss
// does not exceed flameox's high-water mark (read after the child is
// reaped: the mark only rises, so it covers flameox's footprint at the
// spawn even when flameox grew between starting the run and forking), the
// broker uses the highest VmHWM (the high-water mark of a post-exec address
// space) of any process of the tree, sampled from /proc while they ran.
//
// Why a wrapped workload's figures are its own (Spec.WorkloadDepth > 0):
// wait4's rusage of the child covers the child and every descendant it
// waited for (Linux's RUSAGE_BOTH: CPU times summed, ru_maxrss the largest
// of them). When the child is a collector (py-spy, perf) that launches and
// reaps the workload, that is the collector's figures mixed with the
// workload's, and after the CLONE_VM fold above it often was the
// collector's alone. The kernel keeps a reaped process's peak only in its
// waiter's signal struct, which no file in /proc shows, and the waiter is
// the collector, so flameox cannot read the workload's exact peak: the
// interfaces that report it at exit (taskstats, the proc connector) need
// CAP_NET_ADMIN, ptrace would collide with py-spy's own, and a cgroup's
// memory.peak counts page cache and needs a delegated cgroup. The workload's
// peak is therefore the highest VmHWM of its processes, sampled while they
// ran; VmHWM only rises, so what sampling can miss is growth in the last
// interval before a process exits. CPU time is exact: the collector's
// /proc/<pid>/stat, read while it is an unreaped zombie, holds cutime and
// cstime, the CPU time of the children it waited for, which splits wait4's
// exact total into the workload's and the collector's own. Below a
// containment wrapper (Bubblewrap's pid-namespace init reaps the collector
// before flameox can read it) the split is sampled too.

// userHZ is the unit of the times in /proc/<pid>/stat: USER_HZ, 100 on
// every architecture Go supports.
const userHZ = 100

func ticks(n uint64) time.Duration { return time.Duration(n) * (time.Second / userHZ) }

// vmHWM reads VmHWM (bytes) of a process, or 0.
func vmHWM(pid int) int64 {
	hwm, _ := readStatus(pid, make([]byte, 4096))
	return hwm
}

// readStatus reads VmHWM (bytes) and Threads of a process from
// /proc/<pid>/status, using buf while it holds the file; 0 for what it
// does not list (a zombie has no memory). The sampler calls it at every
// poll, so it reads with as few system calls as it can.
func readStatus(pid int, buf []byte) (hwm int64, threads int) {
	fd, err := unix.Open("/proc/"+strconv.Itoa(pid)+"/status", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return 0, 0
	}
	b := buf[:0]
	for {
		if len(b) == cap(b) {
			b = slices.Grow(b, 4096)
		}
		n, err := unix.Read(fd, b[len(b):cap(b)])
		if err == unix.EINTR {
			continue
		}
		if err != nil || n <= 0 {
			break
		}
		b = b[:len(b)+n]
	}
	unix.Close(fd)
	return statusField(b, "VmHWM:") * 1024, int(statusField(b, "Threads:"))
}

// statusField is the first number after name at the start of a line of a
// /proc/<pid>/status file, or 0.
func statusField(b []byte, name string) int64 {
	for len(b) > 0 {
		line := b
		if j := bytes.IndexByte(b, '\n'); j >= 0 {
			line, b = b[:j], b[j+1:]
		} else {
			b = nil
		}
		if rest, ok := bytes.CutPrefix(line, []byte(name)); ok {
			f := bytes.Fields(rest)
			if len(f) == 0 {
				return 0
			}
			v, err := strconv.ParseInt(string(f[0]), 10, 64)
			if err != nil {
				return 0
			}
			return v
		}
	}
	return 0
}

// procKey names a process: pid and start time.
type procKey struct {
	pid   int
	start uint64
}

// procUse is what the sampler last saw of one process of the tree.
type procUse struct {
	depth  int     // 0: the started child; 1: its children; ...
	parent procKey // the process it was found below (zero for the root)
	hwm    int64
	last   proc   // the last /proc/<pid>/stat read
	comm   string // the command name when last seen alive
}

// sampler polls the tree below the started child (walking the kernel's
// children lists down from it) and keeps, per process, the highest VmHWM
// and the last CPU times seen.
type sampler struct {
	root int
	seen map[procKey]*procUse // written by the polling goroutine until done
	stop chan struct{}
	done chan struct{}
	// watchDepth is the depth of the process whose exit is followed
	// (exit.go), or -1; watchArgv its argv, and watch follows it once
	// seen.
	watchDepth int
	watchArgv  []string
	watch      *exitWatch
	// watchKey names the followed process once seen, and watchBase is
	// the CPU time its parent had collected from reaped children by then
	// (a shimmed collector's helpers, not the workload's).
	watchKey  procKey
	watchBase cpu
	// files are the processes' /proc files kept open between polls.
	files procFiles
}

// sampleTree polls the tree below pid until exited is closed: every 2 ms
// for the first 50 ms (short-lived children), then every 20 ms. With
// watchDepth >= 0 it follows the exit of the first process it sees at
// that depth running watchArgv (see isWorkload).
func sampleTree(pid int, exited <-chan struct{}, watchDepth int, watchArgv []string) *sampler {
	s := &sampler{root: pid, seen: map[procKey]*procUse{}, stop: make(chan struct{}), done: make(chan struct{}),
		watchDepth: watchDepth, watchArgv: watchArgv, files: procFiles{}}
	go func() {
		defer close(s.done)
		defer s.files.closeAll()
		start := time.Now()
		buf := make([]byte, 4096)
		for {
			s.poll(buf)
			d := 20 * time.Millisecond
			if time.Since(start) < 50*time.Millisecond {
				d = 2 * time.Millisecond
			}
			select {
			case <-exited:
				return
			case <-s.stop:
				return
			case <-time.After(d):
			}
		}
	}()
	return s
}

// poll reads every process below the root once.
func (s *sampler) poll(buf []byte) {
	type item struct {
		pid, depth int
		parent     procKey
	}
	queue := []item{{s.root, 0, procKey{}}}
	for len(queue) > 0 {
		it := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		p, f, ok := s.files.stat(it.pid, buf)
		if !ok {
			continue
		}
		hwm, threads := s.files.status(it.pid, f, buf) // 0 for a zombie: its memory is gone
		k := procKey{it.pid, p.start}
		u := s.seen[k]
		if u == nil {
			u = &procUse{depth: it.depth, parent: it.parent}
			s.seen[k] = u
		}
		u.hwm = max(u.hwm, hwm)
		u.last = p
		if it.depth == s.watchDepth && s.watch == nil && !p.dead() && isWorkload(it.pid, p.ppid, s.watchArgv) {
			if s.watch = watchExit(it.pid, p.start, buf); s.watch != nil {
				s.watchKey = k
				if pu := s.seen[it.parent]; pu != nil { // read earlier in this poll
					s.watchBase = cpu{pu.last.cutime, pu.last.cstime}
				}
			}
		}
		if !p.dead() && p.comm != "" {
			u.comm = p.comm // exec changes it
		}
		if it.depth >= maxDepth {
			continue
		}
		kids, _ := s.files.children(it.pid, threads, f, buf)
		for _, kid := range kids {
			queue = append(queue, item{kid, it.depth + 1, k})
		}
	}
	s.files.sweep()
}

// maxDepth bounds the walk (a fork bomb must not make the sampler loop).
const maxDepth = 64

// halt stops the polling and waits for it.
func (s *sampler) halt() {
	if s == nil {
		return
	}
	close(s.stop)
	<-s.done
}

// peakAt returns the highest VmHWM seen at depths [lo, hi).
func (s *sampler) peakAt(lo, hi int) int64 {
	return s.peak(func(u *procUse) bool { return u.depth >= lo && u.depth < hi })
}

// peak returns the highest VmHWM of the processes for which in is true.
func (s *sampler) peak(in func(*procUse) bool) int64 {
	var m int64
	for _, u := range s.seen {
		if in(u) {
			m = max(m, u.hwm)
		}
	}
	return m
}

// watched reports whether the followed workload process was seen.
func (s *sampler) watched() bool { return s.watch != nil }

// inWatched reports whether u is the followed process or one of its
// descendants.
func (s *sampler) inWatched(u *procUse) bool {
	for u != nil && u.depth > s.watchDepth {
		u = s.seen[u.parent]
	}
	return u != nil && u.depth == s.watchDepth && s.seen[s.watchKey] == u
}

// maxNames bounds Usage.Processes.
const maxNames = 8

// namesAt lists the distinct command names seen at depths [lo, hi),
// outermost first (then by pid).
func (s *sampler) namesAt(lo, hi int) []string {
	return s.names(func(u *procUse) bool { return u.depth >= lo && u.depth < hi })
}

// names lists the distinct command names of the processes for which in is
// true, outermost first (then by pid).
func (s *sampler) names(in func(*procUse) bool) []string {
	var us []*procUse
	for _, u := range s.seen {
		if in(u) && u.comm != "" {
			us = append(us, u)
		}
	}
	slices.SortFunc(us, func(a, b *procUse) int {
		if a.depth != b.depth {
			return a.depth - b.depth
		}
		return a.last.pid - b.last.pid
	})
	var names []string
	for _, u := range us {
		if !slices.Contains(names, u.comm) && len(names) < maxNames {
			names = append(names, u.comm)
		}
	}
	return names
}

// cpu is CPU time in clock ticks.
type cpu struct{ user, sys uint64 }

func (c cpu) add(d cpu) cpu { return cpu{c.user + d.user, c.sys + d.sys} }

// sub is c less d, each part at least 0.
func (c cpu) sub(d cpu) cpu {
	return cpu{c.user - min(c.user, d.user), c.sys - min(c.sys, d.sys)}
}

// cpuAt sums the last CPU times seen at one depth: the processes' own,
// and their waited-for children's.
func (s *sampler) cpuAt(depth int) (own, children cpu) {
	for _, u := range s.seen {
		if u.depth == depth {
			own = own.add(cpu{u.last.utime, u.last.stime})
			children = children.add(cpu{u.last.cutime, u.last.cstime})
		}
	}
	return own, children
}

// hwmSlack is the share of flameox's own high-water mark (1/hwmSlack) a
// child's ru_maxrss must exceed it by to be the workload's (peakRSS).
const hwmSlack = 16

// peakRSS chooses the trustworthy peak RSS of the whole tree: wait4's
// ru_maxrss, unless flameox's own memory may be in it (see above). A
// child forked while flameox's memory was at its high-water mark reports
// about that mark, and the kernel updates the two marks at different
// moments, so a maximum within hwmSlack above flameox's own is taken for
// flameox's, not the workload's.
func peakRSS(rusageMax, parentHWM int64, s *sampler) (int64, string) {
	if parentHWM > 0 && rusageMax > parentHWM+parentHWM/hwmSlack {
		return rusageMax, RSSWait4
	}
	if m := s.peakAt(0, maxDepth+1); m > 0 {
		return m, RSSSampled
	}
	if parentHWM == 0 {
		return rusageMax, RSSWait4
	}
	return 0, RSSUnknown
}

// split divides the tree's usage into the workload's (the processes at
// depth >= depth) and the rest's (the collector and any wrapper above the
// workload). root is the started child's /proc/<pid>/stat read while it
// was an unreaped zombie (rootOK false if that failed). The sampler must
// be halted.
func split(tree Usage, depth int, s *sampler, root proc, rootOK bool) (workload Usage, rest *Usage) {
	if depth <= 0 {
		tree.Processes = s.namesAt(0, maxDepth+1)
		return tree, nil
	}
	// With the workload's process followed (exit.go), the workload is
	// that process and its descendants: the collector's other children (a
	// shimmed collector's helpers) are the collector's, and so is the CPU
	// time its parent had collected from them before the workload began.
	in := func(u *procUse) bool { return u.depth >= depth }
	var base cpu
	if s.watched() {
		in, base = s.inWatched, s.watchBase
	}
	workload.Processes = s.names(in)
	workload.PeakRSS, workload.PeakRSSSource = s.peak(in), RSSSampled
	out := func(u *procUse) bool { return !in(u) }
	rest = &Usage{Processes: s.names(out), PeakRSSSource: RSSSampled}
	rest.PeakRSS = s.peak(out)
	if workload.PeakRSS == 0 {
		workload.PeakRSSSource = RSSUnknown
	}
	if rest.PeakRSS == 0 {
		rest.PeakRSSSource = RSSUnknown
	}

	// The workload's CPU time as sampled: what its parents had collected
	// from their reaped children, or what its own processes had used by
	// the last read (with their reaped children), whichever is more: each
	// is a lower bound.
	_, w := s.cpuAt(depth - 1)
	w = w.sub(base)
	own, kids := s.cpuAt(depth)
	if u := s.seen[s.watchKey]; s.watched() && u != nil {
		own, kids = cpu{u.last.utime, u.last.stime}, cpu{u.last.cutime, u.last.cstime}
	}
	if own.add(kids).user+own.add(kids).sys > w.user+w.sys {
		w = own.add(kids)
	}
	wu, ws, src := ticks(w.user), ticks(w.sys), CPUSampled
	if depth == 1 && rootOK {
		// Exact: the children the collector waited for, from its zombie.
		// A workload the collector did not reap (it was killed first) is
		// not in cutime; the sampled figure then says more.
		exact := cpu{root.cutime, root.cstime}.sub(base)
		if eu, es := ticks(exact.user), ticks(exact.sys); eu+es >= wu+ws {
			wu, ws, src = eu, es, CPUProcStat
		}
	}
	if depth == 1 {
		// wait4's total covers both parts: the rest is the difference.
		wu, ws = min(wu, tree.UserCPU), min(ws, tree.SysCPU)
		workload.UserCPU, workload.SysCPU, workload.CPUSource = wu, ws, src
		rest.UserCPU, rest.SysCPU, rest.CPUSource = tree.UserCPU-wu, tree.SysCPU-ws, src
		return workload, rest
	}
	// Below a wrapper, wait4's total need not cover anything: Bubblewrap
	// passes its command's exit status on and exits without reaping its
	// pid-namespace init, which the subreaper (flameox) then reaps without
	// a rusage. Both parts are sampled: the rest is its processes' own.
	workload.UserCPU, workload.SysCPU, workload.CPUSource = wu, ws, CPUSampled
	var r cpu
	for d := range depth {
		own, _ := s.cpuAt(d)
		r = r.add(own)
	}
	rest.UserCPU, rest.SysCPU, rest.CPUSource = ticks(r.user), ticks(r.sys), CPUSampled
	return workload, rest
}
