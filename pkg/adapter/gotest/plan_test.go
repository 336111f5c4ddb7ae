package gotest

import (
	"os"
	"strings"
	"testing"

	"github.com/flameox/flameox/pkg/adapter"
	"github.com/flameox/flameox/pkg/fault"
)

func plan(t *testing.T, argv ...string) (*adapter.Plan, error) {
	t.Helper()
	out := t.TempDir()
	p, err := New().Plan(adapter.PlanRequest{ProjectRoot: t.TempDir(), OutputDir: out, Argv: argv})
	if ents, _ := os.ReadDir(out); len(ents) != 0 {
		t.Fatalf("Plan created %v", ents)
	}
	return p, err
}

func TestPlanInsertsFlags(t *testing.T) {
	out := "/o"
	for _, tt := range []struct{ argv, want string }{
		{"/usr/bin/go test -run ^$ -bench BenchmarkScan -count 6 ./scan",
			"/usr/bin/go test -o=/o/gotest.test -cpuprofile=/o/cpu.pprof -memprofile=/o/mem.pprof -coverprofile=/o/cover.out -json -benchmem -run ^$ -bench BenchmarkScan -count 6 ./scan"},
		{"go test", "go test -o=/o/gotest.test -cpuprofile=/o/cpu.pprof -memprofile=/o/mem.pprof -coverprofile=/o/cover.out -json"},
		{"go test -bench=. -benchmem .", "go test -o=/o/gotest.test -cpuprofile=/o/cpu.pprof -memprofile=/o/mem.pprof -coverprofile=/o/cover.out -json -bench=. -benchmem ."},
		{"go test -C sub -test.bench . x_test.go y_test.go", "go test -C sub -o=/o/gotest.test -cpuprofile=/o/cpu.pprof -memprofile=/o/mem.pprof -coverprofile=/o/cover.out -json -benchmem -test.bench . x_test.go y_test.go"},
		{"go test -C=sub . -args -v pkgs ./...", "go test -C=sub -o=/o/gotest.test -cpuprofile=/o/cpu.pprof -memprofile=/o/mem.pprof -coverprofile=/o/cover.out -json . -args -v pkgs ./..."},
		// After an unknown flag without a value, a non-flag is its value, not a package.
		{"go test ./a -myflag value", "go test -o=/o/gotest.test -cpuprofile=/o/cpu.pprof -memprofile=/o/mem.pprof -coverprofile=/o/cover.out -json ./a -myflag value"},
	} {
		p, err := New().Plan(adapter.PlanRequest{OutputDir: out, Argv: strings.Fields(tt.argv)})
		if err != nil {
			t.Fatalf("%s: %v", tt.argv, err)
		}
		if got := strings.Join(p.Argv, " "); got != tt.want {
			t.Errorf("%s\n got %s\nwant %s", tt.argv, got, tt.want)
		}
		if inserted(p.Argv, strings.Fields(tt.argv)) == nil {
			t.Errorf("%s: the workload argv was changed", tt.argv)
		}
	}
	p, _ := plan(t, "go", "test", ".")
	kinds := []string{}
	for _, d := range p.Artifacts {
		kinds = append(kinds, d.RelPath+"="+d.Kind)
	}
	if strings.Join(kinds, " ") != "cpu.pprof=sample_profile mem.pprof=memory_profile cover.out=execution_coverage" {
		t.Fatalf("artifacts %v", kinds)
	}
	if !strings.Contains(strings.Join(p.Limitations, " "), "test2json") {
		t.Fatalf("limitations do not say stdout is the test2json stream: %v", p.Limitations)
	}
}

func TestPlanRefuses(t *testing.T) {
	for _, tt := range []struct{ argv, why string }{
		{"/bin/true", "captures `go test"},
		{"go build ./...", "captures `go test"},
		{"gofmt test", "captures `go test"},
		{"go vet test", "captures `go test"},
		{"go test ./...", "several packages"},
		{"go test ./a ./b", "several packages"},
		{"go test std", "several packages"},
		{"go test -cpuprofile cpu.out .", "-cpuprofile"},
		{"go test -test.memprofile=m.out .", "-memprofile"},
		{"go test --coverprofile=c.out .", "-coverprofile"},
		{"go test -o bin.test .", "-o"},
		{"go test -json .", "-json"},
		{"go test -exec sudo .", "-exec"},
		{"go test -c .", "-c"},
		{"go test . -args -test.cpuprofile=x", "test.cpuprofile"},
	} {
		_, err := plan(t, strings.Fields(tt.argv)...)
		fe := fault.As(err)
		if fe == nil || fe.Code != fault.InvalidCapturePlan || !strings.Contains(fe.Message, tt.why) {
			t.Errorf("%s: %v, want INVALID_CAPTURE_PLAN naming %q", tt.argv, err, tt.why)
		}
	}
	// Values that look like refused flags or packages are not mistaken for them.
	for _, argv := range []string{"go test -run -o .", "go test -bench ./... .", "go test -tags json ."} {
		if _, err := plan(t, strings.Fields(argv)...); err != nil {
			t.Errorf("%s: %v", argv, err)
		}
	}
}

// TestParsePackages checks the split into flags and packages follows go
// test's rules (cmd/go/internal/test/testflag.go).
func TestParsePackages(t *testing.T) {
	for _, tt := range []struct {
		args  string
		pkgs  string
		multi bool
	}{
		{"", "", false},
		{"-run ^$ -bench . -count 6 ./scan", "./scan", false},
		{"-v ./a ./b -count 2", "./a ./b", true},
		{"./a -count 2 ./b", "./a", false}, // ./b is a test binary argument
		{"-myflag ./a ./b", "", false},     // an unknown flag ends the package list
		{"-timeout=1m a_test.go b.go", "a_test.go b.go", false},
		{"-p 4 -tags x,y all", "all", true},
		{"-- ./a ./b", "", false},
	} {
		c := parse(strings.Fields(tt.args))
		if got := strings.Join(c.packages, " "); got != tt.pkgs || multiple(c.packages) != tt.multi {
			t.Errorf("%q: packages %q (multiple %v), want %q (%v)", tt.args, got, multiple(c.packages), tt.pkgs, tt.multi)
		}
	}
}
