package cli

import (
	"os"
	"runtime"
	"runtime/debug"
)

// lateFirstGC delays the first garbage collection of a command. A capture
// or a repeat query allocates a few megabytes in all, and the runtime's
// first heap goal (4 MB) made a capture collect twice while git and the
// workload competed for the machine's cores (docs/performance.md,
// "Capture orchestration overhead", has the cost). The first cycle now
// waits for a 16 MB heap (GOGC=400); once it has run, a finalizer restores
// the usual pacing (GOGC=100), so a large import's heap grows as before. A
// GOGC the user set is left alone.
func lateFirstGC() {
	if _, set := os.LookupEnv("GOGC"); set {
		return
	}
	debug.SetGCPercent(400)
	runtime.SetFinalizer(&gcSentinel{}, func(*gcSentinel) { debug.SetGCPercent(100) })
}

// gcSentinel is unreachable from the start, so the first cycle finalizes
// it; it holds a pointer and is larger than the tiny allocator's 16 bytes,
// whose blocks can keep a finalizer from ever running.
type gcSentinel struct {
	_ *int
	_ [24]byte
}
