//go:build faultinject

package faultpoint

import (
	"os"
	"strings"
	"syscall"
	"time"
)

// Enabled reports whether this build honours fault points.
const Enabled = true

// Hit kills the process with SIGKILL when FLAMEOX_FAULTPOINT names this point
// ("name" or "name:pause" to stop for 200 ms first, "name:hang" to block
// until killed from outside, or "name:sleep" to stall for 2 s and go on, so
// a test can deliver a signal at that point).
func Hit(name string) {
	want := os.Getenv("FLAMEOX_FAULTPOINT")
	if want == "" {
		return
	}
	point, mode, _ := strings.Cut(want, ":")
	if point != name {
		return
	}
	switch mode {
	case "sleep":
		// Announce the point, then stall so a test can signal the process
		// here; execution continues afterwards (no kill).
		if f := os.Getenv("FLAMEOX_FAULTPOINT_READY"); f != "" {
			os.WriteFile(f, []byte(name), 0o600)
		}
		time.Sleep(2 * time.Second)
		return
	case "hang":
		if f := os.Getenv("FLAMEOX_FAULTPOINT_READY"); f != "" {
			os.WriteFile(f, []byte(name), 0o600)
		}
		select {}
	case "pause":
		time.Sleep(200 * time.Millisecond)
	}
	syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {}
}
