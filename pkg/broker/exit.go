package broker

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// Sources of Result.WorkloadExit.
const (
	// ExitPidfd: the kernel's record of the exit, read through a pidfd
	// (PIDFD_GET_INFO with PIDFD_INFO_EXIT, Linux 6.15 and later): exact,
	// and still there after the collector reaped the workload.
	ExitPidfd = "pidfd_info"
	// ExitProcStat: field 52 of /proc/<pid>/stat, read while the workload
	// was a zombie its collector had not reaped yet (older kernels).
	ExitProcStat = "proc_stat"
)

// Exit is how one process ended.
type Exit struct {
	// Code is the exit status, or -1 when a signal ended the process;
	// Signal then names it ("SIGKILL").
	Code       int
	Signal     string
	CoreDumped bool
	Source     string // ExitPidfd or ExitProcStat
}

func exitOf(ws unix.WaitStatus, source string) *Exit {
	switch {
	case ws.Exited():
		return &Exit{Code: ws.ExitStatus(), Source: source}
	case ws.Signaled():
		return &Exit{Code: -1, Signal: unix.SignalName(ws.Signal()), CoreDumped: ws.CoreDump(), Source: source}
	}
	return nil
}

// Why the broker reads a wrapped workload's exit status itself: a
// collector that launches the workload as its child reaps it, and some
// exit with a status of their own whatever the workload's (py-spy record
// exits 0 after its workload failed, benfred/py-spy#717), so the started
// child's status would call a failed workload a success. The sampler
// opens a pidfd on the first process it sees at Spec.WorkloadDepth that
// runs the workload's argv (the pidfd keeps that pid from naming another
// process), and after the tree
// is gone the broker asks the kernel how it ended. Before Linux 6.15 the
// kernel keeps no exit status for a reaped process, so a goroutine waits
// for the pidfd to poll readable (the process exited) and reads the status
// from /proc while the collector has not yet reaped it; a collector that
// reaps faster leaves the status unknown (nil), never guessed.

// isWorkload reports whether process pid, a child of ppid, runs argv:
// its command line ends with argv's arguments (when argv has none, its
// last word names the same program) and differs from its parent's. The
// command line, not the executable, is compared: a script, a shim
// (pyenv's) or a symlink keeps the arguments it was given through each
// exec, where the executable changes. A process forked without an exec
// (a shell's subshell, such as the helpers of a shimmed collector, or the
// collector's child before it execs the workload) still shows its
// parent's command line, which ends with the same arguments.
func isWorkload(pid, ppid int, argv []string) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil || !runs(b, argv) {
		return false
	}
	parent, err := os.ReadFile("/proc/" + strconv.Itoa(ppid) + "/cmdline")
	return err == nil && !bytes.Equal(parent, b)
}

// runs reports whether the command line cmdline (NUL-separated words, as
// in /proc/<pid>/cmdline) ends with argv's arguments, or, when it has
// none, names its program last.
func runs(cmdline []byte, argv []string) bool {
	if len(cmdline) == 0 || len(argv) == 0 {
		return false
	}
	words := bytes.Split(bytes.TrimSuffix(cmdline, []byte{0}), []byte{0})
	args := argv[1:]
	if len(words) <= len(args) {
		return false
	}
	tail := words[len(words)-len(args):]
	for i, a := range args {
		if string(tail[i]) != a {
			return false
		}
	}
	if len(args) > 0 {
		return true
	}
	return filepath.Base(string(words[len(words)-1])) == filepath.Base(argv[0])
}

// exitWatch follows the exit of one process that is not flameox's child.
type exitWatch struct {
	pid  int
	fd   int
	stop chan struct{}
	done chan struct{}
	stat *Exit // read from /proc while a zombie; written before done closes
}

// watchExit starts following pid, the process started at start (clock
// ticks after boot); nil if it is gone or the pid names another process.
func watchExit(pid int, start uint64, buf []byte) *exitWatch {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return nil
	}
	// The pidfd pins the pid: check it still names the process seen.
	if p, ok := readProc(pid, buf); !ok || p.start != start {
		unix.Close(fd)
		return nil
	}
	w := &exitWatch{pid: pid, fd: fd, stop: make(chan struct{}), done: make(chan struct{})}
	go w.run()
	return w
}

// exitPoll is how often run looks for the stop request while it waits.
const exitPoll = 20 * time.Millisecond

func (w *exitWatch) run() {
	defer close(w.done)
	var buf [1024]byte
	fds := []unix.PollFd{{Fd: int32(w.fd), Events: unix.POLLIN}}
	for {
		n, err := unix.Poll(fds, int(exitPoll/time.Millisecond))
		if err != nil && err != unix.EINTR {
			return
		}
		if n > 0 {
			// Exited: a zombie until its parent reaps it.
			if p, ok := readProc(w.pid, buf[:]); ok && p.dead() && p.hasExit {
				w.stat = exitOf(unix.WaitStatus(p.exit), ExitProcStat)
			}
			return
		}
		select {
		case <-w.stop:
			return
		default:
		}
	}
}

// finish stops the watch and returns how the process ended, nil when
// that could not be read (it is still running, or it was reaped before
// the watch saw it exit on a kernel that keeps no record).
func (w *exitWatch) finish() *Exit {
	if w == nil {
		return nil
	}
	close(w.stop)
	<-w.done
	defer unix.Close(w.fd)
	info := unix.PidfdInfo{Mask: unix.PIDFD_INFO_EXIT}
	if err := unix.IoctlPidfdInfo(w.fd, &info); err == nil && info.Mask&unix.PIDFD_INFO_EXIT != 0 {
		if e := exitOf(unix.WaitStatus(info.Exit_code), ExitPidfd); e != nil {
			return e
		}
	}
	return w.stat
}
