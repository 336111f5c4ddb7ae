package heaptrack

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/flameox/flameox/pkg/adapter"
	"github.com/flameox/flameox/pkg/broker"
	"github.com/flameox/flameox/pkg/fault"
)

// Name of the adapter.
const Name = "heaptrack"

// KindMemory is the artifact kind of heaptrack data files.
const KindMemory = "memory_profile"

// DataFile is the capture's data file in the output directory: heaptrack
// is given OUT/heaptrack.flameox and appends ".zst" to it when its build
// supports zstd and the zstd command is on PATH (Debian's heaptrack), else
// ".gz" (DataFileGzip).
const (
	DataFile     = "heaptrack.flameox.zst"
	DataFileGzip = "heaptrack.flameox.gz"
)

// MediaType of the data files.
const MediaType = "application/x-heaptrack"

const installRemedy = "apt-get install heaptrack (Debian, Ubuntu); scripts/install-collectors.sh does it"

// System is what the probe, plan and extractor look at. Tests may
// substitute LookPath; Output runs short commands through the broker.
type System struct {
	LookPath func(file string) (string, error)
	Output   func(ctx context.Context, argv []string, limit int64, timeout time.Duration) ([]byte, error)
}

// RealSystem is the machine flameox runs on.
func RealSystem() System {
	return System{LookPath: exec.LookPath,
		Output: func(ctx context.Context, argv []string, limit int64, timeout time.Duration) ([]byte, error) {
			return broker.Output(ctx, argv, "", []string{"PATH=" + os.Getenv("PATH"), "LANG=C", "LC_ALL=C"}, limit, timeout)
		}}
}

// Adapter is the heaptrack adapter; it is also the extractor of
// heaptrack data files.
type Adapter struct{ Sys System }

// New returns the heaptrack adapter looking at the real machine.
func New() *Adapter { return &Adapter{Sys: RealSystem()} }

func (*Adapter) Name() string { return Name }

func (a *Adapter) look(tool string) string {
	if p, err := a.Sys.LookPath(tool); err == nil {
		return p
	}
	return ""
}

// Probe looks heaptrack and heaptrack_print up on PATH and runs
// `heaptrack_print --version` (5 s).
func (a *Adapter) Probe(ctx context.Context) adapter.Capability {
	c := adapter.NewCapability(Name, adapter.Available)
	capture, print := a.look("heaptrack"), a.look("heaptrack_print")
	c.Executable = capture
	c.Limitations = append(c.Limitations,
		"heaptrack preloads a library into the workload (LD_PRELOAD): statically linked programs and allocators it does not interpose (custom arenas) are not seen",
		"byte figures come from heaptrack_print's report, which rounds to two decimals in 1000-based units above 1000 B")
	if capture != "" {
		c.Modes = append(c.Modes, "capture")
	}
	if print != "" {
		c.Modes = append(c.Modes, "import")
		out, err := a.Sys.Output(ctx, []string{print, "--version"}, 1<<12, 5*time.Second)
		if err != nil {
			c.Status = adapter.Degraded
			c.Limitations = append(c.Limitations, "`heaptrack_print --version` failed: "+err.Error())
		} else {
			c.Version = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(string(out)), "heaptrack_print"))
		}
	}
	c.Facts["heaptrack"] = orNo(capture)
	c.Facts["heaptrack_print"] = orNo(print)
	switch {
	case capture == "" && print == "":
		c.Status = adapter.Unavailable
		c.Remediation = append(c.Remediation, installRemedy)
	case capture == "" || print == "":
		c.Status = adapter.Degraded
		c.Remediation = append(c.Remediation, installRemedy+" (both heaptrack and heaptrack_print are needed)")
	}
	return c
}

func orNo(s string) string {
	if s == "" {
		return "not on PATH"
	}
	return s
}

// Plan returns `heaptrack -o OUT/heaptrack.flameox argv...`. heaptrack
// takes no capture options here.
func (a *Adapter) Plan(req adapter.PlanRequest) (*adapter.Plan, error) {
	if len(req.Argv) == 0 {
		return nil, fault.New(fault.InvalidCapturePlan, "the workload has no argv")
	}
	for k := range req.Options {
		return nil, fault.New(fault.InvalidCapturePlan, "heaptrack has no capture option %q", k).With("options", "")
	}
	exe := "heaptrack" // unresolved: the capability check refuses the capture with the install remedy
	if p := a.look("heaptrack"); p != "" {
		exe = p
	}
	out := filepath.Join(req.OutputDir, strings.TrimSuffix(DataFile, ".zst"))
	file := DataFile
	if a.look("zstd") == "" {
		file = DataFileGzip // heaptrack's script compresses with zstd only when the command exists
	}
	return &adapter.Plan{
		Adapter: Name, Argv: append([]string{exe, "-o", out}, req.Argv...), Env: []string{},
		Artifacts:   []adapter.ArtifactDecl{{RelPath: file, Kind: KindMemory, Role: "primary", MediaType: MediaType, Required: true}},
		Steps:       []adapter.Step{},
		Overhead:    "every allocation and free is traced (a backtrace unwound per call) and streamed to heaptrack_interpret: allocation-heavy programs run several times slower",
		Permissions: []string{},
		Limitations: []string{
			"heaptrack preloads libheaptrack_preload into the workload: statically linked programs and allocations that bypass malloc/new (mmap, custom arenas) are not traced",
			"peak RSS in heaptrack's summary includes heaptrack's own overhead; the process record's peak RSS is the workload's",
		},
	}, nil
}

// Validate checks a heaptrack data file's envelope (see Envelope).
func (*Adapter) Validate(path string, decl adapter.ArtifactDecl) error {
	if decl.Kind != KindMemory {
		return nil
	}
	if _, err := Envelope(path, adapterLimits); err != nil {
		return fault.Wrap(fault.ArtifactParseFailed, err, "%s", decl.RelPath)
	}
	return nil
}

// Viewer opens heaptrack files in heaptrack_gui when it is installed,
// else in heaptrack_print.
func (a *Adapter) Viewer(path, kind string) (*adapter.Viewer, error) {
	if kind != KindMemory {
		return &adapter.Viewer{Tool: "less", Argv: []string{"less", path}}, nil
	}
	if gui := a.look("heaptrack_gui"); gui != "" {
		return &adapter.Viewer{Tool: "heaptrack_gui", Argv: []string{gui, path}}, nil
	}
	exe := "heaptrack_print"
	if p := a.look(exe); p != "" {
		exe = p
	}
	return &adapter.Viewer{Tool: "heaptrack_print", Argv: []string{exe, "-f", path},
		Note: "heaptrack_gui (apt-get install heaptrack-gui) shows the same data as flame graphs and charts"}, nil
}

// readHead reads up to n bytes of path.
func readHead(path string, n int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, n))
	return b, err
}
