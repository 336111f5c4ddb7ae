package gotest

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flameox/flameox/pkg/adapter"
)

// TestCheckResult: a benchmark workload passes only when its stream holds
// a benchmark result, a test workload only when a test ran; the reason
// says what was found or missing.
func TestCheckResult(t *testing.T) {
	const (
		start  = `{"Action":"start","Package":"example.com/p"}` + "\n"
		pass   = `{"Action":"pass","Package":"example.com/p","Elapsed":0.004}` + "\n"
		bench  = `{"Action":"output","Package":"example.com/p","Output":"BenchmarkX-2   \t     637\t     18535 ns/op\n"}` + "\n"
		test   = `{"Action":"pass","Package":"example.com/p","Test":"TestX","Elapsed":0}` + "\n"
		noRun  = `{"Action":"output","Package":"example.com/p","Output":"testing: warning: no tests to run\n"}` + "\n"
		noFile = `{"Action":"skip","Package":"example.com/p","Elapsed":0}` + "\n"
	)
	dir := t.TempDir()
	for _, tt := range []struct {
		argv, stream string
		ok           bool
		want         string
	}{
		{"go test -run ^$ -bench NoSuch .", start + pass, false, `the -bench pattern "NoSuch" matched none`},
		{"go test -run ^$ -bench=. .", start + bench + pass, true, "1 benchmark result in 1 package (example.com/p)"},
		{"go test -bench . .", start + test + pass, false, "ran no benchmark"},
		{"go test -run NoSuch .", start + noRun + pass, false, "ran no test"},
		{"go test .", noFile, false, "ran no test"},
		{"go test .", start + test + pass, true, "ran 1 test"},
		{"go test .", "", false, "wrote nothing"},
	} {
		stdout := filepath.Join(dir, "missing")
		if tt.stream != "" {
			stdout = filepath.Join(dir, "stdout.txt")
			os.WriteFile(stdout, []byte(tt.stream), 0o600)
		}
		p, err := New().Plan(adapter.PlanRequest{OutputDir: dir, Argv: strings.Fields(tt.argv)})
		if err != nil {
			t.Fatal(err)
		}
		if p.Check == "" {
			t.Fatalf("%s: the plan declares no check", tt.argv)
		}
		ok, why := New().CheckResult(context.Background(), p, dir, stdout)
		if ok != tt.ok || !strings.Contains(why, tt.want) {
			t.Errorf("%s on %q: %v %q, want %v saying %q", tt.argv, tt.stream, ok, why, tt.ok, tt.want)
		}
	}
}
