package mcpserver

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/flameox/flameox/pkg/contain"
	"github.com/flameox/flameox/pkg/fault"

	"github.com/flameox/flameox/pkg/fleet"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// addHistoryTools registers query_fleet (issue 23): the fleet's named
// questions and, as metric_changes, `flameox history` in one tool, so
// tools/list grows by one. It only reads: the export directories an
// agent names are read, never written, and every result is bounded. An
// agent reads exports inside the project, or under a directory a person
// listed in fleet.exports (config.toml); the CLI reads any.
func (s *server) addHistoryTools() {
	names := make([]string, 0, len(fleet.Queries()))
	for _, q := range fleet.Queries() {
		names = append(names, q.Name)
	}
	addTool(s, &mcp.Tool{Name: "query_fleet",
		Description: "Ask a named question over exported corpora, or metric_changes (history with change points) of the workspace.",
		Annotations: readOnly("Query fleet")}, s.queryFleet, enum("name", names...))
}

func (s *server) queryFleet(ctx context.Context, _ *mcp.CallToolRequest, in fleet.QueryRequest) (*fleet.QueryResult, string, error) {
	in.Repo = s.opts.ProjectRoot
	from, err := s.allowedExports(in.From)
	if err != nil {
		return nil, "", err
	}
	in.From = from
	if len(in.From) == 0 {
		if ws, err := s.workspace(); err == nil {
			in.Workspace = ws
		} else if in.Name == "metric_changes" {
			return nil, "", err
		}
	}
	res, err := fleet.Query(ctx, in)
	if err != nil {
		return nil, "", err
	}
	sum := fmt.Sprintf("%s@%s over %d corpora: %d of %d rows", res.Query, res.Version, len(res.Corpora), res.Returned, res.Total)
	return res, sum, nil
}

// allowedExports resolves the export directories an agent named
// (relative paths are the project's, symlinks resolved) and refuses one
// outside the project and outside every fleet.exports root.
func (s *server) allowedExports(from []string) ([]string, error) {
	if len(from) == 0 {
		return from, nil
	}
	root, err := filepath.EvalSymlinks(s.opts.ProjectRoot)
	if err != nil {
		return nil, fault.Wrap(fault.WorkspaceInvalid, err, "resolve the project root")
	}
	allowed := []string{root}
	if ws, err := s.workspace(); err == nil {
		for _, d := range ws.Config.Fleet.Exports {
			if r, err := filepath.EvalSymlinks(d); err == nil {
				allowed = append(allowed, r)
			}
		}
	}
	out := make([]string, 0, len(from))
	for _, d := range from {
		p := d
		if !filepath.IsAbs(p) {
			p = filepath.Join(s.opts.ProjectRoot, p)
		}
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			return nil, fault.New(fault.NotFound, "export directory %s does not exist", d).With("path", d).With("missing_entity", "export")
		}
		if !slices.ContainsFunc(allowed, func(a string) bool { return contain.Under(real, a) }) {
			return nil, fault.New(fault.ExecutionRefused, "export directory %s is outside the project and outside fleet.exports", d).With("path", d).
				Fix("Pass an export inside the project; a person can allow a directory elsewhere by adding it to fleet.exports in .diagnostics/config.toml.")
		}
		out = append(out, real)
	}
	return out, nil
}
