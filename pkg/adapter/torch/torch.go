package torch

import (
	"context"
	_ "embed"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/flameox/flameox/pkg/adapter"
	"github.com/flameox/flameox/pkg/adapter/trace"
	"github.com/flameox/flameox/pkg/broker"
	"github.com/flameox/flameox/pkg/fault"
)

// Name of the adapter.
const Name = "torch"

// Version is the torch release `make test-torch` installs and the live
// test runs (docs/torch.md).
const Version = "2.15.0"

// PythonEnv names the interpreter the probe asks, and the plan runs for a
// workload whose argv starts with a .py script; unset, python3 on PATH.
// A workload whose argv names an interpreter runs under that one.
const PythonEnv = "FLAMEOX_TORCH_PYTHON"

// Files a capture writes in its output directory: the Chrome trace
// (TraceFileGzip with options.gzip) and the launcher's sidecar.
const (
	TraceFile     = "torch-trace.json"
	TraceFileGzip = "torch-trace.json.gz"
	SidecarFile   = "torch-profile.json"
)

// Kinds of the two artifacts: the trace is what the trace extractor
// reads; the sidecar is the collector's own record.
const (
	Kind        = trace.KindTrace
	SidecarKind = "collector_metadata"
)

// SidecarFormat is the sidecar's format number (its flameox_torch key).
const SidecarFormat = 1

// Launcher is contrib/python/flameox_torch.py, carried in the binary
// (launcher.py is a copy; a test keeps the two equal). Prepare writes it
// into the capture's output directory as LauncherFile, which the plan
// runs; it is not an artifact.
//
//go:embed launcher.py
var Launcher string

// LauncherFile is the launcher's name in the output directory.
const LauncherFile = "flameox_torch.py"

const installRemedy = "install torch for that interpreter (`python3 -m pip install torch==" + Version + "`; `make test-torch` makes a virtualenv with it), or set " + PythonEnv + " to a python that imports torch"

// System is what the probe and the plan look at; tests substitute fakes.
type System struct {
	LookPath func(file string) (string, error)
	// Output runs a short command and returns its stdout.
	Output func(ctx context.Context, argv []string, timeout time.Duration) ([]byte, error)
	// Getenv reads PythonEnv; nil is os.Getenv.
	Getenv func(key string) string
}

// RealSystem is the machine flameox runs on: commands go through the
// broker with the variables that locate a Python installation.
func RealSystem() System {
	return System{LookPath: exec.LookPath, Output: func(ctx context.Context, argv []string, timeout time.Duration) ([]byte, error) {
		env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
		for _, k := range []string{"PYENV_ROOT", "PYENV_VERSION", "VIRTUAL_ENV", "CONDA_PREFIX", "LANG", "LC_ALL"} {
			if v, ok := os.LookupEnv(k); ok {
				env = append(env, k+"="+v)
			}
		}
		return broker.Output(ctx, argv, "", env, 1<<16, timeout)
	}, Getenv: os.Getenv}
}

func (s System) getenv(k string) string {
	if s.Getenv == nil {
		return os.Getenv(k)
	}
	return s.Getenv(k)
}

// python is the interpreter the probe asks: $FLAMEOX_TORCH_PYTHON, else
// python3 on PATH.
func (s System) python() (string, error) {
	if p := s.getenv(PythonEnv); p != "" {
		return s.LookPath(p)
	}
	return s.LookPath("python3")
}

// Adapter is the torch.profiler adapter.
type Adapter struct{ Sys System }

// New returns the torch adapter looking at the real machine.
func New() *Adapter { return &Adapter{Sys: RealSystem()} }

func (*Adapter) Name() string { return Name }

// probeScript locates torch and reads its version and CUDA build from
// its files, without importing it (an import takes seconds and may touch
// the GPU driver).
const probeScript = `import sys, os, re, importlib.util
s = importlib.util.find_spec("torch")
v = full = cuda = ""
if s is not None and s.origin:
    try:
        import importlib.metadata as m
        v = m.version("torch")
    except Exception:
        v = ""
    try:
        with open(os.path.join(os.path.dirname(s.origin), "version.py"), encoding="utf-8") as f:
            t = f.read()
        mv = re.search(r"^__version__\s*=\s*['\"]([^'\"]+)['\"]", t, re.M)
        mc = re.search(r"^cuda\b[^=\n]*=\s*['\"]([^'\"]+)['\"]", t, re.M)
        full = mv.group(1) if mv else ""
        cuda = mc.group(1) if mc else ""
    except Exception:
        pass
print(sys.version.split()[0])
print(s.origin if s is not None and s.origin else "")
print(v)
print(full)
print(cuda)
`

// Probe asks the interpreter ($FLAMEOX_TORCH_PYTHON, else python3),
// without importing torch, whether torch is importable, which release
// and which CUDA build it is.
func (a *Adapter) Probe(ctx context.Context) adapter.Capability {
	exe, err := a.Sys.python()
	if err != nil {
		c := adapter.NewCapability(Name, adapter.Unavailable)
		which := "python3 was not found on PATH"
		if p := a.Sys.getenv(PythonEnv); p != "" {
			which = PythonEnv + "=" + p + " is not an executable"
		}
		c.Limitations = append(c.Limitations, which)
		c.Remediation = append(c.Remediation, "install Python 3 and put python3 on PATH (or set "+PythonEnv+"), then "+installRemedy)
		return c
	}
	return a.probe(ctx, exe, "the probe asks "+exe+" (set "+PythonEnv+" for another); a workload that names its own interpreter is asked about that one when it is planned")
}

// ProbeWorkload asks the interpreter the workload's argv names, the one
// the plan runs (adapter.WorkloadProber): a workload whose argv starts
// with a virtualenv's python is judged by that virtualenv. Other argvs
// (a bare script.py) get Probe's answer.
func (a *Adapter) ProbeWorkload(ctx context.Context, argv []string) adapter.Capability {
	if len(argv) == 0 || !isPython(argv[0]) {
		return a.Probe(ctx)
	}
	exe, err := a.Sys.LookPath(argv[0])
	if err != nil {
		c := adapter.NewCapability(Name, adapter.Unavailable)
		c.Limitations = append(c.Limitations, "the workload's interpreter "+argv[0]+" is not an executable")
		c.Remediation = append(c.Remediation, "name an interpreter that imports torch in the workload's argv; "+installRemedy)
		return c
	}
	return a.probe(ctx, exe, "asked the workload's interpreter "+exe)
}

// probe asks exe about torch; asked says which interpreter was asked
// and why.
func (a *Adapter) probe(ctx context.Context, exe, asked string) adapter.Capability {
	c := adapter.NewCapability(Name, adapter.Available)
	c.Executable = exe
	c.Facts["python"] = exe
	out, err := a.Sys.Output(ctx, []string{exe, "-c", probeScript}, 20*time.Second)
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	for len(lines) < 5 {
		lines = append(lines, "")
	}
	for i := range lines {
		lines[i] = strings.TrimSpace(lines[i])
	}
	if err != nil || lines[0] == "" {
		c.Status = adapter.Unknown
		c.Limitations = append(c.Limitations, "asking "+exe+" where torch is installed failed")
		c.Remediation = append(c.Remediation, "check that `"+exe+" -c 'import torch'` works; otherwise "+installRemedy)
		return c
	}
	c.Facts["python_version"] = lines[0]
	if lines[1] == "" {
		c.Status = adapter.Unavailable
		c.Limitations = append(c.Limitations, "torch is not importable by "+exe)
		c.Remediation = append(c.Remediation, installRemedy)
		return c
	}
	c.Facts["torch_module"] = lines[1]
	c.Version = lines[3]
	if c.Version == "" {
		c.Version = lines[2]
	}
	if c.Version == "" {
		c.Status = adapter.Degraded
		c.Limitations = append(c.Limitations, "torch is importable but neither its metadata nor torch/version.py names its version")
		c.Remediation = append(c.Remediation, "reinstall it: "+installRemedy)
	} else {
		c.Facts["torch_version"] = c.Version
	}
	if lines[4] != "" {
		c.Facts["torch_cuda_build"] = lines[4]
	} else {
		c.Limitations = append(c.Limitations, "this torch is a CPU-only build: options.activities=cuda records nothing on a device")
	}
	if base, _, _ := strings.Cut(c.Version, "+"); base != "" && base != Version {
		c.Facts["pinned_version"] = Version
		c.Limitations = append(c.Limitations, "torch "+c.Version+" is installed; flameox is tested with "+Version)
	}
	c.Modes = []string{"cpu", "cuda"}
	c.Limitations = append(c.Limitations,
		"Python programs only (python SCRIPT, python -m MODULE, python -c CODE), profiled in this process from start to end (no schedule)",
		"CUDA activity is recorded only where torch.cuda.is_available() in the workload's process; the capture's sidecar says what was",
		asked)
	return c
}

// Options are the torch.profiler choices of one capture.
type Options struct {
	// Activities are the profiler activities asked for, in the order
	// cpu, cuda.
	Activities                             []string
	RecordShapes, ProfileMemory, WithStack bool
	// Gzip writes the trace as .json.gz.
	Gzip bool
}

var optionNames = []string{"activities", "gzip", "profile_memory", "record_shapes", "with_stack"}

// ParseOptions reads activities ("cpu", "cuda" or "cpu,cuda"; default
// cpu) and record_shapes, profile_memory, with_stack and gzip
// ("true"/"false"); anything else is INVALID_CAPTURE_PLAN.
func ParseOptions(opts map[string]string) (Options, error) {
	o := Options{Activities: []string{"cpu"}}
	keys := make([]string, 0, len(opts))
	for k := range opts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := opts[k]
		var dst *bool
		switch k {
		case "activities":
			acts, err := parseActivities(v)
			if err != nil {
				return o, err
			}
			o.Activities = acts
			continue
		case "record_shapes":
			dst = &o.RecordShapes
		case "profile_memory":
			dst = &o.ProfileMemory
		case "with_stack":
			dst = &o.WithStack
		case "gzip":
			dst = &o.Gzip
		default:
			return o, fault.New(fault.InvalidCapturePlan, "torch has no capture option %q", k).
				With("options", strings.Join(optionNames, ","))
		}
		if v != "true" && v != "false" {
			return o, fault.New(fault.InvalidCapturePlan, "torch option %s=%q: want \"true\" or \"false\"", k, v).With("option", k)
		}
		*dst = v == "true"
	}
	return o, nil
}

func parseActivities(v string) ([]string, error) {
	seen := map[string]bool{}
	for _, a := range strings.Split(v, ",") {
		a = strings.TrimSpace(a)
		if a != "cpu" && a != "cuda" {
			return nil, fault.New(fault.InvalidCapturePlan, "torch option activities=%q: want cpu, cuda or cpu,cuda", v).With("option", "activities")
		}
		if seen[a] {
			return nil, fault.New(fault.InvalidCapturePlan, "torch option activities=%q names %s twice", v, a).With("option", "activities")
		}
		seen[a] = true
	}
	var acts []string
	for _, a := range []string{"cpu", "cuda"} {
		if seen[a] {
			acts = append(acts, a)
		}
	}
	return acts, nil
}

// TraceName is the trace file the options choose.
func (o Options) TraceName() string {
	if o.Gzip {
		return TraceFileGzip
	}
	return TraceFile
}

// Flags are the launcher flags the options choose (--activities always).
func (o Options) Flags() []string {
	f := []string{"--activities", strings.Join(o.Activities, ",")}
	if o.RecordShapes {
		f = append(f, "--record-shapes")
	}
	if o.ProfileMemory {
		f = append(f, "--profile-memory")
	}
	if o.WithStack {
		f = append(f, "--with-stack")
	}
	return f
}

func isPython(argv0 string) bool {
	b := filepath.Base(argv0)
	return b == "python" || strings.HasPrefix(b, "python3") || strings.HasPrefix(b, "python2")
}

const argvFix = "Write the workload's argv as [\"python3\", \"script.py\", ...], [\"python3\", \"-m\", \"module\", ...] or [\"python3\", \"-c\", \"code\"], naming the interpreter that imports torch."

// Plan returns `PYTHON OUT/flameox_torch.py --out OUT/torch-trace.json
// --sidecar OUT/torch-profile.json --activities A [flags] -- SCRIPT|-m
// MODULE|-c CODE args...`, the launcher being the one Prepare writes and
// PYTHON the workload's own interpreter (else PythonEnv's, else python3).
func (a *Adapter) Plan(req adapter.PlanRequest) (*adapter.Plan, error) {
	if len(req.Argv) == 0 {
		return nil, fault.New(fault.InvalidCapturePlan, "the workload has no argv")
	}
	if req.OutputDir == "" {
		return nil, fault.New(fault.InvalidCapturePlan, "the torch adapter needs an output directory")
	}
	o, err := ParseOptions(req.Options)
	if err != nil {
		return nil, err
	}
	exe := "python3"
	if p, err := a.Sys.python(); err == nil {
		exe = p
	}
	rest := req.Argv
	switch {
	case isPython(req.Argv[0]):
		exe, rest = req.Argv[0], req.Argv[1:]
	case strings.HasSuffix(req.Argv[0], ".py"):
	default:
		return nil, fault.New(fault.InvalidCapturePlan, "torch runs Python programs; the workload runs %q", filepath.Base(req.Argv[0])).Fix(argvFix)
	}
	if len(rest) == 0 || (strings.HasPrefix(rest[0], "-") && rest[0] != "-m" && rest[0] != "-c") || ((rest[0] == "-m" || rest[0] == "-c") && len(rest) < 2) {
		return nil, fault.New(fault.InvalidCapturePlan, "the torch launcher needs a script, -m MODULE or -c CODE after the interpreter").Fix(argvFix)
	}
	traceName := o.TraceName()
	argv := []string{exe, filepath.Join(req.OutputDir, LauncherFile), "--out", filepath.Join(req.OutputDir, traceName), "--sidecar", filepath.Join(req.OutputDir, SidecarFile)}
	argv = append(append(append(argv, o.Flags()...), "--"), rest...)
	lim := []string{
		"torch.profiler records the operators torch runs (aten::*, record_function ranges), not Python lines; the whole program is one profiling window",
		"the trace is written when the program returns, calls sys.exit or raises; os._exit, a signal or the timeout leaves none (the sidecar says whether it was exported)",
	}
	if !slices.Contains(o.Activities, "cuda") {
		lim = append(lim, "without cuda in options.activities, device kernels, memcpys and their times are not recorded")
	} else {
		lim = append(lim, "cuda is recorded only where torch.cuda.is_available() in the workload's process; otherwise the launcher says so and profiles the CPU only (the sidecar's activities_used)")
	}
	if !o.RecordShapes {
		lim = append(lim, "without options.record_shapes, operators carry no input shapes")
	}
	if !o.ProfileMemory {
		lim = append(lim, "without options.profile_memory, tensor allocations and frees are not recorded")
	}
	if !o.WithStack {
		lim = append(lim, "without options.with_stack, operators carry no Python call stacks")
	}
	traceMedia := "application/json"
	if o.Gzip {
		traceMedia = "application/gzip"
	}
	return &adapter.Plan{
		Adapter: Name, Argv: argv, Env: []string{},
		Artifacts: []adapter.ArtifactDecl{
			{RelPath: traceName, Kind: Kind, Role: "primary", MediaType: traceMedia, Required: true},
			{RelPath: SidecarFile, Kind: SidecarKind, Role: "metadata", MediaType: "application/json", Required: true},
		},
		Steps:       []adapter.Step{},
		Overhead:    "torch.profiler records every operator the program runs; record_shapes, profile_memory and with_stack each add to the cost, with_stack most",
		Permissions: []string{},
		Limitations: lim,
	}, nil
}

// Prepare writes the launcher into the output directory, before the
// capture starts the plan's command (adapter.Preparer).
func (*Adapter) Prepare(outDir string) error {
	if err := os.WriteFile(filepath.Join(outDir, LauncherFile), []byte(Launcher), 0o600); err != nil {
		return fault.Wrap(fault.InternalError, err, "write the torch launcher into the capture's output directory")
	}
	return nil
}

// Sidecar is what the launcher writes beside the trace: what it asked
// torch.profiler for and what it recorded.
type Sidecar struct {
	Format              *int     `json:"flameox_torch"`
	TorchVersion        string   `json:"torch_version"`
	PythonVersion       string   `json:"python_version"`
	CUDAVersion         *string  `json:"cuda_version"`
	ActivitiesRequested []string `json:"activities_requested"`
	ActivitiesUsed      []string `json:"activities_used"`
	RecordShapes        bool     `json:"record_shapes"`
	ProfileMemory       bool     `json:"profile_memory"`
	WithStack           bool     `json:"with_stack"`
	CUDAAvailable       bool     `json:"cuda_available"`
	CUDADevices         []string `json:"cuda_devices"`
	Program             []string `json:"program"`
	Trace               string   `json:"trace"`
	TraceExported       bool     `json:"trace_exported"`
	ExportError         *string  `json:"export_error"`
	ExitStatus          int      `json:"exit_status"`
	Exception           *string  `json:"exception"`
	// Steps is how many times the program called flameox_torch.step().
	Steps       int      `json:"steps"`
	ProfiledNs  int64    `json:"profiled_ns"`
	Limitations []string `json:"limitations"`
}

// maxSidecarBytes bounds a sidecar: a few flags, names and the program's
// argv.
const maxSidecarBytes = 1 << 20

// ParseSidecar reads a sidecar, at most 1 MiB: a JSON object with the
// launcher's format number.
func ParseSidecar(r io.Reader) (*Sidecar, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxSidecarBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxSidecarBytes {
		return nil, fault.New(fault.ArtifactParseFailed, "a torch sidecar larger than 1 MiB")
	}
	var head struct {
		Format *int `json:"flameox_torch"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return nil, fault.Wrap(fault.ArtifactParseFailed, err, "not a torch launcher sidecar (JSON)")
	}
	if head.Format == nil {
		return nil, fault.New(fault.ArtifactParseFailed, "not a torch launcher sidecar (no flameox_torch format number)")
	}
	if *head.Format != SidecarFormat {
		return nil, fault.New(fault.ArtifactParseFailed, "torch sidecar format %d; this flameox reads format %d", *head.Format, SidecarFormat)
	}
	var s Sidecar
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fault.Wrap(fault.ArtifactParseFailed, err, "a torch launcher sidecar that does not parse")
	}
	return &s, nil
}

// Validate checks a trace by the trace extractor's own recognition (a
// traceEvents object, plain or gzip) and a sidecar by its format number.
// Other kinds (process output) are not torch's to judge.
func (*Adapter) Validate(path string, decl adapter.ArtifactDecl) error {
	switch decl.Kind {
	case Kind:
		if !trace.NewExtractor().Accepts(adapter.ExtractInput{Path: path}) {
			return fault.New(fault.ArtifactParseFailed, "%s is not a Chrome trace (no traceEvents array, plain or gzip)", decl.RelPath)
		}
	case SidecarKind:
		f, err := os.Open(path)
		if err != nil {
			return fault.Wrap(fault.ArtifactParseFailed, err, "open %s", decl.RelPath)
		}
		defer f.Close()
		if _, err := ParseSidecar(f); err != nil {
			return fault.Wrap(fault.ArtifactParseFailed, err, "%s", decl.RelPath)
		}
	}
	return nil
}

// Viewer opens a trace in Perfetto UI or chrome://tracing (as the trace
// extractor says) and a sidecar in Python's json.tool.
func (*Adapter) Viewer(path, kind string) (*adapter.Viewer, error) {
	switch kind {
	case Kind:
		return trace.NewExtractor().Viewer(path, kind)
	case SidecarKind:
		return &adapter.Viewer{Tool: "json.tool", Argv: []string{"python3", "-m", "json.tool", path},
			Note: "what the torch launcher asked torch.profiler for and what it recorded"}, nil
	}
	return &adapter.Viewer{Tool: "less", Argv: []string{"less", path}}, nil
}

var (
	_ adapter.Adapter        = (*Adapter)(nil)
	_ adapter.Preparer       = (*Adapter)(nil)
	_ adapter.WorkloadProber = (*Adapter)(nil)
)
