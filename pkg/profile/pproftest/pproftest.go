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
	"path/filepath"
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
	var rows []Row
	for _, r := range TopLabeled(t, file, sampleType, unit) {
		rows = append(rows, r.Row)
	}
	return rows
}

// LabeledRow is a row of `go tool pprof -top` with its inline label
// ("", "inline" or "partial-inline").
type LabeledRow struct {
	Row
	Inline string
}

// TopLabeled is Top with the inline labels kept; extra flags (e.g.
// -focus=RE, -ignore=RE) are passed to pprof before the file.
func TopLabeled(t testing.TB, file, sampleType, unit string, extra ...string) []LabeledRow {
	t.Helper()
	args := append([]string{"-top", "-nodefraction=0", "-sample_index=" + sampleType, "-unit=" + unit}, extra...)
	out := Output(t, append(args, file)...)
	var rows []LabeledRow
	inRows := false
	for _, line := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		if !inRows {
			inRows = headerRE.MatchString(line)
			continue
		}
		m := rowRE.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("cannot parse pprof row %q", line)
		}
		name, inline := m[6], ""
		for _, l := range []string{"inline", "partial-inline"} {
			if n, ok := strings.CutSuffix(name, " ("+l+")"); ok {
				name, inline = n, l
			}
		}
		rows = append(rows, LabeledRow{Row{name, value(t, m[1]), value(t, m[4])}, inline})
	}
	if !inRows {
		t.Fatalf("no table in pprof output:\n%s", out)
	}
	return rows
}

// Output runs `go tool pprof -symbolize=none ARGS...` and returns its
// stdout. It skips the test when go is missing, unless CI=true.
func Output(t testing.TB, args ...string) string {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		testenv.Unable(t, "go", "not on PATH")
	}
	cmd := exec.Command("go", append([]string{"tool", "pprof", "-symbolize=none"}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v: %v\n%s", cmd.Args, err, stderr.String())
	}
	return stdout.String()
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

// Edit writes a changed copy of the profile in file, as a second capture
// of the same program would differ, and returns its path (in a fresh
// temporary folder, under file's name): edit changes its samples.
func Edit(t testing.TB, file string, edit func(p *profile.Profile)) string {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := profile.Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	edit(p)
	out := filepath.Join(t.TempDir(), filepath.Base(file))
	Write(t, out, p)
	return out
}

// OnStack reports whether a sample's stack has a function whose name
// contains sub.
func OnStack(s *profile.Sample, sub string) bool {
	for _, l := range s.Location {
		for _, ln := range l.Line {
			if ln.Function != nil && strings.Contains(ln.Function.Name, sub) {
				return true
			}
		}
	}
	return false
}
