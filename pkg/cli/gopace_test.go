package cli

import (
	"os"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

// TestLateFirstGC checks that the first collection restores the usual
// pacing: the finalizer runs.
func TestLateFirstGC(t *testing.T) {
	t.Setenv("GOGC", "") // set (to empty): lateFirstGC leaves it alone
	lateFirstGC()
	if p := debug.SetGCPercent(100); p != 100 {
		t.Fatalf("with GOGC set, GC percent %d, want 100 untouched", p)
	}
	// Unset for the rest of the test (t.Setenv restores it afterwards).
	if err := unsetenv("GOGC"); err != nil {
		t.Fatal(err)
	}
	lateFirstGC()
	if p := debug.SetGCPercent(400); p != 400 {
		t.Fatalf("GC percent %d before the first collection, want 400", p)
	}
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
		p := debug.SetGCPercent(-1)
		debug.SetGCPercent(p)
		if p == 100 {
			return
		}
	}
	t.Fatal("the first collection did not restore GOGC=100")
}

func unsetenv(k string) error { return os.Unsetenv(k) }
