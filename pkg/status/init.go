package status

import (
	"context"
	"time"

	"github.com/flameox/flameox/pkg/corpus"
	"github.com/flameox/flameox/pkg/workspace"
)

// InitResult is the result of `flameox init` and MCP initialize_workspace:
// what was created, and the workspace's status afterwards.
type InitResult struct {
	SchemaVersion int      `json:"schema_version"`
	Created       []string `json:"created"`
	Status        *Status  `json:"status"`
}

// Init creates (or completes) the workspace at projectRoot and reports it.
// first makes the corpus's first commit (publish.FirstCommit, see
// workspace.Init).
func Init(ctx context.Context, projectRoot string, now time.Time, first workspace.FirstCommit) (*InitResult, *workspace.Workspace, error) {
	res, err := workspace.Init(ctx, projectRoot, now, first)
	if err != nil {
		return nil, nil, err
	}
	// Every table's typed empty anchor exists from the start (a reader
	// would write missing ones, but status skips DuckDB on an empty corpus).
	if err := corpus.EnsureAnchors(res.Workspace.Root); err != nil {
		return nil, nil, err
	}
	st, err := Collect(ctx, res.Workspace)
	if err != nil {
		return nil, nil, err
	}
	out := &InitResult{SchemaVersion: 1, Created: res.Created, Status: st}
	if out.Created == nil {
		out.Created = []string{}
	}
	return out, res.Workspace, nil
}
