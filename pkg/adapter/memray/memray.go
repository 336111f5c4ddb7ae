package memray

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/flameox/flameox/pkg/adapter"
	"github.com/flameox/flameox/pkg/broker"
	"github.com/flameox/flameox/pkg/fault"
)

// Name of the adapter and its extractor.
const Name = "memray"

// Version is the memray release scripts/install-collectors.sh installs.
const Version = "1.20.0"

// CaptureFile is the capture a run writes, in its output directory.
const CaptureFile = "memray.bin"

// Kind is the artifact kind of memray captures.
const Kind = "memory_profile"

const installRemedy = "python3 -m pip install memray==" + Version + " (scripts/install-collectors.sh does it), so that `python3 -m memray` works"

// System is what the probe, the plan and the extractor look at; tests
// substitute fakes.
type System struct {
	LookPath func(file string) (string, error)
	// Output runs a short command and returns its stdout.
	Output func(ctx context.Context, argv []string, timeout time.Duration) ([]byte, error)
	// Getenv reads the variables that locate memray's readers
	// (ReadersEnv, XDG_DATA_HOME, HOME); nil is os.Getenv.
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

// Adapter is the memray adapter.
type Adapter struct{ Sys System }

// New returns the memray adapter looking at the real machine.
func New() *Adapter { return &Adapter{Sys: RealSystem()} }

func (*Adapter) Name() string { return Name }

// Extractors returns the extractor of memray captures.
func (a *Adapter) Extractors() []adapter.Extractor {
	return []adapter.Extractor{&Extractor{Sys: a.Sys}}
}

// probeScript locates memray and its installed version without importing it.
const probeScript = `import sys, importlib.util
s = importlib.util.find_spec("memray")
v = ""
if s is not None:
    try:
        import importlib.metadata as m
        v = m.version("memray")
    except Exception:
        v = ""
print(sys.version.split()[0])
print(s.origin if s is not None and s.origin else "")
print(v)
`

// Probe asks python3, without importing memray, whether memray is
// importable and which version is installed.
func (a *Adapter) Probe(ctx context.Context) adapter.Capability {
	exe, err := a.Sys.LookPath("python3")
	if err != nil {
		c := adapter.NewCapability(Name, adapter.Unavailable)
		c.Limitations = append(c.Limitations, "python3 was not found on PATH")
		c.Remediation = append(c.Remediation, "install Python 3 and put python3 on PATH, then "+installRemedy)
		return c
	}
	out, err := a.Sys.Output(ctx, []string{exe, "-c", probeScript}, 10*time.Second)
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	for len(lines) < 3 {
		lines = append(lines, "")
	}
	c := adapter.NewCapability(Name, adapter.Available)
	c.Executable = exe
	c.Facts["python3"] = exe
	if err != nil || lines[0] == "" {
		c.Status = adapter.Unknown
		c.Limitations = append(c.Limitations, "asking python3 where memray is installed failed")
		c.Remediation = append(c.Remediation, "check that `"+exe+" -m memray --version` works; otherwise "+installRemedy)
		return c
	}
	c.Facts["python_version"] = strings.TrimSpace(lines[0])
	if strings.TrimSpace(lines[1]) == "" {
		c.Status = adapter.Unavailable
		c.Limitations = append(c.Limitations, "memray is not importable by "+exe)
		c.Remediation = append(c.Remediation, installRemedy)
		return c
	}
	c.Facts["memray_module"] = strings.TrimSpace(lines[1])
	c.Version = strings.TrimSpace(lines[2])
	if c.Version == "" {
		c.Status = adapter.Degraded
		c.Limitations = append(c.Limitations, "memray is importable but has no installed metadata, so its version is unknown")
		c.Remediation = append(c.Remediation, "reinstall it: "+installRemedy)
	}
	c.Modes = []string{"python"}
	c.Limitations = append(c.Limitations,
		"Python programs only (python SCRIPT, python -m MODULE, python -c CODE)",
		"without options.native, allocations are attributed to Python frames only: C/C++ callers are hidden",
		"a capture file is readable only by the memray release that wrote it (its header version)")
	return c
}

// Options are the memray choices of one capture.
type Options struct {
	Native, FollowFork, TracePythonAllocators bool
}

var optionNames = []string{"follow_fork", "native", "trace_python_allocators"}

// ParseOptions reads native, follow_fork and trace_python_allocators
// ("true"/"false"); anything else is INVALID_CAPTURE_PLAN.
func ParseOptions(opts map[string]string) (Options, error) {
	var o Options
	keys := make([]string, 0, len(opts))
	for k := range opts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := opts[k]
		var dst *bool
		switch k {
		case "native":
			dst = &o.Native
		case "follow_fork":
			dst = &o.FollowFork
		case "trace_python_allocators":
			dst = &o.TracePythonAllocators
		default:
			return o, fault.New(fault.InvalidCapturePlan, "memray has no capture option %q", k).
				With("options", strings.Join(optionNames, ","))
		}
		if v != "true" && v != "false" {
			return o, fault.New(fault.InvalidCapturePlan, "memray option %s=%q: want \"true\" or \"false\"", k, v).With("option", k)
		}
		*dst = v == "true"
	}
	return o, nil
}

// Flags are the `memray run` flags the options choose.
func (o Options) Flags() []string {
	var f []string
	if o.Native {
		f = append(f, "--native")
	}
	if o.FollowFork {
		f = append(f, "--follow-fork")
	}
	if o.TracePythonAllocators {
		f = append(f, "--trace-python-allocators")
	}
	return f
}

func isPython(argv0 string) bool {
	b := filepath.Base(argv0)
	return b == "python" || strings.HasPrefix(b, "python3") || strings.HasPrefix(b, "python2")
}

// Plan returns `PYTHON -m memray run -o OUT/memray.bin -f [flags]
// SCRIPT|-m MODULE|-c CODE args...`, with PYTHON the workload's own
// interpreter (memray must be installed for it).
func (a *Adapter) Plan(req adapter.PlanRequest) (*adapter.Plan, error) {
	if len(req.Argv) == 0 {
		return nil, fault.New(fault.InvalidCapturePlan, "the workload has no argv")
	}
	if req.OutputDir == "" {
		return nil, fault.New(fault.InvalidCapturePlan, "the memray adapter needs an output directory")
	}
	o, err := ParseOptions(req.Options)
	if err != nil {
		return nil, err
	}
	exe := "python3"
	if p, err := a.Sys.LookPath("python3"); err == nil {
		exe = p
	}
	rest := req.Argv
	switch {
	case isPython(req.Argv[0]):
		exe, rest = req.Argv[0], req.Argv[1:]
	case strings.HasSuffix(req.Argv[0], ".py"):
	default:
		return nil, fault.New(fault.InvalidCapturePlan, "memray runs Python programs; the workload runs %q", filepath.Base(req.Argv[0])).
			Fix("Write the workload's argv as [\"python3\", \"script.py\", ...], [\"python3\", \"-m\", \"module\", ...] or [\"python3\", \"-c\", \"code\"].")
	}
	if len(rest) == 0 || (strings.HasPrefix(rest[0], "-") && rest[0] != "-m" && rest[0] != "-c") {
		return nil, fault.New(fault.InvalidCapturePlan, "memray run needs a script, -m MODULE or -c CODE after the interpreter").
			Fix("Write the workload's argv as [\"python3\", \"script.py\", ...], [\"python3\", \"-m\", \"module\", ...] or [\"python3\", \"-c\", \"code\"].")
	}
	argv := []string{exe, "-m", "memray", "run", "-o", filepath.Join(req.OutputDir, CaptureFile), "-f", "-q"}
	argv = append(append(argv, o.Flags()...), rest...)
	lim := []string{"memray traces every allocation: the process facts (wall time, peak RSS) include memray's own cost"}
	if !o.Native {
		lim = append(lim, "without options.native, allocations are attributed to Python frames only: C/C++ callers are hidden")
	}
	if !o.FollowFork {
		lim = append(lim, "without options.follow_fork, children the program forks are not traced")
	}
	if !o.TracePythonAllocators {
		lim = append(lim, "without options.trace_python_allocators, pymalloc's small objects are seen only as the arenas it maps")
	}
	return &adapter.Plan{
		Adapter: Name, Argv: argv, Env: []string{},
		Artifacts:   []adapter.ArtifactDecl{{RelPath: CaptureFile, Kind: Kind, Role: "primary", MediaType: "application/octet-stream", Required: true}},
		Steps:       []adapter.Step{},
		Overhead:    "memray intercepts every allocation and writes a record for each; native tracing (options.native) costs more",
		Permissions: []string{},
		Limitations: lim,
	}, nil
}

// Validate checks that a memory profile carries memray's signature.
func (*Adapter) Validate(path string, decl adapter.ArtifactDecl) error {
	if decl.Kind != Kind {
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		return fault.Wrap(fault.ArtifactParseFailed, err, "open %s", decl.RelPath)
	}
	defer f.Close()
	head := make([]byte, 64)
	n, _ := f.Read(head)
	if !looksMemray(head[:n]) {
		return fault.New(fault.ArtifactParseFailed, "%s is not a memray capture (no memray header)", decl.RelPath)
	}
	return nil
}

// Viewer shows a capture with memray's own reporters, of the release
// that reads its header version where one is installed (FindReader).
func (a *Adapter) Viewer(path, kind string) (*adapter.Viewer, error) {
	if kind != Kind {
		return &adapter.Viewer{Tool: "less", Argv: []string{"less", path}}, nil
	}
	py, note := "python3", "python3 -m memray tree, table, summary or stats FILE show more; install with "+installRemedy
	if h, err := HeaderVersion(path); err == nil && h != defaultHeader && a.Sys.LookPath != nil {
		if r, ok, err := FindReader(a.Sys, h); err == nil && ok {
			py, note = r.Python, fmt.Sprintf("memray %s reads this capture (header version %d); %s -m memray tree, table, summary or stats FILE show more", r.Release, h, r.Python)
		} else {
			note = readerRemedy(a.Sys.getenv, h)
		}
	}
	return &adapter.Viewer{Tool: "memray", Argv: []string{py, "-m", "memray", "flamegraph", path}, Note: note}, nil
}

var _ adapter.Adapter = (*Adapter)(nil)
