package lease

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Owner names one process incarnation on one boot.
type Owner struct {
	PID       int    `json:"pid"`
	StartTime uint64 `json:"start_time_ticks"`
	BootID    string `json:"boot_id"`
}

// Self returns the calling process's Owner.
func Self() (Owner, error) {
	return Of(os.Getpid())
}

// Of reads the Owner of a running pid.
func Of(pid int) (Owner, error) {
	st, err := StartTime(pid)
	if err != nil {
		return Owner{}, err
	}
	boot, err := BootID()
	if err != nil {
		return Owner{}, err
	}
	return Owner{PID: pid, StartTime: st, BootID: boot}, nil
}

// State is what can be known about an Owner.
type State int

const (
	// Alive: the same process (pid, start time, boot) still runs.
	Alive State = iota
	// Gone: provably not running (other boot, no such pid, or the pid now
	// belongs to a process that started at another time).
	Gone
	// Unknown: /proc could not answer; treat as possibly alive.
	Unknown
)

func (s State) String() string {
	switch s {
	case Alive:
		return "alive"
	case Gone:
		return "gone"
	}
	return "unknown"
}

// Check reports whether o still runs. Only Gone is proof of death.
func (o Owner) Check() State {
	if o.PID <= 0 || o.BootID == "" {
		return Unknown
	}
	boot, err := BootID()
	if err != nil {
		return Unknown
	}
	if boot != o.BootID {
		return Gone
	}
	st, err := StartTime(o.PID)
	if errors.Is(err, os.ErrNotExist) {
		return Gone
	}
	if err != nil {
		return Unknown
	}
	if st != o.StartTime {
		return Gone
	}
	// A zombie still has its /proc entry but will never run again.
	if state, err := procState(o.PID); err == nil && (state == 'Z' || state == 'X') {
		return Gone
	}
	return Alive
}

// BootID returns the kernel's random boot id.
func BootID() (string, error) {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return "", fmt.Errorf("read boot id: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

// StartTime returns field 22 of /proc/<pid>/stat. The command name (field 2)
// may contain spaces and parentheses, so fields are counted after the last ')'.
func StartTime(pid int) (uint64, error) {
	fields, err := statFields(pid)
	if err != nil {
		return 0, err
	}
	// fields[0] is field 3 (state); field 22 is fields[19].
	if len(fields) < 20 {
		return 0, fmt.Errorf("/proc/%d/stat: too few fields", pid)
	}
	v, err := strconv.ParseUint(string(fields[19]), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("/proc/%d/stat: start time: %w", pid, err)
	}
	return v, nil
}

func procState(pid int) (byte, error) {
	fields, err := statFields(pid)
	if err != nil || len(fields) == 0 || len(fields[0]) == 0 {
		return 0, fmt.Errorf("/proc/%d/stat: no state", pid)
	}
	return fields[0][0], nil
}

func statFields(pid int) ([][]byte, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		if errors.Is(err, syscall.ESRCH) {
			return nil, os.ErrNotExist
		}
		return nil, err
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return nil, fmt.Errorf("/proc/%d/stat: malformed", pid)
	}
	return bytes.Fields(b[i+1:]), nil
}

// BootTime returns when the machine booted (btime in /proc/stat): a
// record written before it was written by a process that is gone.
func BootTime() (time.Time, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return time.Time{}, fmt.Errorf("read boot time: %w", err)
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "btime "); ok {
			sec, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				return time.Time{}, fmt.Errorf("/proc/stat: btime: %w", err)
			}
			return time.Unix(sec, 0), nil
		}
	}
	return time.Time{}, fmt.Errorf("/proc/stat: no btime")
}
