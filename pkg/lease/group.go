package lease

import (
	"errors"
	"os"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// KillGroup sends SIGKILL to every process still in the process group that
// leader led: the broker starts each workload as the leader of its own
// group, and when the flameox that started it is killed, the leader gets
// SIGKILL with it but what it started lives on in the group. Recovery
// calls it before closing the run of a dead owner. It returns
// how many processes were signalled.
//
// A pid alone is never trusted. The group id is used only while the leader
// is the recorded process (same start time and boot) or no process holds
// its pid at all: the kernel keeps a pid number allocated while any process
// has it as its group id, so then every member is the leader's. A member is
// signalled through a pidfd, after checking through it that it is still in
// the group and started no earlier than the leader. A descendant that left
// the group (setsid) is not found this way.
//
// KillGroup returns once every signalled process has died (or after
// killWait): SIGKILL is delivered asynchronously, and a caller that reports
// the leftovers killed must not find them still running.
func KillGroup(leader Owner) (int, error) {
	if leader.PID <= 1 || leader.BootID == "" {
		return 0, nil
	}
	boot, err := BootID()
	if err != nil {
		return 0, err
	}
	if boot != leader.BootID {
		return 0, nil // everything of another boot is gone
	}
	if st, err := StartTime(leader.PID); err == nil && st != leader.StartTime {
		return 0, nil // the pid (and so the group id) now names another process
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return 0, err
	}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
	}
	var fds []int
	defer func() {
		for _, fd := range fds {
			unix.Close(fd)
		}
	}()
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid <= 1 || pid == os.Getpid() {
			continue
		}
		if !member(pid, leader) {
			continue
		}
		fd, err := unix.PidfdOpen(pid, 0)
		if err != nil {
			continue
		}
		// The pidfd pins the process: check again that it is the member.
		if member(pid, leader) && unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0) == nil {
			fds = append(fds, fd)
			continue
		}
		unix.Close(fd)
	}
	waitExited(fds, killWait)
	return len(fds), nil
}

// killWait bounds how long KillGroup waits for the processes it killed to
// die; a process stuck in uninterruptible sleep can outlast a SIGKILL.
const killWait = 10 * time.Second

// waitExited waits until each pidfd reports its process exited (a pidfd
// polls readable once the process is a zombie or gone), or until limit.
func waitExited(fds []int, limit time.Duration) {
	deadline := time.Now().Add(limit)
	pending := make([]unix.PollFd, 0, len(fds))
	for _, fd := range fds {
		pending = append(pending, unix.PollFd{Fd: int32(fd), Events: unix.POLLIN})
	}
	for len(pending) > 0 {
		left := time.Until(deadline)
		if left <= 0 {
			return
		}
		n, err := unix.Poll(pending, int(left.Milliseconds())+1)
		if err == unix.EINTR {
			continue
		}
		if err != nil || n == 0 {
			return
		}
		open := pending[:0]
		for _, p := range pending {
			if p.Revents == 0 {
				open = append(open, p)
			}
		}
		pending = open
	}
}

// member reports whether pid is a live process of leader's group that
// started no earlier than the leader.
func member(pid int, leader Owner) bool {
	f, err := statFields(pid)
	// fields[0] is field 3 (state), [2] field 5 (pgrp), [19] field 22.
	if err != nil || len(f) < 20 || len(f[0]) == 0 || f[0][0] == 'Z' || f[0][0] == 'X' {
		return false
	}
	pgrp, err1 := strconv.Atoi(string(f[2]))
	st, err2 := strconv.ParseUint(string(f[19]), 10, 64)
	return err1 == nil && err2 == nil && pgrp == leader.PID && st >= leader.StartTime
}
