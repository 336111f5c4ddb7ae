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
// ("name" or "name:pause" to stop for 200 ms first, or "name:hang" to block
// until killed from outside).
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
