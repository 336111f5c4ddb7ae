package adapter

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/flameox/flameox/pkg/config"
	"github.com/flameox/flameox/pkg/evidence/schema"
	"github.com/flameox/flameox/pkg/fault"
)

// Status of a capability.
type Status string

const (
	Available           Status = "available"
	Degraded            Status = "degraded"
	Unavailable         Status = "unavailable"
	PermissionRequired  Status = "permission_required"
	UnsupportedPlatform Status = "unsupported_platform"
	Unknown             Status = "unknown"
)

// Statuses lists every status.
func Statuses() []Status {
	return []Status{Available, Degraded, Unavailable, PermissionRequired, UnsupportedPlatform, Unknown}
}

// Capability is the answer of a passive probe: never runs the collector on
// a workload, and never changes anything.
type Capability struct {
	Adapter     string   `json:"adapter"`
	Status      Status   `json:"status"`
	Version     string   `json:"version,omitempty"`
	Executable  string   `json:"executable,omitempty"`
	Modes       []string `json:"modes"`
	Limitations []string `json:"limitations"`
	// Remediation says exactly what to change for a better status.
	Remediation []string `json:"remediation"`
	// Facts are observed settings that decide the status, e.g.
	// perf_event_paranoid=4 or ptrace_scope=1.
	Facts map[string]string `json:"facts"`
}

// NewCapability returns a capability with initialised lists.
func NewCapability(name string, st Status) Capability {
	return Capability{Adapter: name, Status: st, Modes: []string{}, Limitations: []string{}, Remediation: []string{}, Facts: map[string]string{}}
}

// ArtifactDecl declares a file a capture will produce, relative to the
// capture's output directory.
type ArtifactDecl struct {
	RelPath   string `json:"path"`
	Kind      string `json:"kind"`
	Role      string `json:"role"`
	MediaType string `json:"media_type"`
	// Required artifacts must exist after a successful run.
	Required bool `json:"required"`
}

// Step is a command the capture runs after the workload, through the broker
// (e.g. `perf script` turning perf.data into text). Argv may use the
// placeholder {out} for the output directory.
type Step struct {
	Name     string       `json:"name"`
	Argv     []string     `json:"argv"`
	Stdout   string       `json:"stdout,omitempty"` // output file (relative) receiving the step's stdout
	Produces ArtifactDecl `json:"produces"`
}

// PlanRequest is what an adapter needs to plan a capture of one workload.
type PlanRequest struct {
	ProjectRoot string
	// OutputDir is where the collector writes (absolute; in staging).
	OutputDir string
	// Argv is the rendered workload argv, argv[0] resolved.
	Argv []string
	// Options are adapter-specific capture options declared by the workload.
	Options map[string]string
}

// Plan is an adapter's side-effect-free capture plan. flameox runs
// Prefix followed by the workload argv (Wrap chooses how they join).
type Plan struct {
	Adapter   string         `json:"adapter"`
	Argv      []string       `json:"argv"`
	Env       []string       `json:"env"` // extra NAME=value the collector needs
	Artifacts []ArtifactDecl `json:"artifacts"`
	Steps     []Step         `json:"steps"`
	// Overhead describes the collector's expected cost.
	Overhead    string   `json:"overhead"`
	Permissions []string `json:"permissions"`
	Limitations []string `json:"limitations"`
	// Check says what the adapter's ResultChecker requires of a successful
	// workload's result (e.g. "at least one benchmark result"); empty when
	// the adapter checks nothing.
	Check string `json:"check,omitempty"`
}

// ProgressLiner is implemented by adapters whose workload's stdout can
// tell a person how a long capture is going, e.g. gotest's benchmark
// results as each one completes. The capture feeds it the stdout lines as
// they arrive, only when someone is watching (a terminal).
type ProgressLiner interface {
	// ProgressLines returns, for one capture, a function that turns each
	// line of the workload's stdout (without its newline, in order) into
	// a line for a person, or "" to say nothing. It may keep state across
	// lines; it must be cheap and never block; the caller escapes what it
	// prints.
	ProgressLines() func(line []byte) string
}

// Preparer is implemented by adapters whose command needs files of
// their own before it starts: a helper script the binary carries (the
// torch launcher), which the plan names by its path in the output
// directory. The capture calls Prepare once per execution, after
// creating the output directory and before starting the command; Plan
// itself still creates nothing. Prepare writes only inside outDir, and
// only files the plan does not declare as artifacts.
type Preparer interface {
	Prepare(outDir string) error
}

// WorkloadProber is implemented by adapters whose capability depends on
// the workload: the torch adapter asks the interpreter the workload's
// argv names (a virtualenv's python) whether it imports torch. A capture
// plan takes its capability from ProbeWorkload, with argv[0] resolved;
// `flameox capabilities` still calls Probe. ProbeWorkload is as passive
// as Probe.
type WorkloadProber interface {
	ProbeWorkload(ctx context.Context, argv []string) Capability
}

// ExitHider is implemented by adapters whose collector launches the
// workload as its child and then exits with a status of its own, whatever
// the workload's: py-spy record exits 0 after its workload failed
// (benfred/py-spy#717). The capture then has the broker read the
// workload's exit status itself (broker.Spec.WatchArgv), and the run's
// exit status is the workload's; the collector's is kept beside it.
type ExitHider interface {
	HidesWorkloadExit() bool
}

// InProcess is implemented by adapters whose collector runs the workload
// in its own process rather than as a child (Valgrind executes it on a
// synthetic CPU), though the collector's argv ends with the workload's:
// nothing stands between them in the process tree, so the run's process
// figures are the collector's and the workload's together.
type InProcess interface {
	RunsWorkloadInProcess() bool
}

// ResultChecker is implemented by adapters that judge a successful
// workload's result themselves, beside any oracle the workload declares:
// a `go test -bench` run whose pattern matched no benchmark exits 0 but
// measured nothing. The capture runs it when the plan's Check is set, and
// its answer decides validation_status like an oracle's does.
type ResultChecker interface {
	// CheckResult reads the workload's stdout (a path that may not exist
	// when it wrote nothing) and the output directory of plan p. ok false
	// fails validation; reason says why, or what was found.
	CheckResult(ctx context.Context, p *Plan, outDir, stdout string) (ok bool, reason string)
}

// Viewer is the native viewer command for an artifact.
type Viewer struct {
	Tool string   `json:"tool"`
	Argv []string `json:"argv"`
	Note string   `json:"note,omitempty"`
}

// Sink receives extracted rows: one typed writer per table, shared by every
// extractor of the generation (so never closed by one). An extractor that
// has written its rows of a table may Flush the writer: they are written as
// a row group and the memory they held is released at once, instead of
// when the whole generation is finished.
type Sink interface {
	Table(t *schema.Table) (*schema.Writer, error)
}

// ExtractInput is one registered artifact to extract.
type ExtractInput struct {
	RunID      string
	ArtifactID string
	Kind       string
	Producer   string
	// Path is the stored, immutable payload.
	Path string
	// Head holds the payload's first bytes, for format detection.
	Head []byte
	// Limits bound what decoding the payload may allocate (the
	// workspace's [limits]); zero fields take their defaults.
	Limits config.Limits
	// Started is when the run's command started (the broker's clock just
	// before the fork); zero for imports and runs recorded without it.
	Started time.Time
}

// Extraction reports what an extractor published.
type Extraction struct {
	Extractor   string           `json:"extractor"`
	Version     string           `json:"version"`
	Rows        map[string]int64 `json:"rows"`
	Limitations []string         `json:"limitations"`
}

// Adapter is one collector or native format.
type Adapter interface {
	Name() string
	// Probe is passive: it may look at files and PATH, never run a workload.
	Probe(ctx context.Context) Capability
	// Plan returns the exact commands; it creates nothing.
	Plan(req PlanRequest) (*Plan, error)
	// Validate checks a produced or imported file is what decl claims.
	Validate(path string, decl ArtifactDecl) error
	// Viewer names the native viewer for an artifact of this adapter.
	Viewer(path string, kind string) (*Viewer, error)
}

// Extractor turns artifacts into evidence rows. Adapters that read a format
// implement it; Accepts decides by content, never by file name.
type Extractor interface {
	Name() string
	Version() string
	Accepts(in ExtractInput) bool
	Extract(ctx context.Context, in ExtractInput, sink Sink) (*Extraction, error)
}

// Strict is implemented by extractors whose Accepts recognises their
// format by its own signature (a pyperf file's keys and version), not by
// a guess. A file such an extractor accepts and then fails to extract is
// a broken file of its format: publication fails with the extractor's
// error (the run is quarantined, none of its evidence published),
// whatever kind the file was registered as, instead of skipping the
// extractor as it does for optional extractions (benchmark lines looked
// for in a stdout).
type Strict interface {
	Strict() bool
}

// Kinded is implemented by extractors that read artifacts of one kind
// (pyperf files are benchmark_samples): an import that names no kind
// takes the kind of the first such extractor that accepts the file.
type Kinded interface {
	ArtifactKind() string
}

// Unread is implemented by extractors that recognise a format they do not
// read (Perfetto protobuf): an import stores the file, says why with
// UnreadReason, and analyses will not see it.
type Unread interface {
	UnreadReason() string
}

// IsStrict reports whether e is a Strict extractor that says so.
func IsStrict(e Extractor) bool {
	s, ok := e.(Strict)
	return ok && s.Strict()
}

// Registry holds adapters by name, in a fixed order, and the extractors
// that turn their artifacts into evidence.
type Registry struct {
	byName     map[string]Adapter
	order      []string
	extractors []Extractor
}

// WithExtractors adds extractors that are not adapters themselves and
// returns r.
func (r *Registry) WithExtractors(es ...Extractor) *Registry {
	r.extractors = append(r.extractors, es...)
	return r
}

// NewRegistry builds a registry; duplicate names are a programming error.
func NewRegistry(adapters ...Adapter) *Registry {
	r := &Registry{byName: map[string]Adapter{}}
	for _, a := range adapters {
		if _, dup := r.byName[a.Name()]; dup {
			panic("adapter: duplicate adapter " + a.Name())
		}
		r.byName[a.Name()] = a
		r.order = append(r.order, a.Name())
	}
	return r
}

// Get returns the named adapter or CAPABILITY_UNAVAILABLE listing the known ones.
func (r *Registry) Get(name string) (Adapter, error) {
	if a, ok := r.byName[name]; ok {
		return a, nil
	}
	names := append([]string{}, r.order...)
	sort.Strings(names)
	return nil, fault.New(fault.InvalidArguments, "unknown adapter %q", name).With("adapters", fmt.Sprint(names))
}

// All returns the adapters in registry order.
func (r *Registry) All() []Adapter {
	out := make([]Adapter, len(r.order))
	for i, n := range r.order {
		out[i] = r.byName[n]
	}
	return out
}

// Extractors returns every extractor: the adapters that also extract,
// then the standalone ones, in registration order.
func (r *Registry) Extractors() []Extractor {
	out := append([]Extractor{}, r.extractors...)
	for _, a := range r.All() {
		if e, ok := a.(Extractor); ok {
			out = append(out, e)
		}
		if p, ok := a.(interface{ Extractors() []Extractor }); ok {
			out = append(out, p.Extractors()...)
		}
	}
	return out
}
