package pyperf

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/flameox/flameox/pkg/adapter"
	"github.com/flameox/flameox/pkg/broker"
	"github.com/flameox/flameox/pkg/config"
	"github.com/flameox/flameox/pkg/fault"
)

// Name of the adapter.
const Name = "pyperf"

// Version is the pyperf release scripts/install-collectors.sh installs.
const Version = "2.11.0"

// BenchFile is the pyperf JSON a capture writes, in its output directory.
const BenchFile = "bench.json"

// KindBenchmark is the artifact kind of pyperf files.
const KindBenchmark = "benchmark_samples"

const installRemedy = "python3 -m pip install pyperf==" + Version + " (scripts/install-collectors.sh does it), so that `python3 -m pyperf` works"

// probeScript asks the interpreter where pyperf would be imported from and
// which version its installed metadata names, without importing pyperf
// (importlib.util.find_spec locates a top-level module without executing
// it; importlib.metadata reads the dist-info METADATA file).
const probeScript = `import sys, importlib.util
s = importlib.util.find_spec("pyperf")
v = ""
if s is not None:
    try:
        import importlib.metadata as m
        v = m.version("pyperf")
    except Exception:
        v = ""
print(sys.version.split()[0])
print(s.origin if s is not None and s.origin else "")
print(v)
`

// System is what the probe and the plan look at; tests substitute fakes.
type System struct {
	LookPath func(file string) (string, error)
	// Output runs a short command and returns its stdout.
	Output func(ctx context.Context, argv []string) ([]byte, error)
}

// RealSystem is the machine flameox runs on.
func RealSystem() System {
	return System{LookPath: exec.LookPath, Output: func(ctx context.Context, argv []string) ([]byte, error) {
		env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
		for _, k := range []string{"PYENV_ROOT", "PYENV_VERSION", "VIRTUAL_ENV", "CONDA_PREFIX"} {
			if v, ok := os.LookupEnv(k); ok {
				env = append(env, k+"="+v)
			}
		}
		return broker.Output(ctx, argv, "", env, 1<<16, 10*time.Second)
	}}
}

// Adapter is the pyperf adapter.
type Adapter struct {
	Sys System
}

// New returns the pyperf adapter looking at the real machine.
func New() *Adapter { return &Adapter{Sys: RealSystem()} }

func (*Adapter) Name() string { return Name }

// Extractors returns the extractor of pyperf files.
func (*Adapter) Extractors() []adapter.Extractor { return []adapter.Extractor{&Extractor{}} }

// Probe finds python3 on PATH and asks it, without importing pyperf or
// running any workload, whether pyperf is importable and which version
// is installed (probeScript).
func (a *Adapter) Probe(ctx context.Context) adapter.Capability {
	exe, err := a.Sys.LookPath("python3")
	if err != nil {
		c := adapter.NewCapability(Name, adapter.Unavailable)
		c.Limitations = append(c.Limitations, "python3 was not found on PATH")
		c.Remediation = append(c.Remediation, "install Python 3 and put python3 on PATH, then "+installRemedy)
		return c
	}
	out, err := a.Sys.Output(ctx, []string{exe, "-c", probeScript})
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	for len(lines) < 3 {
		lines = append(lines, "")
	}
	c := adapter.NewCapability(Name, adapter.Available)
	c.Executable = exe
	c.Facts["python3"] = exe
	if err != nil || lines[0] == "" {
		c.Status = adapter.Unknown
		c.Limitations = append(c.Limitations, "asking python3 where pyperf is installed failed, so whether pyperf is importable is unknown")
		c.Remediation = append(c.Remediation, "check that `"+exe+" -c 'import pyperf'` works; otherwise "+installRemedy)
		return c
	}
	c.Facts["python_version"] = strings.TrimSpace(lines[0])
	if strings.TrimSpace(lines[1]) == "" {
		c.Status = adapter.Unavailable
		c.Limitations = append(c.Limitations, "pyperf is not importable by "+exe)
		c.Remediation = append(c.Remediation, installRemedy)
		return c
	}
	c.Facts["pyperf_module"] = strings.TrimSpace(lines[1])
	c.Version = strings.TrimSpace(lines[2])
	if c.Version == "" {
		c.Status = adapter.Degraded
		c.Limitations = append(c.Limitations, "pyperf is importable but has no installed metadata, so its version is unknown")
		c.Remediation = append(c.Remediation, "reinstall it: "+installRemedy)
	}
	c.Modes = []string{"command"}
	c.Limitations = append(c.Limitations,
		"only `pyperf command`: the workload is any command, timed whole (process start-up included) by pyperf's worker processes; benchmarks written with pyperf.Runner can be imported (`flameox import bench.json`)",
		"the probe does not import pyperf: only a capture proves that it runs")
	return c
}

// Plan returns `python3 -m pyperf command -o OUT/bench.json --copy-env
// [flags] -- argv...`. See [ParseOptions] for the options. It creates
// nothing and only looks python3 up on PATH.
func (a *Adapter) Plan(req adapter.PlanRequest) (*adapter.Plan, error) {
	if len(req.Argv) == 0 {
		return nil, fault.New(fault.InvalidCapturePlan, "the workload has no argv")
	}
	if req.OutputDir == "" {
		return nil, fault.New(fault.InvalidCapturePlan, "the pyperf adapter needs an output directory")
	}
	if len(req.Argv) > 1 && req.Argv[1] == "--" {
		return nil, fault.New(fault.InvalidCapturePlan,
			"the workload's first argument is \"--\", which pyperf command (argparse) drops before running the command").
			Fix("Remove the leading \"--\" from the workload's argv, or capture it with the process adapter.")
	}
	o, err := ParseOptions(req.Options)
	if err != nil {
		return nil, err
	}
	exe := "python3" // unresolved: the capability check refuses the capture with the install remedy
	if p, err := a.Sys.LookPath("python3"); err == nil {
		exe = p
	}
	argv := []string{exe, "-m", "pyperf", "command", "-o", filepath.Join(req.OutputDir, BenchFile), "--copy-env"}
	argv = append(append(append(argv, o.Flags()...), "--"), req.Argv...)
	lim := append(o.Limitations(),
		"--copy-env: pyperf's workers see the workload's environment as flameox's policy filtered it (pyperf alone would keep only PATH, HOME and the locale)",
		"the process facts (wall time, CPU, peak RSS) are pyperf's and its workers' together with the workload's runs; the benchmark values are in the measurements of "+BenchFile)
	return &adapter.Plan{
		Adapter: Name, Argv: argv, Env: []string{},
		Artifacts:   []adapter.ArtifactDecl{{RelPath: BenchFile, Kind: KindBenchmark, Role: "primary", MediaType: "application/json", Required: true}},
		Steps:       []adapter.Step{},
		Overhead:    "pyperf runs the workload many times (processes × (warm-ups + values) × loops, plus calibration), each in a fresh process; it adds no instrumentation, only its timer and a wrapper process per value",
		Permissions: []string{},
		Limitations: lim,
	}, nil
}

// Validate checks that a benchmark file is a pyperf file pyperf would load
// (the whole file, decoded under the default limits). Other kinds are not
// pyperf's to judge.
func (*Adapter) Validate(path string, decl adapter.ArtifactDecl) error {
	if decl.Kind != KindBenchmark {
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		return fault.Wrap(fault.ArtifactParseFailed, err, "open %s", decl.RelPath)
	}
	defer f.Close()
	if _, err := Decode(f, config.DefaultLimits()); err != nil {
		return decodeFault(err, "")
	}
	return nil
}

// Viewer shows a pyperf file with pyperf itself (`pyperf show`; `pyperf
// stats`, `hist` and `dump` read it too); anything else in less.
func (*Adapter) Viewer(path, kind string) (*adapter.Viewer, error) {
	if kind != KindBenchmark {
		return &adapter.Viewer{Tool: "less", Argv: []string{"less", path}}, nil
	}
	return &adapter.Viewer{Tool: "pyperf", Argv: []string{"python3", "-m", "pyperf", "show", path},
		Note: "python3 -m pyperf stats, hist or dump FILE show more; install with " + installRemedy}, nil
}

var _ adapter.Adapter = (*Adapter)(nil)
