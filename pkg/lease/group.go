package lease

import (
	"errors"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// KillGroup sends SIGKILL to every process still in the process group that
// leader led: the broker starts each workload as the leader of its own
// group, and when the flameox that started it is killed, the workload is
// not. Recovery calls it before closing the run of a dead owner. It returns
// how many processes were signalled.
//
// A pid alone is never trusted. The group id is used only while the leader
// is the recorded process (same start time and boot) or no process holds
// its pid at all: the kernel keeps a pid number allocated while any process
// has it as its group id, so then every member is the leader's. A member is
// signalled through a pidfd, after checking through it that it is still in
// the group and started no earlier than the leader. A descendant that left
// the group (setsid) is not found this way.
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
	killed := 0
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
			killed++
		}
		unix.Close(fd)
	}
	return killed, nil
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
