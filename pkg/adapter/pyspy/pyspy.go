package pyspy

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sync"

	"github.com/flameox/flameox/pkg/adapter"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/profile"
)

// Name of the adapter.
const Name = "py-spy"

// DefaultRate is the sampling rate in Hz, py-spy's own default: enough for
// a profile of a run of a few seconds, with an overhead of a few percent.
const DefaultRate = 100

// Artifact names in the output directory.
const (
	SpeedscopeFile = "profile.speedscope.json"
	CollapsedFile  = "profile.collapsed.txt"
)

// Adapter is the py-spy adapter.
type Adapter struct {
	Sys System
}

// New returns the py-spy adapter looking at the real machine.
func New() *Adapter { return &Adapter{Sys: RealSystem()} }

func (*Adapter) Name() string { return Name }

// HidesWorkloadExit: py-spy record exits 0 whatever its workload's exit
// status (benfred/py-spy#717), and 1 when it fails itself.
func (*Adapter) HidesWorkloadExit() bool { return true }

// Probe reports whether py-spy can sample a child here, without sampling.
func (a *Adapter) Probe(ctx context.Context) adapter.Capability {
	return Assess(Gather(ctx, a.Sys))
}

// Plan returns `py-spy record --format F --output OUT/FILE --rate HZ
// [flags] -- argv...`. See [ParseOptions] for the options. It creates
// nothing and only looks py-spy up on PATH.
func (a *Adapter) Plan(req adapter.PlanRequest) (*adapter.Plan, error) {
	if len(req.Argv) == 0 {
		return nil, fault.New(fault.InvalidCapturePlan, "the workload has no argv")
	}
	if !IsPython(req.Argv) {
		return nil, fault.New(fault.InvalidCapturePlan,
			"py-spy samples a Python interpreter, but the workload runs %q, which is neither python* nor a .py script; py-spy would run it and then find no interpreter to sample", req.Argv[0]).
			With("argv0", req.Argv[0]).
			Fix(`declare the workload with the interpreter first, e.g. argv = ["python3", "script.py"]`)
	}
	o, err := ParseOptions(req.Options)
	if err != nil {
		return nil, err
	}
	exe := "py-spy" // unresolved: the capability check refuses the capture with the install remedy
	if p, err := a.Sys.LookPath("py-spy"); err == nil {
		exe = p
	}
	file, media := SpeedscopeFile, "application/json"
	if o.Format == "raw" {
		file, media = CollapsedFile, "text/plain"
	}
	argv := append([]string{exe, "record", "--format", o.Format, "--output", filepath.Join(req.OutputDir, file)}, o.Flags()...)
	argv = append(append(argv, "--"), req.Argv...)
	return &adapter.Plan{
		Adapter: Name, Argv: argv, Env: []string{},
		Artifacts: []adapter.ArtifactDecl{{RelPath: file, Kind: "sample_profile", Role: "primary", MediaType: media, Required: true}},
		Steps:     []adapter.Step{},
		Overhead:  "py-spy reads the interpreter's memory from outside and pauses the process briefly for each of its samples (it is not run with --nonblocking): a few percent at 100 Hz, more with native=true",
		Permissions: []string{"process_vm_readv on the launched child: Yama ptrace_scope <= 1, or CAP_SYS_PTRACE" +
			map[bool]string{true: "; ptrace for native unwinding", false: ""}[o.Native]},
		Limitations: o.Limitations(),
	}, nil
}

// Validate checks the speedscope JSON (or the collapsed stacks of the raw
// format) by content. Other kinds (process output) are not py-spy's.
func (*Adapter) Validate(path string, decl adapter.ArtifactDecl) error {
	if decl.Kind != "sample_profile" {
		return nil
	}
	want := profile.FormatSpeedscope
	if decl.MediaType == "text/plain" {
		want = profile.FormatCollapsed
	}
	f, err := os.Open(path)
	if err != nil {
		return fault.Wrap(fault.ArtifactParseFailed, err, "read %s", decl.RelPath)
	}
	defer f.Close()
	head, err := io.ReadAll(io.LimitReader(f, 64<<10))
	if err != nil {
		return fault.Wrap(fault.ArtifactParseFailed, err, "read %s", decl.RelPath)
	}
	if want == profile.FormatCollapsed {
		head = emptyStacks().ReplaceAll(head, nil)
	}
	if got := profile.Detect(head); got != want {
		return fault.New(fault.ArtifactParseFailed, "%s is not a py-spy %s profile (detected %s)", decl.RelPath, want, got)
	}
	return nil
}

// emptyStacks matches py-spy raw lines for samples without a Python frame
// (" 12"): folded stacks with an empty stack, which Detect does not accept.
var emptyStacks = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^ [0-9]+\n`) })

// Viewer opens profiles in speedscope (it reads both speedscope JSON and
// collapsed stacks) and anything else (process output) in less.
func (*Adapter) Viewer(path, kind string) (*adapter.Viewer, error) {
	if kind != "sample_profile" {
		return &adapter.Viewer{Tool: "less", Argv: []string{"less", path}}, nil
	}
	return &adapter.Viewer{Tool: "speedscope", Argv: []string{"speedscope", path},
		Note: "install with `npm install -g speedscope`; it opens a local browser page and uploads nothing"}, nil
}
