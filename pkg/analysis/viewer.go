package analysis

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/flameox/flameox/pkg/adapter"
	"github.com/flameox/flameox/pkg/digest"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/query"
	"github.com/flameox/flameox/pkg/workspace"
)

// ViewerPlan is the result of `flameox open` and MCP get_native_viewer_plan:
// the command that opens an artifact in its ecosystem's own viewer. It
// never launches anything (`flameox open --launch` does, from the CLI only).
type ViewerPlan struct {
	SchemaVersion int      `json:"schema_version"`
	ArtifactID    string   `json:"artifact_id"`
	Kind          string   `json:"kind"`
	Path          string   `json:"path"`
	Tool          string   `json:"tool"`
	Argv          []string `json:"argv"`
	Note          string   `json:"note,omitempty"`
	// URL is where a viewer that serves a local web UI will listen
	// (go tool pprof -http): a port that was free when the plan was made.
	URL string `json:"url,omitempty"`
	// Source says which of a run's profiles the plan opens, when the input
	// was a run id (see HotspotsResult.SourceNote).
	SourceNote  string   `json:"source_note,omitempty"`
	Available   bool     `json:"available"`
	Remediation []string `json:"remediation"`
}

// Viewer plans the native viewer of a stored artifact, or of the profile
// a run's analyses read (input is a run id or an artifact id, as for
// hotspots). adapters decide by the registration's producer (perf.data →
// perf report), else by content.
func Viewer(ctx context.Context, ws *workspace.Workspace, reg *adapter.Registry, input string) (*ViewerPlan, error) {
	artifactID, note := strings.TrimSpace(input), ""
	if !digest.Valid(artifactID) {
		s, err := query.OpenTables(ctx, ws, hotspotsTables...)
		if err != nil {
			return nil, err
		}
		sc, err := resolve(ctx, s, artifactID, "", "")
		if err != nil && fault.Is(err, fault.NotFound) {
			// A run with no profile may have a trace (an import, a
			// torch capture): open that.
			if src, _, _, lim, terr := traceSource(ctx, s, artifactID); terr == nil {
				sc, err = &scope{src: src, note: strings.Join(lim, " ")}, nil
			}
		}
		s.Close()
		if err != nil {
			return nil, err
		}
		artifactID, note = sc.src.ArtifactID, sc.note
	}
	detail, err := query.ShowArtifact(ctx, ws, artifactID)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(ws.Root, filepath.FromSlash(detail.PayloadPath))
	kind, producer := "collector_metadata", ""
	if len(detail.Registrations) > 0 {
		kind, producer = detail.Registrations[0].Kind, detail.Registrations[0].Producer
	}
	var plan *adapter.Viewer
	try := func(names ...string) {
		for _, name := range names {
			a, err := reg.Get(name)
			if plan != nil || err != nil {
				continue
			}
			if v, err := a.Viewer(path, kind); err == nil && v != nil {
				plan = v
			}
		}
	}
	try(append([]string{producer}, readers(reg, path)...)...)
	if plan == nil {
		plan = extractorViewer(reg, path, kind)
	}
	try("pprof", "process")
	if plan == nil {
		return nil, fault.New(fault.CapabilityUnavailable, "no native viewer is known for %s (%s)", artifactID, kind)
	}
	res := &ViewerPlan{SchemaVersion: 1, ArtifactID: detail.ArtifactID, Kind: kind, Path: path, Tool: plan.Tool,
		Argv: plan.Argv, Note: plan.Note, SourceNote: note, Remediation: []string{}}
	if err := res.choosePort(); err != nil {
		return nil, err
	}
	if _, err := exec.LookPath(plan.Argv[0]); err == nil {
		res.Available = true
	} else {
		res.Remediation = append(res.Remediation, plan.Argv[0]+" is not on PATH: "+plan.Note)
	}
	if _, err := os.Stat(path); err != nil {
		return nil, fault.Wrap(fault.ArtifactIntegrityFailed, err, "payload of %s", artifactID)
	}
	return res, nil
}

// readers names the adapters with a kinded extractor (a benchmark
// format's, adapter.Kinded) that accepts the payload by content: the
// viewer of an imported pyperf file is pyperf's.
func readers(reg *adapter.Registry, path string) []string {
	var names []string
	in := adapter.ExtractInput{Path: path}
	for _, a := range reg.All() {
		p, ok := a.(interface{ Extractors() []adapter.Extractor })
		if !ok {
			continue
		}
		for _, e := range p.Extractors() {
			if _, kinded := e.(adapter.Kinded); kinded && e.Accepts(in) {
				names = append(names, a.Name())
				break
			}
		}
	}
	return names
}

// extractorViewer is the viewer an extractor that is no adapter names
// for a payload it accepts by content (Chrome traces: Perfetto UI), or nil.
func extractorViewer(reg *adapter.Registry, path, kind string) *adapter.Viewer {
	in := adapter.ExtractInput{Path: path}
	for _, e := range reg.Extractors() {
		v, ok := e.(interface {
			Viewer(path, kind string) (*adapter.Viewer, error)
		})
		if _, adapterToo := e.(adapter.Adapter); !ok || adapterToo || !e.Accepts(in) {
			continue
		}
		if plan, err := v.Viewer(path, kind); err == nil && plan != nil {
			return plan
		}
	}
	return nil
}

// choosePort replaces port 0 in an -http=HOST:0 argument (how adapters
// ask for "any free port") with a port that is free now: the kernel picks
// one for a listener on 127.0.0.1:0, which is closed at once. pprof itself
// would pick one too, but only print it after starting, and a plan must
// say where the UI will be before anything runs. The port can be taken
// between the plan and the launch; pprof then fails with "address already
// in use" and a new plan picks another.
func (p *ViewerPlan) choosePort() error {
	argv := append([]string{}, p.Argv...)
	for i, a := range argv {
		host, ok := strings.CutPrefix(a, "-http=")
		if !ok {
			continue
		}
		h, port, err := net.SplitHostPort(host)
		if err != nil || port != "0" {
			continue
		}
		free, err := freePort()
		if err != nil {
			return fault.Wrap(fault.CapabilityUnavailable, err, "no free local port for %s", p.Tool).
				Fix("Run the viewer yourself with a port of your choice: " + strings.Join(p.Argv, " "))
		}
		argv[i] = "-http=" + net.JoinHostPort(h, strconv.Itoa(free))
		p.URL = "http://" + net.JoinHostPort(h, strconv.Itoa(free)) + "/"
	}
	p.Argv = argv
	return nil
}

// freePort returns a TCP port on the loopback interface that was free a
// moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
