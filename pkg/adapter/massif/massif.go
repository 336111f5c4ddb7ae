package massif

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/flameox/flameox/pkg/adapter"
	"github.com/flameox/flameox/pkg/broker"
	"github.com/flameox/flameox/pkg/config"
	"github.com/flameox/flameox/pkg/fault"
)

// Name of the adapter; OutFile is the massif.out a capture writes.
const (
	Name    = "massif"
	OutFile = "massif.out"
)

const installRemedy = "install Valgrind (Debian/Ubuntu: `apt-get install valgrind`; scripts/install-collectors.sh does it)"

// System is what the probe and the plan look at; tests substitute fakes.
type System struct {
	LookPath func(file string) (string, error)
	// Output runs a short command and returns its stdout.
	Output func(ctx context.Context, argv []string) ([]byte, error)
}

// RealSystem is the machine flameox runs on.
func RealSystem() System {
	return System{LookPath: exec.LookPath, Output: func(ctx context.Context, argv []string) ([]byte, error) {
		return broker.Output(ctx, argv, "", []string{"PATH=" + os.Getenv("PATH")}, 1<<16, 10*time.Second)
	}}
}

// Adapter is the massif adapter.
type Adapter struct{ Sys System }

// New returns the adapter looking at the real machine.
func New() *Adapter { return &Adapter{Sys: RealSystem()} }

func (*Adapter) Name() string { return Name }

// Extractors returns the massif.out extractor.
func (*Adapter) Extractors() []adapter.Extractor { return []adapter.Extractor{NewExtractor()} }

// Probe finds valgrind on PATH and asks its version (`valgrind
// --version`), running no workload.
func (a *Adapter) Probe(ctx context.Context) adapter.Capability {
	exe, err := a.Sys.LookPath("valgrind")
	if err != nil {
		c := adapter.NewCapability(Name, adapter.Unavailable)
		c.Modes = []string{"import", "extract"}
		c.Limitations = append(c.Limitations, "valgrind was not found on PATH; existing massif.out files still import")
		c.Remediation = append(c.Remediation, installRemedy)
		return c
	}
	c := adapter.NewCapability(Name, adapter.Available)
	c.Executable = exe
	c.Modes = []string{"command", "import", "extract"}
	out, err := a.Sys.Output(ctx, []string{exe, "--version"})
	v := strings.TrimSpace(string(out))
	if err != nil || !strings.HasPrefix(v, "valgrind-") {
		c.Status = adapter.Degraded
		c.Limitations = append(c.Limitations, "`valgrind --version` did not answer, so its version is unknown")
		c.Remediation = append(c.Remediation, "check that `"+exe+" --version` works; otherwise "+installRemedy)
	} else {
		c.Version = strings.TrimPrefix(v, "valgrind-")
	}
	c.Limitations = append(c.Limitations,
		"massif runs the program on Valgrind's synthetic CPU: it is many times slower (often 20× or more), so timings of a massif capture mean nothing",
		"native programs only: interpreters are measured as the interpreter's own allocations")
	return c
}

// Options a workload may declare: stacks=true also measures stacks
// (--stacks=yes, much slower); detailed_freq=N and max_snapshots=N
// pass through; pages_as_heap=true measures pages (mmap) instead of malloc.
var optionFlags = map[string]string{"stacks": "--stacks", "detailed_freq": "--detailed-freq", "max_snapshots": "--max-snapshots",
	"pages_as_heap": "--pages-as-heap", "depth": "--depth", "threshold": "--threshold"}

// RunsWorkloadInProcess: valgrind execs its tool, which runs the program
// in the same process.
func (*Adapter) RunsWorkloadInProcess() bool { return true }

// Plan returns `valgrind --tool=massif --massif-out-file=OUT/massif.out
// [flags] argv...`. It creates nothing.
func (a *Adapter) Plan(req adapter.PlanRequest) (*adapter.Plan, error) {
	if len(req.Argv) == 0 {
		return nil, fault.New(fault.InvalidCapturePlan, "the workload has no argv")
	}
	if req.OutputDir == "" {
		return nil, fault.New(fault.InvalidCapturePlan, "the massif adapter needs an output directory")
	}
	exe := "valgrind"
	if p, err := a.Sys.LookPath("valgrind"); err == nil {
		exe = p
	}
	argv := []string{exe, "--tool=massif", "--massif-out-file=" + filepath.Join(req.OutputDir, OutFile)}
	keys := make([]string, 0, len(req.Options))
	for k := range req.Options {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		flag, ok := optionFlags[k]
		if !ok {
			return nil, fault.New(fault.InvalidCapturePlan, "unknown massif option %q", k).
				Fix("Use one of stacks, detailed_freq, max_snapshots, pages_as_heap, depth, threshold.")
		}
		v := req.Options[k]
		switch v {
		case "true":
			v = "yes"
		case "false":
			v = "no"
		}
		if v == "" || strings.ContainsAny(v, " \t\n=") {
			return nil, fault.New(fault.InvalidCapturePlan, "massif option %s=%q is not a single value", k, v)
		}
		argv = append(argv, flag+"="+v)
	}
	argv = append(argv, req.Argv...)
	return &adapter.Plan{
		Adapter: Name, Argv: argv, Env: []string{},
		Artifacts:   []adapter.ArtifactDecl{{RelPath: OutFile, Kind: KindMemory, Role: "primary", MediaType: "text/plain", Required: true}},
		Steps:       []adapter.Step{},
		Overhead:    "Valgrind runs the program on a synthetic CPU: massif slows it down about 20× (more with stacks=true)",
		Permissions: []string{},
		Limitations: []string{"the process facts (wall time, CPU, peak RSS) are Valgrind's with the program, not the program's alone; heap sizes are in the measurements of " + OutFile},
	}, nil
}

// Validate checks that a memory profile is a complete massif.out.
func (*Adapter) Validate(path string, decl adapter.ArtifactDecl) error {
	if decl.Kind != KindMemory {
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		return fault.Wrap(fault.ArtifactParseFailed, err, "open %s", decl.RelPath)
	}
	defer f.Close()
	if _, err := Parse(f, config.DefaultLimits()); err != nil {
		return parseFault(err, decl.RelPath)
	}
	return nil
}

// Viewer shows a massif.out with ms_print (massif-visualizer draws it,
// and reads the bzip2 files ms_print does not).
func (*Adapter) Viewer(path, kind string) (*adapter.Viewer, error) {
	if h, _ := readHead(path, 4); IsBzip2(h) {
		return &adapter.Viewer{Tool: "massif-visualizer", Argv: []string{"massif-visualizer", path},
			Note: "massif-visualizer reads bzip2 files (Debian: apt-get install massif-visualizer); ms_print needs the file decompressed first (bzcat FILE > massif.out)"}, nil
	}
	return &adapter.Viewer{Tool: "ms_print", Argv: []string{"ms_print", path},
		Note: "ms_print ships with Valgrind; massif-visualizer FILE draws the same snapshots"}, nil
}

var _ adapter.Adapter = (*Adapter)(nil)
