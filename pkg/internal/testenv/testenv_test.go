package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestSkipSummary: skips land in $FLAMEOX_SKIP_LOG, and
// scripts/test-summary.sh turns the log into one line per missing thing
// and reason, counting distinct tests.
func TestSkipSummary(t *testing.T) {
	log := filepath.Join(t.TempDir(), "skips")
	t.Setenv(SkipLogEnv, log)
	for _, name := range []string{"a", "b"} {
		t.Run(name, func(t *testing.T) { Skip(t, "py-spy", "not installed", "detail %d", 1) })
	}
	t.Run("c", func(t *testing.T) { Skip(t, "bwrap", "not\tinstalled") })
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	dir, _ := os.Getwd()
	want := "py-spy\tnot installed\tTestSkipSummary/a\t" + dir + "\n" +
		"py-spy\tnot installed\tTestSkipSummary/b\t" + dir + "\n" +
		"bwrap\tnot installed\tTestSkipSummary/c\t" + dir + "\n"
	if string(b) != want {
		t.Fatalf("log:\n%q\nwant:\n%q", b, want)
	}
	// The same test again (go test -count=2) is not counted twice.
	os.WriteFile(log, append(b, "py-spy\tnot installed\tTestSkipSummary/a\t"+dir+"\n"...), 0o644)

	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatal("bash is needed by make test itself")
	}
	for _, tc := range []struct {
		name, log, want string
	}{
		{"skips", log, "test-summary: skipped here, run under CI=true (scripts/install-collectors.sh installs what is missing):\n" +
			"  bwrap not installed: 1 test skipped\n" +
			"  py-spy not installed: 2 tests skipped\n"},
		{"none", filepath.Join(t.TempDir(), "empty"), "test-summary: no collector-backed test was skipped\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := exec.Command(bash, "../../../scripts/test-summary.sh", tc.log).CombinedOutput()
			if err != nil || string(out) != tc.want {
				t.Errorf("test-summary.sh: %v\n%s\nwant:\n%s", err, out, tc.want)
			}
		})
	}
}

func TestMessage(t *testing.T) {
	for _, tc := range []struct {
		detail []any
		want   string
	}{
		{nil, "perf refused"},
		{[]any{"paranoid=%d", 4}, "perf refused: paranoid=4"},
		{[]any{42}, "perf refused: 42"},
	} {
		if got := message("perf", "refused", tc.detail); got != tc.want || strings.Contains(got, "%!") {
			t.Errorf("message(%v) = %q, want %q", tc.detail, got, tc.want)
		}
	}
}

// fakeTB records what a helper did to its test instead of doing it;
// Fatalf and Skip end the call (panicking with stop) as the real ones end
// the test.
type fakeTB struct {
	testing.TB
	fatal, skip, logged string
}

type stop struct{}

func (f *fakeTB) run(fn func(testing.TB)) {
	defer func() {
		if r := recover(); r != nil && r != (stop{}) {
			panic(r)
		}
	}()
	fn(f)
}

func (f *fakeTB) Helper()      {}
func (f *fakeTB) Name() string { return "TestFake" }
func (f *fakeTB) Fatalf(format string, args ...any) {
	f.fatal = fmt.Sprintf(format, args...)
	panic(stop{})
}
func (f *fakeTB) Skip(args ...any)                { f.skip = fmt.Sprint(args...); panic(stop{}) }
func (f *fakeTB) Logf(format string, args ...any) { f.logged = fmt.Sprintf(format, args...) }

// TestCIFailsInsteadOfSkipping: under CI=true each helper fails the test;
// locally Unable skips and Degrade logs and goes on, both recording the
// skip-log line.
func TestCIFailsInsteadOfSkipping(t *testing.T) {
	for _, tc := range []struct {
		name, ci string
		call     func(testing.TB)
		fatal    bool
		skip     bool
		logged   bool
	}{
		{"unable local", "", func(tb testing.TB) { Unable(tb, "bwrap", "not installed") }, false, true, false},
		{"unable CI", "true", func(tb testing.TB) { Unable(tb, "bwrap", "not installed") }, true, false, false},
		{"degrade local", "", func(tb testing.TB) { Degrade(tb, "bwrap", "not installed", "uncontained") }, false, false, true},
		{"degrade CI", "true", func(tb testing.TB) { Degrade(tb, "bwrap", "not installed", "uncontained") }, true, false, false},
		{"skip CI", "true", func(tb testing.TB) { Skip(tb, "tmpfs mount", "not allowed") }, false, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("CI", tc.ci)
			log := filepath.Join(t.TempDir(), "skips")
			t.Setenv(SkipLogEnv, log)
			f := &fakeTB{}
			f.run(tc.call)
			if (f.fatal != "") != tc.fatal || (f.skip != "") != tc.skip || (f.logged != "") != tc.logged {
				t.Fatalf("fatal %q, skip %q, logged %q; want fatal %v, skip %v, logged %v", f.fatal, f.skip, f.logged, tc.fatal, tc.skip, tc.logged)
			}
			if tc.fatal && !strings.Contains(f.fatal, "scripts/install-collectors.sh") {
				t.Errorf("CI failure names no remedy: %q", f.fatal)
			}
			b, _ := os.ReadFile(log)
			if recorded := len(b) > 0; recorded != !tc.fatal {
				t.Errorf("skip log %q after fatal=%v", b, tc.fatal)
			}
		})
	}
}
