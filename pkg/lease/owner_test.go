package lease

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestCheckProcesses runs real children: an exited and reaped process is
// gone, an exited but unreaped one (a zombie) is gone although its /proc
// entry remains, and a running one whose command name holds spaces and
// parentheses is alive (the stat fields are counted after the last ')').
func TestCheckProcesses(t *testing.T) {
	if _, err := Self(); err != nil {
		t.Skip("no /proc: ", err)
	}
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep: ", err)
	}
	odd := filepath.Join(t.TempDir(), "a) b (c")
	if err := os.Symlink(sleep, odd); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		argv  []string
		setup func(t *testing.T, cmd *exec.Cmd) // after Of, before Check
		want  State
	}{
		{"running, odd name", []string{odd, "60"}, func(*testing.T, *exec.Cmd) {}, Alive},
		{"exited and reaped", []string{sleep, "60"}, func(t *testing.T, cmd *exec.Cmd) {
			cmd.Process.Kill()
			cmd.Wait()
		}, Gone},
		{"zombie", []string{sleep, "60"}, func(t *testing.T, cmd *exec.Cmd) {
			cmd.Process.Kill()
			// Not reaped: wait until the kernel shows the zombie.
			deadline := time.Now().Add(30 * time.Second)
			for {
				if s, err := procState(cmd.Process.Pid); err == nil && s == 'Z' {
					return
				}
				if time.Now().After(deadline) {
					t.Fatal("the killed child never became a zombie")
				}
				time.Sleep(10 * time.Millisecond)
			}
		}, Gone},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(tc.argv[0], tc.argv[1:]...)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() {
				cmd.Process.Kill()
				cmd.Wait()
			}()
			o, err := Of(cmd.Process.Pid)
			if err != nil {
				t.Fatalf("Of(%d): %v", cmd.Process.Pid, err)
			}
			self, _ := Self()
			if o.BootID != self.BootID || o.StartTime < self.StartTime {
				t.Errorf("child owner %+v, parent %+v", o, self)
			}
			tc.setup(t, cmd)
			if got := o.Check(); got != tc.want {
				t.Errorf("Check = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestCheckWithoutProof: an owner record that cannot be checked is
// Unknown, never Gone, so recovery leaves its work alone.
func TestCheckWithoutProof(t *testing.T) {
	self, err := Self()
	if err != nil {
		t.Skip("no /proc: ", err)
	}
	for _, tc := range []struct {
		name string
		o    Owner
		want State
	}{
		{"zero", Owner{}, Unknown},
		{"no boot id", Owner{PID: self.PID, StartTime: self.StartTime}, Unknown},
		{"negative pid", Owner{PID: -1, StartTime: self.StartTime, BootID: self.BootID}, Unknown},
		{"another boot, even with our pid", Owner{PID: self.PID, StartTime: self.StartTime, BootID: "00000000-0000-0000-0000-000000000000"}, Gone},
	} {
		if got := tc.o.Check(); got != tc.want {
			t.Errorf("%s: Check = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestStartTimeOfNoProcess(t *testing.T) {
	cmd := exec.Command("/bin/sh", "-c", "exit 0")
	if err := cmd.Run(); err != nil {
		t.Skip(err)
	}
	// The pid is free once reaped (a reuse this soon would be a process
	// that started later, which Check tells apart by its start time).
	if _, err := StartTime(cmd.Process.Pid); err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Errorf("StartTime of a reaped pid: %v, want os.ErrNotExist", err)
	}
	if _, err := Of(cmd.Process.Pid); err == nil {
		if _, err2 := StartTime(cmd.Process.Pid); err2 != nil {
			t.Errorf("Of succeeded but StartTime fails: %v", err2)
		}
	}
}

func TestStateString(t *testing.T) {
	for s, want := range map[State]string{Alive: "alive", Gone: "gone", Unknown: "unknown", State(42): "unknown"} {
		if got := s.String(); got != want {
			t.Errorf("State(%d).String() = %q, want %q", s, got, want)
		}
	}
}

// TestKillGroupRefuses: without proof that the recorded leader's group
// is the one still numbered so, KillGroup signals nothing.
func TestKillGroupRefuses(t *testing.T) {
	self, err := Self()
	if err != nil {
		t.Skip("no /proc: ", err)
	}
	for _, tc := range []struct {
		name string
		o    Owner
	}{
		{"zero", Owner{}},
		{"init", Owner{PID: 1, StartTime: 1, BootID: self.BootID}},
		{"no boot id", Owner{PID: self.PID, StartTime: self.StartTime}},
		{"another boot", Owner{PID: self.PID, StartTime: self.StartTime, BootID: "00000000-0000-0000-0000-000000000000"}},
		{"our pid, another start", Owner{PID: self.PID, StartTime: self.StartTime + 1, BootID: self.BootID}},
	} {
		if n, err := KillGroup(tc.o); n != 0 || err != nil {
			t.Errorf("%s: KillGroup = %d, %v; want 0, nil", tc.name, n, err)
		}
	}
}
