// Package pproftest runs the real `go tool pprof -top` for side-by-side
// tests. Asking pprof for the sample type's own unit makes its scale factor
// 1, so its "%.2f" formatting prints exact integers; a fractional value
// fails the test as inexact instead of being rounded. -symbolize=none keeps
// the run hermetic, and pprof's "(inline)" decorations are stripped.
package pproftest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/flameox/flameox/pkg/internal/testenv"
)

var (
	headerRE = regexp.MustCompile(`^\s+flat\s+flat%\s+sum%\s+cum\s+cum%\s*$`)
	rowRE    = regexp.MustCompile(`^\s*(\S+)\s+(\S+%)\s+(\S+%)\s+(\S+)\s+(\S+%)  (.*)$`)
	valueRE  = regexp.MustCompile(`^(-?\d+)([^\d.]*)$`)
)

// Row is one row of `go tool pprof -top`.
type Row struct {
	Name      string
	Flat, Cum int64
}

func (r Row) String() string { return fmt.Sprintf("%q flat=%d cum=%d", r.Name, r.Flat, r.Cum) }

// Top runs go tool pprof -top -nodefraction=0 on file for one sample type.
// It skips the test when go is missing, unless CI=true.
func Top(t testing.TB, file, sampleType, unit string) []Row {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		testenv.Unable(t, "go", "not on PATH")
	}
	cmd := exec.Command("go", "tool", "pprof", "-top", "-nodefraction=0", "-symbolize=none",
		"-sample_index="+sampleType, "-unit="+unit, file)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v: %v\n%s", cmd.Args, err, stderr.String())
	}
	var rows []Row
	inRows := false
	for _, line := range strings.Split(strings.TrimRight(stdout.String(), "\n"), "\n") {
		if !inRows {
			inRows = headerRE.MatchString(line)
			continue
		}
		m := rowRE.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("cannot parse pprof row %q", line)
		}
		name := strings.TrimSuffix(strings.TrimSuffix(m[6], " (inline)"), " (partial-inline)")
		rows = append(rows, Row{name, value(t, m[1]), value(t, m[4])})
	}
	if !inRows {
		t.Fatalf("no table in pprof output:\n%s", stdout.String())
	}
	return rows
}

func value(t testing.TB, s string) int64 {
	m := valueRE.FindStringSubmatch(s)
	if m == nil {
		t.Fatalf("pprof printed an inexact or unexpected value %q", s)
	}
	v, err := strconv.ParseInt(m[1], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// Write writes p to path as a gzipped pprof profile, failing the test on
// any error (the close included).
func Write(t testing.TB, path string, p *profile.Profile) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Write(f); err != nil {
		f.Close()
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}
