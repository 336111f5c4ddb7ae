package lease

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

func TestCheck(t *testing.T) {
	self, err := Self()
	if err != nil {
		t.Skip("no /proc: ", err)
	}
	other := self
	other.StartTime++
	otherBoot := self
	otherBoot.BootID = "not-this-boot"
	tests := []struct {
		name string
		o    Owner
		want State
	}{
		{"self", self, Alive},
		{"reused pid", other, Gone},
		{"other boot", otherBoot, Gone},
		{"no pid", Owner{BootID: self.BootID}, Unknown},
	}
	for _, tt := range tests {
		if got := tt.o.Check(); got != tt.want {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
	if bt, err := BootTime(); err != nil || !bt.Before(time.Now()) {
		t.Errorf("boot time %v %v", bt, err)
	}
}

// TestKillGroup: the leftovers of a group whose leader is recorded are
// killed; a record whose start time does not match kills nothing.
func TestKillGroup(t *testing.T) {
	cmd := exec.Command("/bin/sh", "-c", "sleep 60 & sleep 60 & wait")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	leader, err := Of(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	// Wait until both sleeps run in the group.
	deadline := time.Now().Add(30 * time.Second)
	for members(leader) < 3 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	wrong := leader
	wrong.StartTime++
	if n, err := KillGroup(wrong); err != nil || n != 0 {
		t.Fatalf("a mismatched leader killed %d (%v)", n, err)
	}
	if n, err := KillGroup(leader); err != nil || n != 3 {
		t.Fatalf("killed %d, want 3 (%v)", n, err)
	}
	// KillGroup returns once they are dead, not when the signal is sent.
	if n := members(leader); n != 0 {
		t.Fatalf("%d member(s) still running after KillGroup returned", n)
	}
	cmd.Wait()
}

func members(leader Owner) int {
	ents, _ := os.ReadDir("/proc")
	n := 0
	for _, e := range ents {
		var pid int
		if _, err := fmt.Sscan(e.Name(), &pid); err == nil && member(pid, leader) {
			n++
		}
	}
	return n
}
