package broker

import (
	"context"
	"os"
	"runtime"
	"slices"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/flameox/flameox/pkg/fault"
)

// drainWait bounds how long Run waits for the output pipes to reach EOF
// once the tree is gone (a descriptor handed to an unrelated process could
// keep one open forever).
const drainWait = 2 * time.Second

type outcome int

const (
	exited outcome = iota
	timedOut
	cancelled
)

// Run starts spec.Argv and waits for it and its descendants.
//
// A non-zero exit is not an error: Result.ExitCode tells. Errors are
// EXECUTION_REFUSED (invalid spec; nothing ran), PROCESS_FAILED (could not
// start), PROCESS_TIMEOUT (Result.TimedOut) and PROCESS_CANCELLED
// (Result.Cancelled); with the last two the Result is returned too.
func Run(ctx context.Context, spec Spec) (*Result, error) {
	p, err := prepare(spec)
	if err != nil {
		return nil, err
	}
	res := &Result{Path: p.path, Argv: append([]string(nil), spec.Argv...), Dir: p.dir, ExitCode: -1}
	if err := ctx.Err(); err != nil {
		res.Cancelled = true
		return res, fault.Wrap(fault.ProcessCancelled, err, "%s was not started", p.path)
	}
	becomeSubreaper()

	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, fault.Wrap(fault.ProcessFailed, err, "create stdout pipe")
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		closeAll(outR, outW)
		return nil, fault.Wrap(fault.ProcessFailed, err, "create stderr pipe")
	}
	stdin, ownStdin, stopStdin, err := openStdin(spec.Stdin)
	if err != nil {
		closeAll(outR, outW, errR, errW)
		return nil, fault.Wrap(fault.ProcessFailed, err, "open stdin for %s", p.path)
	}
	defer stopStdin()
	res.Start = time.Now()
	// From the fork to the registration of its tree, the child looks like
	// an orphan to any other run's scan; spawning keeps scans out of that
	// window (see tree.scan).
	spawning.RLock()
	// The child is started, and waited for, on one goroutine locked to its
	// thread, and gets SIGKILL when that thread dies (Pdeathsig): a
	// flameox killed outright takes its workload with it. Without it, a
	// kill between the fork and OnStart's record of the child left a
	// workload that recovery could not find (docs/safety.md). The kernel
	// sends the signal when the creating thread ends, not the process, so
	// the thread is held until the child has exited.
	type started struct {
		pid int
		err error
	}
	startc := make(chan started, 1)
	done := make(chan struct{})
	var wall time.Duration
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		pid, err := syscall.ForkExec(p.path, spec.Argv, &syscall.ProcAttr{
			Dir:   p.dir,
			Env:   spec.Env, // nil stays empty: syscall does not substitute os.Environ
			Files: []uintptr{stdin.Fd(), outW.Fd(), errW.Fd()},
			Sys:   &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL},
		})
		startc <- started{pid, err}
		if err != nil {
			return
		}
		// WNOWAIT leaves the child a zombie: its pid and process group stay
		// reserved until the tree is cleaned up and wait4 below reaps it.
		var info unix.Siginfo
		for unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil) == unix.EINTR {
		}
		wall = time.Since(res.Start)
		close(done)
	}()
	st := <-startc
	pid, err := st.pid, st.err
	if ownStdin {
		stdin.Close()
	}
	closeAll(outW, errW)
	if err != nil {
		spawning.RUnlock()
		closeAll(outR, errR)
		return nil, fault.Wrap(fault.ProcessFailed, err, "cannot start %s", p.path).With("path", p.path)
	}
	res.Pid = pid
	// The tree is registered before anything can scan: from now on an
	// orphan of this child is this run's (see owner), and no other run's.
	t := newTree(pid, pipeInode(outR), pipeInode(errR))
	t.register()
	spawning.RUnlock()
	secs := secrets(spec.Env, os.Environ())
	outRed, errRed := newRedactor(secs), newRedactor(secs)
	out := startCapture(outR, spec.Stdout, p.StdoutLimit, outRed)
	errc := startCapture(errR, spec.Stderr, p.StderrLimit, errRed)

	watchDepth := -1
	if len(spec.WatchArgv) > 0 && spec.WorkloadDepth > 0 {
		watchDepth = spec.WorkloadDepth
	}
	smp := sampleTree(pid, done, watchDepth, spec.WatchArgv)
	defer func() {
		if r := recover(); r != nil { // from OnStart: do not leave the tree running
			t.terminate(0)
			go func() { <-done; unix.Wait4(pid, nil, 0, nil); t.unregister(); <-smp.done; smp.watch.finish() }()
			panic(r)
		}
	}()
	if spec.OnStart != nil {
		spec.OnStart(pid)
	}

	why := supervise(ctx, p, t, res.Start, done)
	res.Leftover, res.CleanupComplete = t.terminate(p.Grace)
	select {
	case <-done:
		res.Wall = wall
		smp.halt()
		var buf [4096]byte
		root, rootOK := readProc(pid, buf[:]) // a zombie still: its CPU times are final
		reapRoot(pid, res)
		t.unregister()
		res.PeakRSS, res.PeakRSSSource = peakRSS(res.PeakRSS, vmHWM(os.Getpid()), smp)
		tree := Usage{UserCPU: res.UserCPU, SysCPU: res.SysCPU, CPUSource: CPUWait4, PeakRSS: res.PeakRSS, PeakRSSSource: res.PeakRSSSource}
		res.Workload, res.Collector = split(tree, spec.WorkloadDepth, smp, root, rootOK && root.dead())
		// The tree is gone and reaped (orphans by the cleanup above), so
		// the kernel has recorded the workload's exit.
		res.WorkloadExit = smp.watch.finish()
	case <-time.After(killWindow):
		// SIGKILLed yet not exiting (uninterruptible sleep): reap it later.
		res.CleanupComplete = false
		if !slices.Contains(res.Leftover, pid) {
			res.Leftover = append(res.Leftover, pid)
		}
		go func() { <-done; unix.Wait4(pid, nil, 0, nil); t.unregister(); <-smp.done; smp.watch.finish() }()
	}
	res.Killed = len(t.signalled)

	// Closing a pipe under its reader ends the read.
	stopDrain := time.AfterFunc(drainWait, func() { out.f.Close(); errc.f.Close() })
	<-out.done
	<-errc.done
	stopDrain.Stop()
	res.Stdout, res.Stderr = out.stream(), errc.stream()
	res.Redacted = redactedNames(secs, outRed, errRed)

	switch why {
	case timedOut:
		res.TimedOut = true
		return res, fault.New(fault.ProcessTimeout, "%s did not finish within %s", p.path, p.Timeout).
			With("pid", strconv.Itoa(pid)).With("timeout", p.Timeout.String())
	case cancelled:
		res.Cancelled = true
		return res, fault.Wrap(fault.ProcessCancelled, context.Cause(ctx), "%s was cancelled", p.path).
			With("pid", strconv.Itoa(pid))
	}
	return res, nil
}

// supervise waits until the child exits, the timeout fires or ctx ends,
// scanning the process tree every ScanInterval meanwhile.
func supervise(ctx context.Context, p *prepared, t *tree, start time.Time, done <-chan struct{}) outcome {
	var timeout, tick <-chan time.Time
	if p.Timeout > 0 {
		tm := time.NewTimer(p.Timeout - time.Since(start))
		defer tm.Stop()
		timeout = tm.C
	}
	if p.ScanInterval > 0 {
		tk := time.NewTicker(p.ScanInterval)
		defer tk.Stop()
		tick = tk.C
	}
	for {
		select {
		case <-done:
			return exited
		case <-tick:
			t.scan()
			continue
		case <-timeout:
			if finished(done) {
				return exited
			}
			return timedOut
		case <-ctx.Done():
			if finished(done) {
				return exited
			}
			return cancelled
		}
	}
}

func finished(done <-chan struct{}) bool {
	select {
	case <-done:
		return true
	default:
		return false
	}
}

// reapRoot collects the child with wait4 and fills the exit status and
// resource usage.
func reapRoot(pid int, res *Result) {
	var ws unix.WaitStatus
	var ru unix.Rusage
	for {
		_, err := unix.Wait4(pid, &ws, 0, &ru)
		if err != unix.EINTR {
			break
		}
	}
	res.UserCPU = time.Duration(ru.Utime.Nano())
	res.SysCPU = time.Duration(ru.Stime.Nano())
	res.PeakRSS = ru.Maxrss * 1024 // KiB on Linux
	switch {
	case ws.Exited():
		res.ExitCode = ws.ExitStatus()
	case ws.Signaled():
		res.ExitCode = -1
		res.Signal = unix.SignalName(ws.Signal())
		res.CoreDumped = ws.CoreDump()
	}
}

func closeAll(files ...*os.File) {
	for _, f := range files {
		f.Close()
	}
}
