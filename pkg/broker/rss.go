package broker

import (
	"bytes"
	"os"
	"strconv"
	"sync/atomic"
	"time"
)

// Peak RSS sources.
const (
	RSSWait4   = "wait4"   // ru_maxrss from wait4: exact
	RSSSampled = "sampled" // VmHWM of the child read from /proc while it ran
	RSSUnknown = "unknown" // neither could be trusted
)

// Why sampling: Go starts children with clone(CLONE_VM|CLONE_VFORK), so
// until exec the child shares flameox's memory, and the kernel folds that
// memory's high-water mark into the child's ru_maxrss at exec. A child
// that never grows past flameox's own footprint therefore reports
// flameox's peak, not its own. When ru_maxrss does not exceed flameox's
// high-water mark (read after the child is reaped: the mark only rises, so
// it covers flameox's footprint at the spawn even when flameox grew between
// starting the run and forking), the broker uses the child's own VmHWM
// (the high-water mark of its post-exec address space), sampled from
// /proc while it runs.

// vmHWM reads VmHWM (bytes) of a process, or 0.
func vmHWM(pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	i := bytes.Index(b, []byte("VmHWM:"))
	if i < 0 {
		return 0
	}
	line := b[i+len("VmHWM:"):]
	if j := bytes.IndexByte(line, '\n'); j >= 0 {
		line = line[:j]
	}
	f := bytes.Fields(line)
	if len(f) == 0 {
		return 0
	}
	kb, err := strconv.ParseInt(string(f[0]), 10, 64)
	if err != nil {
		return 0
	}
	return kb * 1024
}

// hwmSampler keeps the highest VmHWM seen for one pid.
type hwmSampler struct {
	max  atomic.Int64
	stop chan struct{}
	done chan struct{}
}

// sampleHWM polls pid's VmHWM until exited is closed: every 2 ms for the
// first 50 ms (short-lived children), then every 20 ms.
func sampleHWM(pid int, exited <-chan struct{}) *hwmSampler {
	s := &hwmSampler{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		start := time.Now()
		for {
			if v := vmHWM(pid); v > s.max.Load() {
				s.max.Store(v)
			}
			d := 20 * time.Millisecond
			if time.Since(start) < 50*time.Millisecond {
				d = 2 * time.Millisecond
			}
			select {
			case <-exited:
				return
			case <-s.stop:
				return
			case <-time.After(d):
			}
		}
	}()
	return s
}

// peak chooses the trustworthy peak RSS.
func peakRSS(rusageMax, parentHWM int64, s *hwmSampler) (int64, string) {
	if s != nil {
		close(s.stop)
		<-s.done
	}
	if parentHWM > 0 && rusageMax > parentHWM {
		return rusageMax, RSSWait4
	}
	if s != nil && s.max.Load() > 0 {
		return s.max.Load(), RSSSampled
	}
	if parentHWM == 0 {
		return rusageMax, RSSWait4
	}
	return 0, RSSUnknown
}
