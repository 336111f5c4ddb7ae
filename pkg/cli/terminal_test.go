package cli

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flameox/flameox/pkg/fault"
)

func envOf(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

// TestColor: auto colours only a terminal, and not with NO_COLOR or
// TERM=dumb; always and never win over both.
func TestColor(t *testing.T) {
	for _, tc := range []struct {
		name     string
		mode     ColorMode
		terminal bool
		vars     map[string]string
		want     bool
	}{
		{"auto terminal", ColorAuto, true, nil, true},
		{"auto pipe", ColorAuto, false, nil, false},
		{"auto NO_COLOR", ColorAuto, true, map[string]string{"NO_COLOR": "1"}, false},
		{"auto NO_COLOR empty", ColorAuto, true, map[string]string{"NO_COLOR": ""}, true},
		{"auto dumb", ColorAuto, true, map[string]string{"TERM": "dumb"}, false},
		{"always pipe", ColorAlways, false, map[string]string{"NO_COLOR": "1"}, true},
		{"never terminal", ColorNever, true, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := &Env{Getenv: envOf(tc.vars), Color: tc.mode, StdoutTerminal: tc.terminal, StderrTerminal: tc.terminal}
			if e.ColorStdout() != tc.want || e.ColorStderr() != tc.want {
				t.Fatalf("stdout %v stderr %v, want %v", e.ColorStdout(), e.ColorStderr(), tc.want)
			}
		})
	}
	e := &Env{Getenv: envOf(nil), StdoutTerminal: true}
	if !e.ColorStdout() || e.ColorStderr() {
		t.Fatal("each stream is coloured by whether it is a terminal")
	}
}

func TestParseColor(t *testing.T) {
	for in, want := range map[string]ColorMode{"auto": ColorAuto, "always": ColorAlways, "never": ColorNever} {
		if got, err := ParseColor(in); err != nil || got != want {
			t.Errorf("%s: %v %v", in, got, err)
		}
	}
	_, err := ParseColor("yes")
	if fault.As(err).Code != fault.InvalidArguments {
		t.Fatalf("yes: %v", err)
	}
}

// TestQuiet: --quiet drops information lines and progress; errors are
// still reported, without colour off a terminal and in red on one.
func TestQuiet(t *testing.T) {
	var stderr bytes.Buffer
	e := &Env{Stderr: &stderr, Stdout: &bytes.Buffer{}, Getenv: envOf(nil), StderrTerminal: true, Name: "flameox"}
	e.Infof("launching %s", "x")
	if stderr.String() != "launching x\n" {
		t.Fatalf("Infof wrote %q", stderr.String())
	}
	if !e.ShowProgress() {
		t.Fatal("no progress on a terminal")
	}
	stderr.Reset()
	e.Quiet = true
	e.Infof("launching %s\n", "x")
	if e.ShowProgress() || e.StartProgress("importing", 2) != nil || stderr.Len() != 0 {
		t.Fatalf("quiet: progress %v, stderr %q", e.ShowProgress(), stderr.String())
	}
	Report(e, fault.New(fault.InvalidArguments, "boom"))
	if got := stderr.String(); !strings.HasPrefix(got, "\x1b[1;31mflameox:\x1b[0m ") || !strings.Contains(got, "boom") {
		t.Fatalf("error on a colour terminal: %q", got)
	}
	stderr.Reset()
	e.StderrTerminal = false
	Report(e, fault.New(fault.InvalidArguments, "boom"))
	if got := stderr.String(); !strings.HasPrefix(got, "flameox: ") || strings.Contains(got, "\x1b") {
		t.Fatalf("error in a pipe: %q", got)
	}
}

// TestShowProgress: progress only on a terminal stderr, for human output,
// not on a dumb terminal.
func TestShowProgress(t *testing.T) {
	for _, tc := range []struct {
		name string
		e    Env
		want bool
	}{
		{"terminal", Env{StderrTerminal: true}, true},
		{"pipe", Env{}, false},
		{"json", Env{StderrTerminal: true, Mode: JSON}, false},
		{"records", Env{StderrTerminal: true, Mode: Records}, false},
		{"dumb", Env{StderrTerminal: true, Getenv: envOf(map[string]string{"TERM": "dumb"})}, false},
		{"quiet", Env{StderrTerminal: true, Quiet: true}, false},
	} {
		if got := tc.e.ShowProgress(); got != tc.want {
			t.Errorf("%s: %v", tc.name, got)
		}
	}
}

// TestProgress: a progress line is redrawn in place with its bar and
// count, stays within a standard terminal's line, and is erased at Stop;
// a nil Progress (no terminal) does nothing.
func TestProgress(t *testing.T) {
	var stderr syncBuffer
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	e := &Env{Stderr: &stderr, StderrTerminal: true, Now: func() time.Time { return now }}
	p := e.StartProgress("importing "+strings.Repeat("x", 200), 4)
	p.Update("", 1, 4)
	p.Stop()
	p.Stop()
	out := stderr.String()
	if !strings.HasSuffix(out, "\r\x1b[K") || !strings.Contains(out, "[######------------------] 1/4 0.0s") {
		t.Fatalf("progress wrote %q", out)
	}
	for _, frame := range strings.Split(out, "\r\x1b[K") {
		if n := StringWidth(frame); n > progressLine {
			t.Fatalf("a %d-cell progress line %q", n, frame)
		}
	}
	var none *Progress
	none.Update("x", 1, 2)
	none.Stop()
	if (&Env{Stderr: &stderr}).StartProgress("x", 1) != nil {
		t.Fatal("progress without a terminal")
	}
}

func TestProgressText(t *testing.T) {
	for _, tc := range []struct {
		done, total int64
		d           time.Duration
		want        string
	}{
		{0, 0, 1500 * time.Millisecond, "rebuilding 1.5s"},
		{2, 2, 0, "rebuilding [########################] 2/2 0.0s"},
		{5, 2, 0, "rebuilding [########################] 2/2 0.0s"},
		{0, 3, 90 * time.Second, "rebuilding [------------------------] 0/3 1m30s"},
	} {
		if got := ProgressText("rebuilding", tc.done, tc.total, tc.d); got != tc.want {
			t.Errorf("%d/%d %v: %q, want %q", tc.done, tc.total, tc.d, got, tc.want)
		}
	}
}

// syncBuffer is a bytes.Buffer a Progress's redraws may write to while
// the test writes too.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
