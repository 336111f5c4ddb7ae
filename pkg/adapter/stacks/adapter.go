package stacks

import (
	"context"
	"os"

	"github.com/flameox/flameox/pkg/adapter"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/profile"
)

// Name of the adapter and its extractor.
const (
	Name          = "pprof"
	ExtractorName = "profile"
	// ExtractorVersion 2: a stack id hashes its frames' binary digests
	// ("stack/v2"), not their hex ids. 3: frames and frame_measurements
	// are written in hotspot order with frame_index and rank, one row per
	// frame id, metric and thread/process, and profile.frames and
	// profile.symbolized are recorded (rank.go). 4: frames carry pprof's
	// inline labels (inlined, inline_chain), and profile.min_value and
	// profile.duration are recorded, for pprof's -top header and units.
	ExtractorVersion = "4"
)

// Adapter reads profiles.
type Adapter struct{}

// New returns the adapter.
func New() *Adapter { return &Adapter{} }

func (*Adapter) Name() string { return Name }

func (*Adapter) Probe(context.Context) adapter.Capability {
	c := adapter.NewCapability(Name, adapter.Available)
	c.Modes = []string{"import", "extract"}
	c.Limitations = []string{"Import only: capture CPU profiles with the gotest, perf or py-spy adapters."}
	return c
}

func (*Adapter) Plan(adapter.PlanRequest) (*adapter.Plan, error) {
	return nil, fault.New(fault.CapabilityUnavailable, "the pprof adapter imports profiles; it does not run workloads").
		Fix("Capture with the gotest, perf or py-spy adapter, or import an existing profile with `flameox import`.")
}

// Validate checks that path holds a profile format flameox reads.
func (*Adapter) Validate(path string, decl adapter.ArtifactDecl) error {
	f, err := os.Open(path)
	if err != nil {
		return fault.Wrap(fault.ArtifactParseFailed, err, "open %s", path)
	}
	defer f.Close()
	head := make([]byte, 64<<10)
	n, _ := f.Read(head)
	if profile.Detect(head[:n]) == profile.FormatUnknown {
		return fault.New(fault.ArtifactParseFailed, "%s is not a profile format flameox reads (pprof protobuf or legacy, perf script, speedscope, collapsed stacks)", path)
	}
	return nil
}

// Viewer names the native viewer for a stored profile.
func (*Adapter) Viewer(path, kind string) (*adapter.Viewer, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fault.Wrap(fault.NotFound, err, "open %s", path)
	}
	head := make([]byte, 64<<10)
	n, _ := f.Read(head)
	f.Close()
	switch profile.Detect(head[:n]) {
	case profile.FormatPprof, profile.FormatPprofLegacy:
		return &adapter.Viewer{Tool: "go tool pprof", Argv: []string{"go", "tool", "pprof", "-http=localhost:0", path},
			Note: "serves the interactive pprof UI on a local port"}, nil
	case profile.FormatSpeedscope, profile.FormatCollapsed, profile.FormatPerfScript:
		return &adapter.Viewer{Tool: "speedscope", Argv: []string{"speedscope", path},
			Note: "npm install -g speedscope; it opens a local page, nothing is uploaded"}, nil
	}
	return nil, fault.New(fault.ArtifactParseFailed, "%s is not a profile", path)
}

// Extractor turns profiles into evidence rows.
type Extractor struct{}

// NewExtractor returns the profile extractor.
func NewExtractor() *Extractor { return &Extractor{} }

func (*Extractor) Name() string    { return ExtractorName }
func (*Extractor) Version() string { return ExtractorVersion }

// Accepts reports whether in holds a profile, by content.
func (*Extractor) Accepts(in adapter.ExtractInput) bool {
	return profile.Detect(in.Head) != profile.FormatUnknown
}
