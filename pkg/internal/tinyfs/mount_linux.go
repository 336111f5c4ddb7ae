package tinyfs

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

func mount(dir string, size int64) error {
	if os.Geteuid() != 0 {
		return fmt.Errorf("not root")
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", syscall.MS_NOSUID|syscall.MS_NODEV, fmt.Sprintf("size=%d,mode=0755", size)); err != nil {
		return fmt.Errorf("mount -t tmpfs: %w", err)
	}
	return nil
}

func unmount(dir string) { syscall.Unmount(dir, syscall.MNT_DETACH) }

// hasSysAdmin reports whether CAP_SYS_ADMIN (bit 21) is effective.
func hasSysAdmin() bool {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "CapEff:"); ok {
			caps, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			return err == nil && caps&(1<<21) != 0
		}
	}
	return false
}
