package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/flameox/flameox/pkg/artifact"
	"github.com/flameox/flameox/pkg/capture"
	"github.com/flameox/flameox/pkg/contain"
	"github.com/flameox/flameox/pkg/corpus"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/publish"
	"github.com/flameox/flameox/pkg/run"
	"github.com/flameox/flameox/pkg/workspace"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// importInput is import_artifact's input. The path is project-relative on
// purpose: an agent may import what is in the project, nothing else.
type importInput struct {
	Path            string `json:"path" jsonschema:"project-relative path of a file (no absolute, no ..)"`
	Kind            string `json:"kind,omitempty" jsonschema:"artifact kind (default: detected)"`
	Sensitivity     string `json:"sensitivity,omitempty" jsonschema:"normal, internal or sensitive (default: capture.default_sensitivity)"`
	MediaType       string `json:"media_type,omitempty" jsonschema:"media type (default: guessed from the content)"`
	Producer        string `json:"producer,omitempty" jsonschema:"tool that wrote the file, if known"`
	ProducerVersion string `json:"producer_version,omitempty" jsonschema:"version of that tool"`
}

func (s *server) addImportTool() {
	kinds := artifact.Kinds()
	names := make([]string, len(kinds))
	for i, k := range kinds {
		names[i] = string(k)
	}
	addTool(s, &mcp.Tool{Name: "import_artifact",
		Description: "Import an existing project file (profile, trace, benchmark output, memory or coverage capture) as a new published run.",
		Annotations: &mcp.ToolAnnotations{Title: "Import artifact", DestructiveHint: ptr(false), OpenWorldHint: ptr(false)},
	}, s.importArtifact, enum("kind", names...), enum("sensitivity", "normal", "internal", "sensitive"),
		func(sch *jsonschema.Schema) {
			p := sch.Properties["path"]
			p.MinLength, p.MaxLength = jsonschema.Ptr(1), jsonschema.Ptr(4096)
		})
}

func (s *server) importArtifact(ctx context.Context, _ *mcp.CallToolRequest, in importInput) (*capture.ImportResult, string, error) {
	ws, err := s.workspace()
	if err != nil {
		return nil, "", err
	}
	path, err := projectFile(ws, in.Path)
	if err != nil {
		return nil, "", err
	}
	// The file opened is checked again to be in the project: a directory
	// above it swapped for a symlink after projectFile resolved it would
	// otherwise be followed.
	root, err := filepath.EvalSymlinks(ws.ProjectRoot)
	if err != nil {
		return nil, "", fault.Wrap(fault.WorkspaceInvalid, err, "resolve the project root")
	}
	req := capture.ImportRequest{Path: path, Kind: in.Kind, Sensitivity: in.Sensitivity, MediaType: in.MediaType,
		Producer: in.Producer, ProducerVersion: in.ProducerVersion, RequestedBy: "mcp", Beneath: root}
	svc := s.captureService(ws)
	res, err := svc.ImportFrom(ctx, ws.ProjectRoot, req)
	if err != nil {
		// A run that failed after its creation is terminal: publish it so
		// that list_runs shows it with its reason, then fail.
		if id := fault.As(err).RunID; id != "" {
			if m, gerr := (&run.Store{Root: ws.Root}).Get(id); gerr == nil && !m.Open() {
				svc.PublishQuarantining(context.WithoutCancel(ctx), publish.For(s.publisher(ws)),
					[]capture.RunRevision{{RunID: id, Revision: m.Revision}})
			}
		}
		return nil, "", err
	}
	// An artifact that cannot be extracted (a parse failure, a decoding
	// limit) quarantines the run, which is published so, and the import
	// fails with that error, as `flameox import` does.
	pub, err := svc.PublishQuarantining(ctx, publish.For(s.publisher(ws)),
		[]capture.RunRevision{{RunID: res.Run.RunID, Revision: res.Run.Revision}})
	if err != nil {
		fe := fault.As(err)
		if fe.RunID == "" {
			fe.RunID = res.Run.RunID
		}
		return nil, "", fe
	}
	if len(pub.Quarantined) > 0 {
		return nil, "", pub.Errors[res.Run.RunID]
	}
	res.CorpusCommitID = pub.CommitID
	dedup := ""
	if res.Deduplicated {
		dedup = " (identical bytes were already stored)"
	}
	// A file no extractor reads says so before anything else (the text
	// is one line, so it leads it).
	lead := ""
	if line := res.NotAnalysedLine(); line != "" {
		lead = line + " — "
	}
	return res, lead + fmt.Sprintf("imported %s as %s, artifact %s%s, run %s; published commit %s", res.Registration.DisplayName,
		res.Registration.Kind, res.ArtifactID, dedup, res.Run.RunID, corpus.Short(pub.CommitID)), nil
}

// projectFile resolves a project-relative path to the real file it names,
// refusing anything that is absolute, climbs with .., contains NUL, or
// resolves (through symlinks) outside the project or into the workspace
// (re-importing stored artifacts could launder their sensitivity).
func projectFile(ws *workspace.Workspace, p string) (string, error) {
	refuse := func(why string) error {
		return fault.New(fault.ExecutionRefused, "import path %q refused: %s", p, why).With("path", p).
			Fix("Pass a path relative to the project root that stays inside it, e.g. profiles/cpu.pb.gz.")
	}
	switch {
	case strings.ContainsRune(p, 0):
		return "", refuse("it contains a NUL byte")
	case strings.TrimSpace(p) == "":
		return "", fault.New(fault.InvalidArguments, "import_artifact needs a project-relative path")
	case filepath.IsAbs(p) || strings.HasPrefix(p, "/") || strings.HasPrefix(p, `\`) || filepath.VolumeName(p) != "":
		return "", refuse("absolute paths are not accepted over MCP")
	}
	for _, part := range strings.FieldsFunc(p, func(r rune) bool { return r == '/' || r == '\\' }) {
		if part == ".." {
			return "", refuse("it contains a .. component")
		}
	}
	real, err := filepath.EvalSymlinks(filepath.Join(ws.ProjectRoot, filepath.FromSlash(p)))
	if errors.Is(err, fs.ErrNotExist) {
		return "", fault.New(fault.NotFound, "%s does not exist in the project", p).With("path", p).With("missing_entity", "file")
	}
	if err != nil {
		return "", fault.Wrap(fault.InvalidArguments, err, "resolve %s", p).With("path", p)
	}
	root, err := filepath.EvalSymlinks(ws.ProjectRoot)
	if err != nil {
		return "", fault.Wrap(fault.WorkspaceInvalid, err, "resolve the project root")
	}
	wsRoot, err := filepath.EvalSymlinks(ws.Root)
	if err != nil {
		return "", fault.Wrap(fault.WorkspaceInvalid, err, "resolve the workspace")
	}
	if !contain.Under(real, root) {
		return "", refuse("it resolves outside the project")
	}
	if contain.Under(real, wsRoot) {
		return "", refuse("it is inside the .diagnostics workspace")
	}
	return real, nil
}
