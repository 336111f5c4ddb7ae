package gotest

import (
	"path/filepath"
	"strings"

	"github.com/flameox/flameox/pkg/adapter"
	"github.com/flameox/flameox/pkg/fault"
)

// Output files, relative to the capture's output directory.
const (
	CPUProfile   = "cpu.pprof"
	MemProfile   = "mem.pprof"
	CoverProfile = "cover.out"
	// TestBinary receives the test binary that go test keeps when profiling
	// (without -o it would be written into the project tree). It is not
	// registered.
	TestBinary = "gotest.test"
)

// valueFlags are the go test and build flags that take a value (so the
// next argument is theirs unless written -flag=value); boolFlags are the
// other flags go test knows. Any other flag is, for go test, a test binary
// flag that ends the package list (cmd/go/internal/test/testflag.go).
var (
	valueFlags = set("C", "p", "asmflags", "compiler", "buildmode", "gcflags", "gccgoflags", "mod", "modfile",
		"overlay", "installsuffix", "ldflags", "pgo", "pkgdir", "tags", "toolexec", "debug-actiongraph",
		"debug-runtime-trace", "debug-trace", "covermode", "coverpkg", "coverprofile", "o", "exec", "vet",
		"bench", "benchtime", "blockprofile", "blockprofilerate", "count", "cpu", "cpuprofile", "fuzz", "list",
		"memprofile", "memprofilerate", "mutexprofile", "mutexprofilefraction", "outputdir", "parallel", "run",
		"skip", "timeout", "fuzztime", "fuzzminimizetime", "trace", "shuffle")
	boolFlags = set("a", "n", "x", "v", "asan", "buildvcs", "json", "linkshared", "msan", "race", "trimpath",
		"work", "modcacherw", "cover", "c", "artifacts", "benchmem", "failfast", "fullpath", "short")
	// refused flags would redirect or replace what this adapter sets.
	refused = map[string]string{
		"cpuprofile":   "flameox writes the CPU profile to the capture's output directory itself",
		"memprofile":   "flameox writes the memory profile to the capture's output directory itself",
		"coverprofile": "flameox writes the coverage profile to the capture's output directory itself",
		"o":            "flameox sets -o so the test binary kept by profiling lands in the output directory, not the project",
		"json":         "flameox adds -json itself so stdout is the test2json event stream",
		"exec":         "-exec would run the test binary under another program, which is not what the workload measures",
		"c":            "-c only compiles the test binary; nothing would run",
	}
)

func set(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// command is what Plan learns from a `go test` argv (after "go test").
type command struct {
	packages []string
	bench    bool // -bench given
	benchmem bool // -benchmem given
	chdir    int  // number of leading args that are -C dir (0, 1 or 2)
	problems []string
}

// parse follows go test's own split into flags, packages and test binary
// arguments: known value flags consume their value, the package list is
// the first run of non-flag arguments, and an unknown flag ends it.
func parse(args []string) command {
	var c command
	inList, listDone, afterUnknown := false, false, false
	for i := 0; i < len(args); i++ {
		a := args[i]
		wasAfterUnknown := afterUnknown
		afterUnknown = false
		if a == "--" {
			c.checkBinaryArgs(args[i+1:])
			break
		}
		if len(a) < 2 || a[0] != '-' {
			if listDone && !inList {
				if wasAfterUnknown {
					continue // the value of an unknown flag
				}
				c.checkBinaryArgs(args[i:])
				break
			}
			inList, listDone = true, true
			c.packages = append(c.packages, a)
			continue
		}
		inList = false
		name, hasValue := strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-"), false
		if j := strings.IndexByte(name, '='); j >= 0 {
			name, hasValue = name[:j], true
		}
		if name == "args" {
			c.checkBinaryArgs(args[i+1:])
			break
		}
		short := strings.TrimPrefix(name, "test.")
		if !valueFlags[short] && !boolFlags[short] {
			listDone, afterUnknown = true, !hasValue
			continue
		}
		if why, bad := refused[short]; bad {
			c.problems = append(c.problems, "the workload already passes -"+short+": "+why)
		}
		switch {
		case short == "bench":
			c.bench = true
		case short == "benchmem":
			c.benchmem = true
		case short == "C" && i == 0:
			c.chdir = 1
			if !hasValue {
				c.chdir = 2
			}
		}
		if valueFlags[short] && !hasValue {
			i++
		}
	}
	return c
}

// checkBinaryArgs refuses test binary flags that would fight ours.
func (c *command) checkBinaryArgs(args []string) {
	for _, a := range args {
		name := strings.TrimLeft(a, "-")
		if j := strings.IndexByte(name, '='); j >= 0 {
			name = name[:j]
		}
		switch name {
		case "test.cpuprofile", "test.memprofile", "test.coverprofile", "test.outputdir":
			c.problems = append(c.problems, "the test binary arguments pass -"+name+", which would redirect the artifacts flameox collects")
		}
	}
}

// multiple reports whether the package list may name more than one package.
func multiple(pkgs []string) bool {
	goFiles := 0
	for _, p := range pkgs {
		if strings.Contains(p, "...") || p == "all" || p == "std" || p == "cmd" {
			return true
		}
		if strings.HasSuffix(p, ".go") {
			goFiles++
		}
	}
	return len(pkgs) > 1 && goFiles != len(pkgs)
}

// Plan keeps the approved `go test` argv and inserts, right after "test"
// (after a leading -C dir, which go requires first), the flags that send
// the native artifacts to the output directory. It refuses commands that
// are not `go test`, that already redirect those artifacts, or that name
// several packages (go test refuses profiles for several packages).
func (*Adapter) Plan(req adapter.PlanRequest) (*adapter.Plan, error) {
	argv := req.Argv
	if len(argv) < 2 || filepath.Base(argv[0]) != "go" || argv[1] != "test" {
		return nil, fault.New(fault.InvalidCapturePlan, "the gotest adapter captures `go test …` workloads; this workload runs %q", strings.Join(argv, " ")).
			Fix("Declare the workload as argv = [\"go\", \"test\", …] or capture it with another adapter (e.g. process).")
	}
	if req.OutputDir == "" {
		return nil, fault.New(fault.InvalidCapturePlan, "the gotest adapter needs an output directory")
	}
	c := parse(argv[2:])
	if multiple(c.packages) {
		c.problems = append(c.problems, "the workload names several packages ("+strings.Join(c.packages, " ")+"), but go test writes -cpuprofile and -memprofile for a single package only")
	}
	if len(c.problems) > 0 {
		return nil, fault.New(fault.InvalidCapturePlan, "cannot capture this go test workload: %s", strings.Join(c.problems, "; ")).
			Fix("Declare one workload per package and leave the profile, -o, -json and -exec flags to flameox.")
	}
	out := func(rel string) string { return filepath.Join(req.OutputDir, rel) }
	inserted := []string{"-o=" + out(TestBinary), "-cpuprofile=" + out(CPUProfile), "-memprofile=" + out(MemProfile),
		"-coverprofile=" + out(CoverProfile), "-json"}
	if c.bench && !c.benchmem {
		inserted = append(inserted, "-benchmem")
	}
	head := 2 + c.chdir
	full := append(append(append([]string{}, argv[:head]...), inserted...), argv[head:]...)
	decl := func(rel, kind, role, media string) adapter.ArtifactDecl {
		return adapter.ArtifactDecl{RelPath: rel, Kind: kind, Role: role, MediaType: media, Required: true}
	}
	return &adapter.Plan{
		Adapter: Name, Argv: full, Env: []string{},
		Artifacts: []adapter.ArtifactDecl{
			decl(CPUProfile, KindSampleProfile, "cpu_profile", "application/vnd.google.protobuf+gzip"),
			decl(MemProfile, KindMemoryProfile, "memory_profile", "application/vnd.google.protobuf+gzip"),
			decl(CoverProfile, KindCoverage, "coverage_profile", "text/plain"),
		},
		Steps:       []adapter.Step{},
		Overhead:    "CPU profiling (100 Hz sampling) and heap profiling add a few percent; coverage instrumentation (-coverprofile) slows tight loops noticeably",
		Permissions: []string{},
		Limitations: []string{
			"stdout is the `go test -json` (test2json) event stream, registered as process_output; benchmark lines are inside its output events",
			"benchmarks run with coverage instrumentation and profiling on: compare them only with captures taken the same way",
			"the test binary is written to the output directory (-o) and is not registered; pprof profiles carry their own symbols",
			"profiles cover one package: a workload naming several packages is refused",
		},
	}, nil
}
