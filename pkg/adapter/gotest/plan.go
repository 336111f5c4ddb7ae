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
	BlockProfile = "block.pprof"
	MutexProfile = "mutex.pprof"
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
		"cpuprofile":   "ask for the CPU profile with options.profiles = \"cpu\"; flameox writes it to the capture's output directory",
		"memprofile":   "ask for the memory profile with options.profiles = \"mem\"; flameox writes it to the capture's output directory",
		"blockprofile": "ask for the block profile with options.profiles = \"block\"; flameox writes it to the capture's output directory",
		"mutexprofile": "ask for the mutex profile with options.profiles = \"mutex\"; flameox writes it to the capture's output directory",
		"coverprofile": "ask for coverage with options.coverage = \"true\"; flameox writes cover.out to the capture's output directory",
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

// perturbing are the workload's own go test flags that change what a
// benchmark times, and how.
var perturbing = map[string]string{
	"cover": "coverage instrumentation (-cover)", "covermode": "coverage instrumentation (-covermode)",
	"coverpkg": "coverage instrumentation (-coverpkg)", "race": "the race detector (-race)",
	"msan": "the memory sanitizer (-msan)", "asan": "the address sanitizer (-asan)",
	"trace": "execution tracing (-trace)", "memprofilerate": "a changed heap sampling rate (-memprofilerate)",
	"blockprofilerate": "block profiling (-blockprofilerate)", "mutexprofilefraction": "mutex profiling (-mutexprofilefraction)",
}

// command is what Plan learns from a `go test` argv (after "go test").
type command struct {
	packages     []string
	bench        bool     // -bench given
	benchPattern string   // its value
	benchmem     bool     // -benchmem given
	trace        bool     // -trace given: go test keeps the test binary
	chdir        int      // number of leading args that are -C dir (0, 1 or 2)
	perturb      []string // what the workload's own flags add to benchmark timings
	problems     []string
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
		if what, ok := perturbing[short]; ok && !strings.HasSuffix(a, "=false") {
			c.perturb = append(c.perturb, what)
		}
		switch {
		case short == "bench":
			c.bench = true
			if hasValue {
				c.benchPattern = a[strings.IndexByte(a, '=')+1:]
			} else if i+1 < len(args) {
				c.benchPattern = args[i+1]
			}
		case short == "benchmem":
			c.benchmem = true
		case short == "trace":
			c.trace = true
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
		case "test.cpuprofile", "test.memprofile", "test.blockprofile", "test.mutexprofile", "test.coverprofile", "test.outputdir":
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
// (after a leading -C dir, which go requires first), -json and only the
// flags the workload's options ask for (ParseOptions): by default no
// profile and no coverage, so a benchmark is timed exactly as plain
// `go test -bench` times it. It refuses commands that are not `go test`,
// that redirect the artifacts flameox writes, or that ask for profiles of
// several packages (go test refuses those itself).
func (*Adapter) Plan(req adapter.PlanRequest) (*adapter.Plan, error) {
	argv := req.Argv
	if len(argv) < 2 || filepath.Base(argv[0]) != "go" || argv[1] != "test" {
		return nil, fault.New(fault.InvalidCapturePlan, "the gotest adapter captures `go test …` workloads; this workload runs %q", strings.Join(argv, " ")).
			Fix("Declare the workload as argv = [\"go\", \"test\", …] or capture it with another adapter (e.g. process).")
	}
	if req.OutputDir == "" {
		return nil, fault.New(fault.InvalidCapturePlan, "the gotest adapter needs an output directory")
	}
	opts, err := ParseOptions(req.Options)
	if err != nil {
		return nil, err
	}
	c := parse(argv[2:])
	profs := opts.profiles()
	// go test keeps the test binary (in the current directory, unless -o
	// says where) whenever it writes a profile or a trace.
	keepsBinary := len(profs) > 0 || c.trace
	if keepsBinary && multiple(c.packages) {
		c.problems = append(c.problems, "the workload names several packages ("+strings.Join(c.packages, " ")+"), but go test writes profiles and traces for a single package only")
	}
	if len(c.problems) > 0 {
		return nil, fault.New(fault.InvalidCapturePlan, "cannot capture this go test workload: %s", strings.Join(c.problems, "; ")).
			Fix("Declare one workload per package for profiles, ask for profiles and coverage with the workload's options (profiles, coverage), and leave -o, -json and -exec to flameox.")
	}
	out := func(rel string) string { return filepath.Join(req.OutputDir, rel) }
	var inserted []string
	if keepsBinary {
		inserted = append(inserted, "-o="+out(TestBinary))
	}
	arts := []adapter.ArtifactDecl{}
	var costs []string // what the inserted flags cost the code under test
	for _, p := range profs {
		inserted = append(inserted, "-"+p.flag+"="+out(p.file))
		arts = append(arts, adapter.ArtifactDecl{RelPath: p.file, Kind: p.kind, Role: p.role,
			MediaType: "application/vnd.google.protobuf+gzip", Required: true})
		costs = append(costs, p.what)
	}
	if opts.Coverage {
		inserted = append(inserted, "-coverprofile="+out(CoverProfile))
		arts = append(arts, adapter.ArtifactDecl{RelPath: CoverProfile, Kind: KindCoverage, Role: "coverage_profile",
			MediaType: "text/plain", Required: true})
		costs = append(costs, "coverage instrumentation (-coverprofile: a counter update in every basic block)")
	}
	inserted = append(inserted, "-json")
	// -benchmem does not change ns/op: the testing package reads
	// runtime.MemStats when the benchmark timer starts and stops, outside
	// the timed interval, and allocations are counted by the runtime
	// whether or not they are reported.
	if c.bench && !c.benchmem {
		inserted = append(inserted, "-benchmem")
	}
	head := 2 + c.chdir
	full := append(append(append([]string{}, argv[:head]...), inserted...), argv[head:]...)

	lim := []string{}
	perturbed := append(append([]string{}, costs...), c.perturb...)
	if c.bench && len(perturbed) > 0 {
		lim = append(lim, "benchmark timings are perturbed by "+strings.Join(perturbed, ", ")+
			": compare them only with captures taken the same way, and time benchmarks in a capture without profiles or coverage")
	}
	lim = append(lim, "stdout is the `go test -json` (test2json) event stream, registered as process_output; benchmark lines are inside its output events")
	lim = append(lim, "the process wall time is the whole go test command, building the test binary included; the measurements gotest.build_time and gotest.run_time split it")
	if c.bench && len(perturbed) == 0 {
		lim = append(lim, "benchmarks run as plain `go test -bench` runs them: no profiling or coverage (ask for them with the workload's options profiles and coverage, in a separate capture)")
	}
	if len(profs) == 0 {
		lim = append(lim, "no profile was asked for (options.profiles): this run has no frames for hotspots or stacks")
	} else {
		lim = append(lim, "the test binary is written to the output directory (-o) and is not registered; pprof profiles carry their own symbols",
			"profiles cover one package: a workload naming several packages is refused when it asks for profiles")
	}
	if !opts.Coverage {
		lim = append(lim, "no coverage was asked for (options.coverage)")
	}
	overhead := "none added: go test runs with the workload's own flags plus -json (the test binary frames its output as events, which the go command converts; no instrumentation)"
	if c.bench {
		overhead += " and -benchmem (memory statistics are read outside the timed loop)"
	}
	if len(costs) > 0 {
		overhead = strings.Join(costs, ", ") + ": each slows the code under test"
	}
	check := "go test ran at least one test"
	if c.bench {
		check = "go test ran at least one benchmark"
	}
	return &adapter.Plan{
		Adapter: Name, Argv: full, Env: []string{}, Check: check,
		Artifacts:   arts,
		Steps:       []adapter.Step{},
		Overhead:    overhead,
		Permissions: []string{},
		Limitations: lim,
	}, nil
}
