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
	all := map[string]string{"profiles": "cpu,mem", "coverage": "true"}
	for _, tt := range []struct {
		argv string
		opts map[string]string
		want string
	}{
		// By default: -json (and -benchmem for benchmarks), nothing that
		// instruments or profiles the code under test.
		{"/usr/bin/go test -run ^$ -bench BenchmarkScan -count 6 ./scan", nil,
			"/usr/bin/go test -json -benchmem -run ^$ -bench BenchmarkScan -count 6 ./scan"},
		{"go test", nil, "go test -json"},
		{"go test -bench=. -benchmem .", nil, "go test -json -bench=. -benchmem ."},
		{"go test -C sub -test.bench . x_test.go y_test.go", nil, "go test -C sub -json -benchmem -test.bench . x_test.go y_test.go"},
		{"go test -C=sub . -args -v pkgs ./...", nil, "go test -C=sub -json . -args -v pkgs ./..."},
		// Several packages are fine without profiles.
		{"go test -bench . ./...", map[string]string{"coverage": "true"}, "go test -coverprofile=/o/cover.out -json -benchmem -bench . ./..."},
		// After an unknown flag without a value, a non-flag is its value, not a package.
		{"go test ./a -myflag value", nil, "go test -json ./a -myflag value"},
		// What the options ask for, and -o only when go test keeps a binary.
		{"/usr/bin/go test -run ^$ -bench BenchmarkScan -count 6 ./scan", all,
			"/usr/bin/go test -o=/o/gotest.test -cpuprofile=/o/cpu.pprof -memprofile=/o/mem.pprof -coverprofile=/o/cover.out -json -benchmem -run ^$ -bench BenchmarkScan -count 6 ./scan"},
		{"go test .", map[string]string{"profiles": "mutex, cpu,block"},
			"go test -o=/o/gotest.test -cpuprofile=/o/cpu.pprof -blockprofile=/o/block.pprof -mutexprofile=/o/mutex.pprof -json ."},
		{"go test -trace t.out .", nil, "go test -o=/o/gotest.test -json -trace t.out ."},
		{"go test -C sub .", map[string]string{"profiles": "", "coverage": "false"}, "go test -C sub -json ."},
	} {
		p, err := New().Plan(adapter.PlanRequest{OutputDir: out, Argv: strings.Fields(tt.argv), Options: tt.opts})
		if err != nil {
			t.Fatalf("%s %v: %v", tt.argv, tt.opts, err)
		}
		if got := strings.Join(p.Argv, " "); got != tt.want {
			t.Errorf("%s %v\n got %s\nwant %s", tt.argv, tt.opts, got, tt.want)
		}
		if inserted(p.Argv, strings.Fields(tt.argv)) == nil {
			t.Errorf("%s: the workload argv was changed", tt.argv)
		}
	}
	for _, tt := range []struct {
		opts map[string]string
		want string
	}{
		{nil, ""},
		{map[string]string{"profiles": "cpu"}, "cpu.pprof=sample_profile"},
		{all, "cpu.pprof=sample_profile mem.pprof=memory_profile cover.out=execution_coverage"},
		{map[string]string{"coverage": "true"}, "cover.out=execution_coverage"},
	} {
		p, err := New().Plan(adapter.PlanRequest{OutputDir: out, Argv: []string{"go", "test", "."}, Options: tt.opts})
		if err != nil {
			t.Fatal(err)
		}
		kinds := []string{}
		for _, d := range p.Artifacts {
			kinds = append(kinds, d.RelPath+"="+d.Kind)
		}
		if strings.Join(kinds, " ") != tt.want {
			t.Errorf("%v: artifacts %v, want %q", tt.opts, kinds, tt.want)
		}
		if !strings.Contains(strings.Join(p.Limitations, " "), "test2json") {
			t.Fatalf("limitations do not say stdout is the test2json stream: %v", p.Limitations)
		}
	}
}

// TestPlanDefaultIsUninstrumented: the default plan of a benchmark
// workload adds no coverage or profiling flag (issue 13: those slowed the
// benchmarks down; docs/performance.md), and says the timings are not
// perturbed.
func TestPlanDefaultIsUninstrumented(t *testing.T) {
	p, err := plan(t, "go", "test", "-run", "^$", "-bench", ".", "-count", "6", ".")
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range p.Argv {
		for _, f := range []string{"-cpuprofile", "-memprofile", "-blockprofile", "-mutexprofile", "-coverprofile", "-cover", "-covermode", "-coverpkg", "-o"} {
			if a == f || strings.HasPrefix(a, f+"=") {
				t.Errorf("the default plan inserts %s: %q", a, p.Argv)
			}
		}
	}
	if len(p.Artifacts) != 0 {
		t.Errorf("the default plan declares %v", p.Artifacts)
	}
	if strings.Contains(strings.Join(p.Limitations, " "), "perturbed") || strings.Contains(p.Overhead, "profil") {
		t.Errorf("an uninstrumented plan claims perturbation: %q / %q", p.Limitations, p.Overhead)
	}
}

// TestPlanPerturbedLimitation: a capture that times benchmarks and also
// profiles or covers says so in its first limitation, naming what, and
// its overhead names only what is enabled.
func TestPlanPerturbedLimitation(t *testing.T) {
	bench := []string{"go", "test", "-run", "^$", "-bench", ".", "."}
	for _, tt := range []struct {
		argv []string
		opts map[string]string
		want []string // in the first limitation
		not  []string // nowhere in the overhead
	}{
		{bench, map[string]string{"profiles": "cpu"}, []string{"perturbed", "CPU profiling"}, []string{"coverage", "heap"}},
		{bench, map[string]string{"profiles": "cpu,mem"}, []string{"perturbed", "CPU profiling", "heap profiling"}, []string{"coverage"}},
		{bench, map[string]string{"coverage": "true"}, []string{"perturbed", "coverage instrumentation"}, []string{"CPU", "heap"}},
		{bench, map[string]string{"profiles": "block,mutex"}, []string{"perturbed", "block profiling", "mutex profiling"}, []string{"CPU", "coverage"}},
		{append([]string{"go", "test", "-race", "-cover"}, bench[2:]...), nil, []string{"perturbed", "race detector", "-cover"}, []string{"CPU", "coverage"}},
	} {
		p, err := New().Plan(adapter.PlanRequest{OutputDir: t.TempDir(), Argv: tt.argv, Options: tt.opts})
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range tt.want {
			if !strings.Contains(p.Limitations[0], w) {
				t.Errorf("%v %v: first limitation %q lacks %q", tt.argv, tt.opts, p.Limitations[0], w)
			}
		}
		for _, n := range tt.not {
			if strings.Contains(p.Overhead, n) {
				t.Errorf("%v %v: overhead %q names %q, which is off", tt.argv, tt.opts, p.Overhead, n)
			}
		}
	}
	// Tests without benchmarks time nothing: no perturbation to report.
	p, err := New().Plan(adapter.PlanRequest{OutputDir: t.TempDir(), Argv: []string{"go", "test", "."}, Options: map[string]string{"coverage": "true"}})
	if err != nil || strings.Contains(strings.Join(p.Limitations, " "), "perturbed") {
		t.Errorf("a test-only capture: %v %q", err, p.Limitations)
	}
}

func TestParseOptions(t *testing.T) {
	for _, tt := range []struct {
		opts map[string]string
		want string // profiles/coverage, or the error's substring
	}{
		{nil, "/false"},
		{map[string]string{"profiles": "mem,cpu"}, "cpu,mem/false"},
		{map[string]string{"profiles": " cpu , ", "coverage": "true"}, "cpu/true"},
		{map[string]string{"profiles": "heap"}, `profiles="heap": want`},
		{map[string]string{"profiles": "cpu,cpu"}, "distinct"},
		{map[string]string{"coverage": "yes"}, `"true" or "false"`},
		{map[string]string{"native": "true"}, `no capture option "native"`},
	} {
		o, err := ParseOptions(tt.opts)
		got := strings.Join(o.Profiles, ",") + "/" + map[bool]string{true: "true", false: "false"}[o.Coverage]
		if err != nil {
			fe := fault.As(err)
			if fe.Code != fault.InvalidCapturePlan {
				t.Errorf("%v: %v is not INVALID_CAPTURE_PLAN", tt.opts, err)
			}
			got = fe.Message
		}
		if !strings.Contains(got, tt.want) {
			t.Errorf("%v: %q, want %q", tt.opts, got, tt.want)
		}
	}
	if _, err := plan(t, "go", "test", "."); err != nil {
		t.Fatal(err)
	}
	_, err := New().Plan(adapter.PlanRequest{OutputDir: "/o", Argv: []string{"go", "test", "."}, Options: map[string]string{"rate": "9"}})
	if fault.As(err) == nil || fault.As(err).Code != fault.InvalidCapturePlan {
		t.Fatalf("an unknown option is planned: %v", err)
	}
}

func TestPlanRefuses(t *testing.T) {
	for _, tt := range []struct{ argv, why string }{
		{"/bin/true", "captures `go test"},
		{"go build ./...", "captures `go test"},
		{"gofmt test", "captures `go test"},
		{"go vet test", "captures `go test"},
		{"go test -trace t.out ./...", "several packages"},
		{"go test -trace=t.out ./a ./b", "several packages"},
		{"go test -blockprofile b.out .", "options.profiles"},
		{"go test -mutexprofile=b.out .", "-mutexprofile"},
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
	// Several packages: refused with profiles (go test refuses them),
	// captured without.
	for _, argv := range []string{"go test ./...", "go test ./a ./b", "go test std"} {
		_, err := New().Plan(adapter.PlanRequest{OutputDir: "/o", Argv: strings.Fields(argv), Options: map[string]string{"profiles": "cpu"}})
		if fe := fault.As(err); fe == nil || fe.Code != fault.InvalidCapturePlan || !strings.Contains(fe.Message, "several packages") {
			t.Errorf("%s with profiles: %v, want INVALID_CAPTURE_PLAN naming several packages", argv, err)
		}
		if _, err := plan(t, strings.Fields(argv)...); err != nil {
			t.Errorf("%s without profiles: %v", argv, err)
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
