package capture

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestLineTee: every byte reaches the stored output unchanged; complete
// lines, split across writes or not, reach the liner once, a last line
// without a newline at Close; an over-long line is skipped.
func TestLineTee(t *testing.T) {
	var stored bytes.Buffer
	var mu sync.Mutex
	var shown []string
	liner := func(b []byte) string {
		if bytes.HasPrefix(b, []byte("skip")) {
			return ""
		}
		return "<" + string(b) + ">"
	}
	tee := newLineTee(&stored, liner, func(s string) { mu.Lock(); shown = append(shown, s); mu.Unlock() })
	long := strings.Repeat("x", maxProgressLine+10)
	writes := []string{"a", "b\nc\r\n", "skip me\n", long[:100], long[100:] + "\n", "\n", "last"}
	for _, w := range writes {
		if n, err := tee.Write([]byte(w)); n != len(w) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", w, n, err)
		}
	}
	tee.Close()
	tee.Close()
	if stored.String() != strings.Join(writes, "") {
		t.Fatal("the stored output differs from what was written")
	}
	if got := strings.Join(shown, " "); got != "<ab> <c> <> <last>" {
		t.Fatalf("shown %q", got)
	}
}

// TestPrinter: the status line shows step, phase, message and elapsed
// time and is redrawn in place; adapter lines go above it, escaped;
// "completed" and Close end it; nothing is printed after Close.
func TestPrinter(t *testing.T) {
	var w bytes.Buffer
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	p := NewPrinter(&w, func() time.Time { return now })
	p.Progress(Progress{Phase: "capturing", Step: 1, Total: 5, Message: "running bench under gotest"})
	now = now.Add(65 * time.Second)
	p.Tick()
	p.Line("BenchmarkX-2  10  5 ns/op\x1b[31m")
	p.Progress(Progress{Phase: "completed", Step: 5, Total: 5, Message: "succeeded"})
	p.Close()
	p.Line("after close")
	p.Progress(Progress{Phase: "capturing"})
	want := "\r\033[K[1/5] capturing: running bench under gotest (0s)" +
		"\r\033[K[1/5] capturing: running bench under gotest (1m05s)" +
		"\r\033[KBenchmarkX-2  10  5 ns/op\\x1b[31m\n" +
		"\r\033[K[1/5] capturing: running bench under gotest (1m05s)" +
		"\r\033[K[5/5] completed: succeeded (1m05s)\n"
	if w.String() != want {
		t.Fatalf("printed\n%q\nwant\n%q", w.String(), want)
	}
	// Close after a phase that did not complete keeps that line.
	w.Reset()
	p = NewPrinter(&w, func() time.Time { return now })
	p.Start(time.Hour)
	p.Progress(Progress{Phase: "validating", Step: 2, Total: 5, Message: "checking"})
	p.Close()
	if w.String() != "\r\033[K[2/5] validating: checking (0s)\n" {
		t.Fatalf("printed %q", w.String())
	}
}

func TestElapsed(t *testing.T) {
	for d, want := range map[time.Duration]string{0: "0s", 1499 * time.Millisecond: "1s", 59 * time.Second: "59s",
		61 * time.Second: "1m01s", 3725 * time.Second: "1h02m", -time.Second: "0s"} {
		if got := Elapsed(d); got != want {
			t.Errorf("Elapsed(%v) = %q, want %q", d, got, want)
		}
	}
}
