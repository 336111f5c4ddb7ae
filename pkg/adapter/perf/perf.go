// Package perf drives Linux `perf record -g` around an approved workload
// and turns the binary perf.data into `perf script` text that pkg/profile
// reads (stacks with periods, events and DSOs).
//
// Why it is shaped this way:
//   - The probe is passive. Whether perf can sample is decided by kernel
//     settings that can be read without sampling anything:
//     kernel.perf_event_paranoid, the effective capabilities (the kernel
//     checks CAP_PERFMON/CAP_SYS_ADMIN, not the uid), a user namespace, and
//     whether a hardware PMU exists at all. The one command it runs is
//     `perf --version` (5 s, PATH only). The decision itself is the pure
//     function [Assess], so every combination is tested without depending on
//     this machine.
//   - Every refusal carries the exact remedy (`sudo sysctl -w
//     kernel.perf_event_paranoid=1`, the package to install), because "perf
//     failed" is not something a user can act on.
//   - The plan names its event explicitly: cycles where a CPU PMU exists,
//     the software event cpu-clock where none does (most VMs), so the
//     evidence says what was counted.
//   - perf.data stays the primary artifact (perf report reads it); the
//     derived text is produced by a plan step, through the broker, right
//     after the run, while the binaries perf must read for symbols still
//     exist at their paths.
package perf

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"github.com/flameox/flameox/pkg/adapter"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/profile"
)

// Name of the adapter.
const Name = "perf"

// DefaultFrequency is the sampling rate in Hz: close to 1 kHz for enough
// samples in a second, odd so that it does not run in lockstep with timers
// firing at round rates. perf's own default is 4000 Hz.
const DefaultFrequency = 999

// Artifact names in the output directory.
const (
	DataFile   = "perf.data"
	ScriptFile = "perf.script.txt"
)

// ScriptFields are the `perf script -F` fields: pkg/profile's parser needs
// the period (sample weight) and event per sample and ip, sym and dso per
// frame. cpu is left out: perf refuses it when the recording (per-process,
// without -a) did not sample the CPU.
const ScriptFields = "comm,pid,tid,time,period,event,ip,sym,dso"

// Magic is the first 8 bytes of a perf.data file.
const Magic = "PERFILE2"

// Adapter is the perf adapter.
type Adapter struct {
	Sys System
}

// New returns the perf adapter looking at the real machine.
func New() *Adapter { return &Adapter{Sys: RealSystem()} }

func (*Adapter) Name() string { return Name }

// Probe reports whether perf can sample here, without sampling.
func (a *Adapter) Probe(ctx context.Context) adapter.Capability {
	return Assess(Gather(ctx, a.Sys))
}

// Plan returns `perf record -g -F HZ -e EVENT -o OUT/perf.data
// --no-buildid-cache -- argv...` and a `perf script` step. It reads PATH
// and /sys only. The option "frequency" (Hz, 1–100000) overrides the rate.
func (a *Adapter) Plan(req adapter.PlanRequest) (*adapter.Plan, error) {
	if len(req.Argv) == 0 {
		return nil, fault.New(fault.InvalidCapturePlan, "the workload has no argv")
	}
	freq := DefaultFrequency
	for k, v := range req.Options {
		n, err := strconv.Atoi(v)
		switch {
		case k != "frequency":
			return nil, fault.New(fault.InvalidCapturePlan, "perf has no capture option %q", k).With("options", "frequency")
		case err != nil || n < 1 || n > 100000:
			return nil, fault.New(fault.InvalidCapturePlan, "perf option frequency=%q is not a rate in Hz between 1 and 100000", v)
		}
		freq = n
	}
	exe := "perf" // unresolved: the capability check refuses the capture with the install remedy
	if p, err := a.Sys.LookPath("perf"); err == nil {
		exe = p
	}
	event, lim := "cycles", []string{}
	if !hardwarePMU(a.Sys) {
		event = "cpu-clock"
		lim = append(lim, "event cpu-clock (software timer, period in ns): no hardware PMU is exposed under "+PMUDevicesDir+", so cycles cannot be counted")
	}
	lim = append(lim,
		"symbolization depends on debug info and symbol tables in the binaries and on perf being able to read them when perf script runs; stripped code shows as [unknown]",
		"callchains use frame pointers (-g): code built without them (-fomit-frame-pointer, many distribution libraries) yields truncated stacks",
		"kernel frames are sampled only with perf_event_paranoid <= 1 or CAP_PERFMON",
		"the build-id cache (~/.debug) is not written (--no-buildid-cache): perf report on another machine cannot find these binaries",
		"the kernel may throttle the rate below "+strconv.Itoa(freq)+" Hz (perf_event_max_sample_rate)")
	out := filepath.Join(req.OutputDir, DataFile)
	argv := []string{exe, "record", "-g", "-F", strconv.Itoa(freq), "-e", event, "-o", out, "--no-buildid-cache", "--"}
	return &adapter.Plan{
		Adapter: Name, Argv: append(argv, req.Argv...), Env: []string{},
		Artifacts: []adapter.ArtifactDecl{{RelPath: DataFile, Kind: "sample_profile", Role: "primary",
			MediaType: "application/x-perf-data", Required: true}},
		Steps: []adapter.Step{{Name: "perf-script",
			Argv:   []string{exe, "script", "-i", "{out}/" + DataFile, "-F", ScriptFields},
			Stdout: ScriptFile,
			Produces: adapter.ArtifactDecl{RelPath: ScriptFile, Kind: "sample_profile", Role: "derived",
				MediaType: "text/plain", Required: true}}},
		Overhead:    "one interrupt and a frame-pointer stack walk per sample, " + strconv.Itoa(freq) + " times a second per running thread: a few percent of CPU; perf.data grows with samples",
		Permissions: []string{"perf_event_open on the workload: perf_event_paranoid <= 2, or CAP_PERFMON"},
		Limitations: lim,
	}, nil
}

// Validate checks perf.data by its magic and perf script text by content.
// Other kinds (process output) are not perf's to judge.
func (*Adapter) Validate(path string, decl adapter.ArtifactDecl) error {
	if decl.Kind != "sample_profile" {
		return nil
	}
	head, err := readHead(path, 64<<10)
	if err != nil {
		return fault.Wrap(fault.ArtifactParseFailed, err, "read %s", decl.RelPath)
	}
	if decl.MediaType == "application/x-perf-data" {
		if !bytes.HasPrefix(head, []byte(Magic)) {
			return fault.New(fault.ArtifactParseFailed, "%s does not start with the perf.data magic %s", decl.RelPath, Magic)
		}
		return nil
	}
	if f := profile.Detect(head); f != profile.FormatPerfScript {
		return fault.New(fault.ArtifactParseFailed, "%s is not perf script output (detected %s)", decl.RelPath, f)
	}
	return nil
}

// Viewer opens perf.data in `perf report` and perf script text in
// speedscope; anything else (process output) in less.
func (a *Adapter) Viewer(path, kind string) (*adapter.Viewer, error) {
	if kind != "sample_profile" {
		return &adapter.Viewer{Tool: "less", Argv: []string{"less", path}}, nil
	}
	head, err := readHead(path, 64<<10)
	if err != nil {
		return nil, fault.Wrap(fault.NotFound, err, "read %s", path)
	}
	if bytes.HasPrefix(head, []byte(Magic)) {
		exe := "perf"
		if p, err := a.Sys.LookPath("perf"); err == nil {
			exe = p
		}
		return &adapter.Viewer{Tool: "perf", Argv: []string{exe, "report", "-i", path},
			Note: "perf report symbolizes from the binaries at their recorded paths; run it on the machine that captured"}, nil
	}
	return &adapter.Viewer{Tool: "speedscope", Argv: []string{"speedscope", path},
		Note: "install with `npm install -g speedscope`; it opens a local browser page and uploads nothing"}, nil
}

func readHead(path string, n int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, n))
}
