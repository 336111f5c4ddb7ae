package broker

import (
	"slices"
	"strconv"

	"golang.org/x/sys/unix"
)

// The sampler reads the same few /proc files of the same processes every
// 20 ms for as long as the workload runs. Opening each file anew costs an
// open, a read and a close, so a process's files stay open between polls
// and are read again from offset 0 (a /proc file regenerates its contents
// on every read from the start). An open /proc/<pid> file is bound to the
// process it was opened for: once that process is reaped, reads fail with
// ESRCH, and a new process given the same pid is never read through it.

// maxOpenProcs bounds the processes whose files stay open (three
// descriptors each), so a workload that forks many processes cannot make
// the broker run out of descriptors; the rest are opened at every poll.
const maxOpenProcs = 32

// procFDs are one process's open files, -1 where not open.
type procFDs struct {
	start    uint64 // the process's start time, as its stat said when opened
	stat     int
	status   int
	children int  // its only thread's children file (single-threaded processes)
	seen     bool // read in the current poll
}

// procFiles keeps the open files of the processes a sampler reads; it is
// used by the polling goroutine only.
type procFiles map[int]*procFDs

// stat reads pid's /proc/<pid>/stat, through its open file when it has
// one, and returns that file set (nil when it is not kept open).
func (pf procFiles) stat(pid int, buf []byte) (proc, *procFDs, bool) {
	if f := pf[pid]; f != nil {
		if n, err := preadAll(f.stat, buf); err == nil && n > 0 && n < len(buf) {
			if p, ok := parseStat(pid, buf[:n]); ok && p.start == f.start {
				f.seen = true
				return p, f, true
			}
		}
		pf.drop(pid) // reaped: the pid may name another process now
	}
	fd, err := unix.Open("/proc/"+strconv.Itoa(pid)+"/stat", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return proc{}, nil, false
	}
	n, err := preadAll(fd, buf)
	if err != nil || n <= 0 || n == len(buf) {
		unix.Close(fd)
		return proc{}, nil, false
	}
	p, ok := parseStat(pid, buf[:n])
	if !ok || len(pf) >= maxOpenProcs {
		unix.Close(fd)
		return p, nil, ok
	}
	f := &procFDs{start: p.start, stat: fd, status: -1, children: -1, seen: true}
	pf[pid] = f
	return p, f, true
}

// status is readStatus through f's open status file (readStatus itself
// when f is nil, or when the file does not fit buf).
func (pf procFiles) status(pid int, f *procFDs, buf []byte) (hwm int64, threads int) {
	if f == nil {
		return readStatus(pid, buf)
	}
	if f.status < 0 {
		fd, err := unix.Open("/proc/"+strconv.Itoa(pid)+"/status", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			return 0, 0
		}
		f.status = fd
	}
	n, err := preadAll(f.status, buf)
	if err != nil || n <= 0 {
		return 0, 0
	}
	if n == len(buf) {
		return readStatus(pid, buf)
	}
	b := buf[:n]
	return statusField(b, "VmHWM:") * 1024, int(statusField(b, "Threads:"))
}

// children is childrenOfThreads through f's open children file for a
// single-threaded process.
func (pf procFiles) children(pid, threads int, f *procFDs, buf []byte) ([]int, bool) {
	if f == nil || threads != 1 {
		return childrenOfThreads(pid, threads, buf)
	}
	if f.children < 0 {
		fd, err := unix.Open("/proc/"+strconv.Itoa(pid)+"/task/"+strconv.Itoa(pid)+"/children", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			return childrenOfThreads(pid, threads, buf)
		}
		f.children = fd
	}
	var data []byte
	for off := int64(0); ; {
		n, err := unix.Pread(f.children, buf, off)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return childrenOfThreads(pid, threads, buf)
		}
		if n == 0 {
			break
		}
		data = append(data, buf[:n]...)
		off += int64(n)
	}
	kids, ok := parseChildren(data, nil)
	slices.Sort(kids)
	return slices.Compact(kids), ok
}

// sweep closes the files of processes not read since the last sweep.
func (pf procFiles) sweep() {
	for pid, f := range pf {
		if !f.seen {
			pf.drop(pid)
			continue
		}
		f.seen = false
	}
}

// closeAll closes every file kept open.
func (pf procFiles) closeAll() {
	for pid := range pf {
		pf.drop(pid)
	}
}

func (pf procFiles) drop(pid int) {
	f := pf[pid]
	if f == nil {
		return
	}
	for _, fd := range []int{f.stat, f.status, f.children} {
		if fd >= 0 {
			unix.Close(fd)
		}
	}
	delete(pf, pid)
}

// preadAll reads fd from offset 0 into buf with one read (a /proc file
// that fits buf is returned whole by one read), retrying on EINTR.
func preadAll(fd int, buf []byte) (int, error) {
	for {
		n, err := unix.Pread(fd, buf, 0)
		if err != unix.EINTR {
			return n, err
		}
	}
}
