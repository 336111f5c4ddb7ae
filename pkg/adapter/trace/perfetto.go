package trace

import (
	"context"
	"os"

	"github.com/flameox/flameox/pkg/adapter"
	"github.com/flameox/flameox/pkg/profile"
)

// Perfetto protobuf traces (`.perfetto-trace`, `.pftrace`: what Perfetto,
// Android's system tracing and `perfetto` itself record) are recognised
// by content and kept as native artifacts, but not read: their format is
// the whole Perfetto TracePacket schema, which only Perfetto's own
// trace_processor interprets, and a trace_processor_shell cannot be
// obtained here without a download flameox never makes. The import says
// so and names what does read them.

// Perfetto extractor identity.
const (
	PerfettoName    = "perfetto"
	PerfettoVersion = "1"
)

// PerfettoExtractor recognises Perfetto protobuf traces.
type PerfettoExtractor struct{}

// NewPerfettoExtractor returns the Perfetto protobuf recogniser.
func NewPerfettoExtractor() *PerfettoExtractor { return &PerfettoExtractor{} }

func (*PerfettoExtractor) Name() string    { return PerfettoName }
func (*PerfettoExtractor) Version() string { return PerfettoVersion }

// ArtifactKind: an imported Perfetto trace is an execution trace.
func (*PerfettoExtractor) ArtifactKind() string { return KindTrace }

// Accepts decides by content (gunzipped when gzip): a Trace message of
// TracePackets (profile.LooksPerfetto).
func (*PerfettoExtractor) Accepts(in adapter.ExtractInput) bool {
	f, err := os.Open(in.Path)
	if err != nil {
		return profile.LooksPerfetto(in.Head)
	}
	defer f.Close()
	head, ok := sniffHead(f, profile.RejectsPerfetto)
	return ok && profile.LooksPerfetto(head)
}

// Extract writes no rows: it records why, so the run says what it holds.
func (*PerfettoExtractor) Extract(ctx context.Context, in adapter.ExtractInput, sink adapter.Sink) (*adapter.Extraction, error) {
	return &adapter.Extraction{Extractor: PerfettoName, Version: PerfettoVersion, Rows: map[string]int64{},
		Limitations: []string{
			"A Perfetto protobuf trace: kept as a native artifact and not read (flameox reads Chrome trace JSON; Perfetto's protobuf is read only by Perfetto's trace_processor, which flameox does not download).",
			"Open it in Perfetto UI (flameox open ARTIFACT), or convert it to JSON with `trace_processor_shell --export-json` or Perfetto UI's JSON export and import that file for slices and the pytorch recipe.",
		}}, nil
}

// UnreadReason is what the import says of a Perfetto trace
// (adapter.Unread).
func (*PerfettoExtractor) UnreadReason() string {
	return "a Perfetto protobuf trace, which flameox keeps but does not read (only Perfetto's trace_processor does; flameox downloads nothing): open it with `flameox open`, or export it to JSON (`trace_processor_shell --export-json`, or Perfetto UI) and import that"
}

// Viewer names Perfetto UI, as for Chrome traces.
func (*PerfettoExtractor) Viewer(path, kind string) (*adapter.Viewer, error) {
	return (&Extractor{}).Viewer(path, kind)
}

var (
	_ adapter.Extractor = (*PerfettoExtractor)(nil)
	_ adapter.Unread    = (*PerfettoExtractor)(nil)
)
