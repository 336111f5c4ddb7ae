package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// SkipLogEnv names the file skips are appended to.
const SkipLogEnv = "FLAMEOX_SKIP_LOG"

// CI reports whether this is a CI run (CI=true), which must not skip.
func CI() bool { return os.Getenv("CI") == "true" }

// Unable skips t because what (a collector, tool or fixture set, as the
// summary names it: "py-spy", "bwrap", "shared fixtures") cannot be used
// here; why says it in a few words ("not installed", "refused by the
// kernel"), the same for every test that skips for the same reason (the
// summary groups by what and why); detail, if any, is a format and its
// arguments, added to the test's message. Under CI=true it fails instead.
func Unable(t testing.TB, what, why string, detail ...any) {
	t.Helper()
	msg := message(what, why, detail)
	if CI() {
		t.Fatalf("CI=true but %s (scripts/install-collectors.sh installs the collectors)", msg)
	}
	Skip(t, what, why, detail...)
}

// Skip skips t as Unable does, also under CI=true: for what a CI machine
// may lawfully lack (a mount its container forbids).
func Skip(t testing.TB, what, why string, detail ...any) {
	t.Helper()
	record(what, why, t.Name())
	t.Skip(message(what, why, detail))
}

// Degrade is Unable for a test that goes on without what, in a weaker
// form (uncontained instead of contained, say): under CI=true it fails;
// otherwise it logs the message and records it in the skip log, and
// returns.
func Degrade(t testing.TB, what, why string, detail ...any) {
	t.Helper()
	msg := message(what, why, detail)
	if CI() {
		t.Fatalf("CI=true but %s (scripts/install-collectors.sh installs the collectors)", msg)
	}
	record(what, why, t.Name())
	t.Logf("%s: testing without it", msg)
}

// Go returns the path of the go command. The go toolchain is what runs
// these tests, so without it on PATH the test fails, locally too.
func Go(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("go")
	if err != nil {
		t.Fatal("go is not on PATH (the go toolchain is what runs these tests)")
	}
	return p
}

// LookPath returns the path of tool, or calls Unable(tool, "not
// installed").
func LookPath(t testing.TB, tool string) string {
	t.Helper()
	p, err := exec.LookPath(tool)
	if err != nil {
		Unable(t, tool, "not installed")
	}
	return p
}

func message(what, why string, detail []any) string {
	msg := what + " " + why
	if len(detail) > 0 {
		if f, ok := detail[0].(string); ok {
			msg += ": " + fmt.Sprintf(f, detail[1:]...)
		} else {
			msg += ": " + fmt.Sprint(detail...)
		}
	}
	return msg
}

// Log records, without skipping anything, that test did not run because
// what is missing here (for harnesses that skip by other means, e.g. a
// testscript condition).
func Log(what, why, test string) { record(what, why, test) }

// record appends one line to $FLAMEOX_SKIP_LOG. O_APPEND keeps the lines
// of test binaries running at once whole (each is one short write).
func record(what, why, test string) {
	name := os.Getenv(SkipLogEnv)
	if name == "" {
		return
	}
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	clean := func(s string) string {
		return strings.Map(func(r rune) rune {
			if r == '\t' || r == '\n' || r == '\r' {
				return ' '
			}
			return r
		}, s)
	}
	dir, _ := os.Getwd() // go test runs each test binary in its package's directory
	f.WriteString(clean(what) + "\t" + clean(why) + "\t" + clean(test) + "\t" + clean(dir) + "\n")
}
