package coverage

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/flameox/flameox/pkg/adapter"
	"github.com/flameox/flameox/pkg/broker"
	"github.com/flameox/flameox/pkg/fault"
)

// Name of the adapter.
const Name = "coverage"

// Version is the coverage.py release scripts/install-collectors.sh
// installs.
const Version = "7.17.5"

// Files a capture writes in its output directory: coverage.py's data
// file (SQLite, kept as the native artifact) and the JSON report the
// post-capture step writes from it.
const (
	DataFile   = ".coverage"
	ReportFile = "coverage.json"
)

// Kind is the artifact kind of both files.
const Kind = "execution_coverage"

const installRemedy = "python3 -m pip install coverage==" + Version + " (scripts/install-collectors.sh does it), so that `python3 -m coverage --version` works"

// System is what the probe and the plan look at; tests substitute fakes.
type System struct {
	LookPath func(file string) (string, error)
	// Output runs a short command and returns its stdout.
	Output func(ctx context.Context, argv []string, timeout time.Duration) ([]byte, error)
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
	}}
}

// Adapter is the coverage.py adapter.
type Adapter struct{ Sys System }

// New returns the coverage.py adapter looking at the real machine.
func New() *Adapter { return &Adapter{Sys: RealSystem()} }

func (*Adapter) Name() string { return Name }

// Extractors returns the extractor of coverage.py JSON reports.
func (*Adapter) Extractors() []adapter.Extractor { return []adapter.Extractor{NewExtractor()} }

// versionLine is the first line of `coverage --version`:
// "Coverage.py, version 7.17.5 with C extension".
var versionLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^Coverage\.py, version (\S+)(?: with (.*))?$`) })

// Probe runs `python3 -m coverage --version`, which reports and changes
// nothing.
func (a *Adapter) Probe(ctx context.Context) adapter.Capability {
	exe, err := a.Sys.LookPath("python3")
	if err != nil {
		c := adapter.NewCapability(Name, adapter.Unavailable)
		c.Limitations = append(c.Limitations, "python3 was not found on PATH")
		c.Remediation = append(c.Remediation, "install Python 3 and put python3 on PATH, then "+installRemedy)
		return c
	}
	c := adapter.NewCapability(Name, adapter.Available)
	c.Executable = exe
	c.Facts["python3"] = exe
	out, err := a.Sys.Output(ctx, []string{exe, "-m", "coverage", "--version"}, 10*time.Second)
	first, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	m := versionLine().FindStringSubmatch(strings.TrimSpace(first))
	if err != nil || m == nil {
		c.Status = adapter.Unavailable
		c.Limitations = append(c.Limitations, "coverage.py is not importable by "+exe+" (`python3 -m coverage --version` failed)")
		c.Remediation = append(c.Remediation, installRemedy)
		return c
	}
	c.Version = m[1]
	c.Facts["coverage_version"] = m[1]
	if m[2] != "" {
		c.Facts["coverage_tracer"] = m[2]
	} else {
		c.Limitations = append(c.Limitations, "coverage.py runs without its C extension: the Python tracer is several times slower")
	}
	if c.Version != Version {
		c.Facts["pinned_version"] = Version
		c.Limitations = append(c.Limitations, "coverage.py "+c.Version+" is installed; flameox is tested with "+Version)
	}
	c.Modes = []string{"python"}
	c.Limitations = append(c.Limitations,
		"Python programs only (python SCRIPT or python -m MODULE; coverage run cannot run python -c CODE)",
		"coverage.py reads the project's .coveragerc, setup.cfg, tox.ini or pyproject.toml ([tool.coverage]): its [run] and [report] settings apply",
		"coverage.py records whether a line or branch ran, not how often")
	return c
}

// Options are the coverage.py choices of one capture.
type Options struct {
	// Context is the static context label (--context) of every line the
	// run executes.
	Context string
	// Source limits measurement to these directories or packages
	// (--source), comma-separated as coverage.py takes them.
	Source string
}

var optionNames = []string{"context", "source"}

var safeValue = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_./:@+][A-Za-z0-9_./:=@+, -]{0,255}$`) })

// ParseOptions reads context and source; anything else is
// INVALID_CAPTURE_PLAN.
func ParseOptions(opts map[string]string) (Options, error) {
	var o Options
	keys := make([]string, 0, len(opts))
	for k := range opts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := opts[k]
		switch k {
		case "context":
			o.Context = v
		case "source":
			o.Source = v
		default:
			return o, fault.New(fault.InvalidCapturePlan, "coverage has no capture option %q", k).
				With("options", strings.Join(optionNames, ","))
		}
		if !safeValue().MatchString(v) {
			return o, fault.New(fault.InvalidCapturePlan, "coverage option %s=%q: want letters, digits and _ . / : = @ + , - or spaces, at most 256, starting with a letter, a digit or _ . / : @ +", k, v).With("option", k)
		}
	}
	return o, nil
}

// Flags are the `coverage run` flags the options choose.
func (o Options) Flags() []string {
	var f []string
	if o.Context != "" {
		f = append(f, "--context="+o.Context)
	}
	if o.Source != "" {
		f = append(f, "--source="+o.Source)
	}
	return f
}

func isPython(argv0 string) bool {
	b := filepath.Base(argv0)
	return b == "python" || strings.HasPrefix(b, "python3") || strings.HasPrefix(b, "python2")
}

// jsonScript runs `coverage json` with the project root as the current
// directory, so that the report names files relative to it, as
// `coverage json` run there would: coverage.py's own command line
// (coverage.cmdline.main, the `coverage` console script) takes the rest
// of the arguments.
const jsonScript = `import os, sys
os.chdir(sys.argv[1])
from coverage.cmdline import main
sys.exit(main(sys.argv[2:]))
`

// Plan returns `PYTHON -m coverage run --branch --data-file=OUT/.coverage
// [--context=LABEL] [--source=SRC] SCRIPT|-m MODULE args...` with PYTHON
// the workload's own interpreter, and a step writing the JSON report
// (`coverage json --show-contexts`) from the data file.
func (a *Adapter) Plan(req adapter.PlanRequest) (*adapter.Plan, error) {
	if len(req.Argv) == 0 {
		return nil, fault.New(fault.InvalidCapturePlan, "the workload has no argv")
	}
	if req.OutputDir == "" {
		return nil, fault.New(fault.InvalidCapturePlan, "the coverage adapter needs an output directory")
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
	fix := "Write the workload's argv as [\"python3\", \"script.py\", ...] or [\"python3\", \"-m\", \"module\", ...]."
	switch {
	case isPython(req.Argv[0]):
		exe, rest = req.Argv[0], req.Argv[1:]
	case strings.HasSuffix(req.Argv[0], ".py"):
	default:
		return nil, fault.New(fault.InvalidCapturePlan, "coverage runs Python programs; the workload runs %q", filepath.Base(req.Argv[0])).Fix(fix)
	}
	switch {
	case len(rest) > 0 && rest[0] == "-c":
		return nil, fault.New(fault.InvalidCapturePlan, "coverage run cannot run python -c CODE").Fix("Put the code in a script and run it: " + fix)
	case len(rest) == 0 || (strings.HasPrefix(rest[0], "-") && rest[0] != "-m") || (rest[0] == "-m" && len(rest) < 2):
		return nil, fault.New(fault.InvalidCapturePlan, "coverage run needs a script or -m MODULE after the interpreter").Fix(fix)
	}
	argv := []string{exe, "-m", "coverage", "run", "--branch", "--data-file=" + filepath.Join(req.OutputDir, DataFile)}
	argv = append(append(argv, o.Flags()...), rest...)
	root := req.ProjectRoot
	if root == "" {
		root = "."
	}
	step := adapter.Step{Name: "coverage-json",
		Argv:     []string{exe, "-c", jsonScript, root, "json", "--show-contexts", "--data-file={out}/" + DataFile, "-o", "{out}/" + ReportFile},
		Produces: adapter.ArtifactDecl{RelPath: ReportFile, Kind: Kind, Role: "derived", MediaType: "application/json", Required: true}}
	lim := []string{
		"coverage.py traces every line: the process facts (wall time, CPU) include its cost",
		"branch coverage is on (--branch); coverage.py records whether a line or arc ran, not how often",
		"files are named relative to the project root; code outside it keeps its absolute path",
	}
	if o.Context == "" {
		lim = append(lim, "without options.context, lines carry no static context (a [run] dynamic_context in the project's coverage configuration still applies)")
	}
	return &adapter.Plan{
		Adapter: Name, Argv: argv, Env: []string{},
		Artifacts:   []adapter.ArtifactDecl{{RelPath: DataFile, Kind: Kind, Role: "primary", MediaType: "application/vnd.sqlite3", Required: true}},
		Steps:       []adapter.Step{step},
		Overhead:    "coverage.py's tracer runs on every line and branch of measured code: a multiple of the uninstrumented time on hot loops, more without the C tracer",
		Permissions: []string{},
		Limitations: lim,
	}, nil
}

// sqliteMagic starts every SQLite database, coverage.py's data file too.
var sqliteMagic = []byte("SQLite format 3\x00")

func readHead(path string, n int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, n))
}

// Validate checks a data file by the SQLite magic and a JSON report by
// its shape. Other kinds (process output) are not coverage's to judge.
func (*Adapter) Validate(path string, decl adapter.ArtifactDecl) error {
	if decl.Kind != Kind {
		return nil
	}
	head, err := readHead(path, sniffBytes)
	if err != nil {
		return fault.Wrap(fault.ArtifactParseFailed, err, "read %s", decl.RelPath)
	}
	if decl.MediaType == "application/json" {
		if !looksCoverage(head) {
			return fault.New(fault.ArtifactParseFailed, "%s is not a coverage.py JSON report (no meta object with a version before the files)", decl.RelPath)
		}
		return nil
	}
	if !bytes.HasPrefix(head, sqliteMagic) {
		return fault.New(fault.ArtifactParseFailed, "%s is not a coverage.py data file (no SQLite header)", decl.RelPath)
	}
	return nil
}

// Viewer opens a data file in `coverage report` (or html) and a JSON
// report, which coverage.py cannot read back, in Python's json.tool.
func (*Adapter) Viewer(path, kind string) (*adapter.Viewer, error) {
	if kind != Kind {
		return &adapter.Viewer{Tool: "less", Argv: []string{"less", path}}, nil
	}
	head, err := readHead(path, sniffBytes)
	if err != nil {
		return nil, fault.Wrap(fault.NotFound, err, "read %s", path)
	}
	if bytes.HasPrefix(head, sqliteMagic) {
		return &adapter.Viewer{Tool: "coverage", Argv: []string{"python3", "-m", "coverage", "report", "-m", "--data-file=" + path},
			Note: "run it in the project root so the measured sources are found; `python3 -m coverage html --data-file=FILE` writes the annotated sources"}, nil
	}
	return &adapter.Viewer{Tool: "json.tool", Argv: []string{"python3", "-m", "json.tool", path},
		Note: "a coverage.py JSON report; `python3 -m coverage report` reads the .coverage data file it was written from"}, nil
}

var _ adapter.Adapter = (*Adapter)(nil)
