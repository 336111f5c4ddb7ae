package mcpserver

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"time"

	"github.com/flameox/flameox/pkg/capture"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/publish"
	"github.com/flameox/flameox/pkg/query"
	"github.com/flameox/flameox/pkg/services"
	"github.com/flameox/flameox/pkg/services/publishing"
	"github.com/flameox/flameox/pkg/version"
	"github.com/flameox/flameox/pkg/workspace"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Options configure a server.
type Options struct {
	// ProjectRoot is the project directory; the workspace is exactly
	// ProjectRoot/.diagnostics (no walk up to parents).
	ProjectRoot string
	// Init creates the workspace when Serve starts and it is missing.
	Init bool
	// Logger receives diagnostics (stderr only; nil discards them).
	Logger *slog.Logger
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Environ is the parent environment the broker filters for workloads
	// (default os.Environ).
	Environ func() []string
	// TokenTTL is the lifetime of a plan token (default 5 minutes).
	TokenTTL time.Duration
	// MaxFrameBytes bounds one inbound JSON-RPC line on stdin (default
	// DefaultMaxFrameBytes); a longer one is answered with an error.
	MaxFrameBytes int
	// ProgressInterval is how often a long call that was given a progress
	// token repeats its current phase (default 5 seconds).
	ProgressInterval time.Duration
	// MaxRunningJobs bounds the detached jobs running at once (default
	// 2); start_capture refuses more. MaxFinishedJobs (default 32) and
	// JobRetention (default 1 hour) bound the finished ones kept for
	// get_job. Jobs live in the server process only.
	MaxRunningJobs  int
	MaxFinishedJobs int
	JobRetention    time.Duration
}

// server is one MCP server and its state.
type server struct {
	opts   Options
	mcp    *mcp.Server
	tokens *tokenStore
	inputs map[string]*toolInput // tool name → input schema facts
	// readers stay open between calls while HEAD does not move.
	readers *query.Readers
	jobs    *jobStore
}

// New builds the MCP server with every tool and resource template.
func New(opts Options) *mcp.Server { return newServer(opts).mcp }

func newServer(opts Options) *server {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Environ == nil {
		opts.Environ = os.Environ
	}
	if opts.TokenTTL <= 0 {
		opts.TokenTTL = 5 * time.Minute
	}
	if opts.ProgressInterval <= 0 {
		opts.ProgressInterval = 5 * time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if abs, err := filepath.Abs(opts.ProjectRoot); err == nil {
		opts.ProjectRoot = abs
	}
	s := &server{opts: opts, tokens: newTokenStore(), inputs: map[string]*toolInput{}, readers: query.NewReaders()}
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: "flameox", Title: "flameox runtime evidence", Version: version.Version()},
		&mcp.ServerOptions{Instructions: instructions, Logger: opts.Logger, Capabilities: &mcp.ServerCapabilities{}})
	s.mcp.AddReceivingMiddleware(s.recoverPanics, s.resourceErrors, s.checkArguments, s.shareReaders)
	s.addWorkspaceTools()
	s.addQueryTools()
	s.addOutputTools()
	s.addCaptureTools()
	s.addAnalysisTools()
	s.addRecordTools()
	s.addJobTools()
	s.addProposeTool()
	s.addInquiryTools()
	s.addExperimentTools()
	s.addCompareTools()
	s.addDiffTools()
	s.addComparisonRecordTools()
	s.addScalingTools()
	s.addMemoryTools()
	s.addFailuresTools()
	s.addTraceTools()
	s.addExecutionTools()
	s.addPyTorchTools()
	s.addExportTools()
	s.addIntegrityTools()
	s.addFindingsTools()
	s.addReportTools()
	s.addFleetTools()
	s.addHistoryTools()
	s.addPictureTools()
	s.addPrompts()
	s.addResources()
	return s
}

// Serve runs the server on stdin/stdout until stdin ends or ctx is done.
// With opts.Init a missing workspace is created first. A line that is not
// a valid JSON-RPC 2.0 message is answered with -32700 or -32600 and the
// server reads on; at the end of stdin every call already read is answered
// before Serve returns.
func Serve(ctx context.Context, opts Options, stdin io.Reader, stdout io.Writer) error {
	s := newServer(opts)
	defer s.readers.Close()
	defer s.jobs.close()
	if opts.Init {
		if _, err := s.workspace(); fault.Is(err, fault.WorkspaceNotFound) {
			if _, err := workspace.Init(ctx, s.opts.ProjectRoot, s.opts.Now(), publish.FirstCommit); err != nil {
				return err
			}
			s.opts.Logger.Info("initialized workspace", "project_root", s.opts.ProjectRoot)
		}
	}
	t := &stdioTransport{in: stdin, out: stdout, limit: opts.MaxFrameBytes}
	err := s.mcp.Run(ctx, t)
	if errors.Is(err, io.EOF) || errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// Tools lists the names of every tool the server registers, sorted.
func Tools() []string {
	s := newServer(Options{})
	out := make([]string, 0, len(s.inputs))
	for name := range s.inputs {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// workspace opens ProjectRoot/.diagnostics, or fails WORKSPACE_NOT_FOUND.
// It is opened per call, so initialize_workspace and config edits take
// effect without a restart.
func (s *server) workspace() (*workspace.Workspace, error) {
	dir := filepath.Join(s.opts.ProjectRoot, workspace.DirName)
	if _, err := os.Stat(filepath.Join(dir, "workspace.json")); errors.Is(err, fs.ErrNotExist) {
		return nil, fault.New(fault.WorkspaceNotFound, "no flameox workspace in %s", s.opts.ProjectRoot).
			Fix("Call initialize_workspace to create it, or run `flameox init` in the project root.")
	}
	return workspace.Open(dir)
}

// captureService is the capture service every tool uses (pkg/services).
func (s *server) captureService(ws *workspace.Workspace) *capture.Service {
	return services.Capture(ws, s.opts.Now, s.opts.Environ)
}

// publisher is the publisher every tool uses (pkg/services).
func (s *server) publisher(ws *workspace.Workspace) *publish.Publisher {
	return publishing.Publisher(ws, s.opts.Now)
}

// limitSchema bounds a "limit" property to 1..1000 with an MCP default
// small enough to keep results under a few kilobytes.
func limitSchema(def int) func(*jsonschema.Schema) {
	return func(sch *jsonschema.Schema) {
		p := sch.Properties["limit"]
		if p == nil {
			return
		}
		p.Minimum, p.Maximum = jsonschema.Ptr(1.0), jsonschema.Ptr(1000.0)
		p.Default = []byte(itoa(def))
		p.Description = "rows per page"
	}
}

// enum restricts a string property to values.
func enum(prop string, values ...string) func(*jsonschema.Schema) {
	return func(sch *jsonschema.Schema) {
		if p := sch.Properties[prop]; p != nil {
			p.Enum = make([]any, len(values))
			for i, v := range values {
				p.Enum[i] = v
			}
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
