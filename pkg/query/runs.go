// Package query answers the curated read questions of the CLI and the MCP
// server: list and show runs and artifacts. Results are bounded (a default
// and a maximum row count), announce truncation with a total and an opaque
// cursor, and are the same Go types for `flameox … --json` and MCP.
//
// For now the answers come from run manifests; the catalog moves them onto
// DuckDB over the pinned corpus commit without changing these types.
package query

import (
	"encoding/base64"
	"sort"
	"strings"
	"time"

	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/run"
	"github.com/flameox/flameox/pkg/workspace"
)

// Row limits shared by every list.
const (
	DefaultLimit = 50
	MaxLimit     = 1000
)

// RunSummary is one row of a run list.
type RunSummary struct {
	RunID            string    `json:"run_id"`
	RunType          string    `json:"run_type"`
	CreatedAt        time.Time `json:"created_at"`
	ExecutionStatus  string    `json:"execution_status"`
	CaptureStatus    string    `json:"capture_status"`
	ValidationStatus string    `json:"validation_status"`
	ArtifactCount    int       `json:"artifact_count"`
	EnvironmentID    string    `json:"environment_id"`
	SourceStateID    string    `json:"source_state_id"`
}

// RunList is the result of `flameox runs list`.
type RunList struct {
	SchemaVersion int          `json:"schema_version"`
	Total         int          `json:"total"`
	Returned      int          `json:"returned"`
	Truncated     bool         `json:"truncated"`
	Cursor        string       `json:"cursor,omitempty"`
	Runs          []RunSummary `json:"runs"`
}

// ListRunsRequest filters and pages a run list.
type ListRunsRequest struct {
	Limit  int    `json:"limit,omitempty"`
	Cursor string `json:"cursor,omitempty"`
}

// Limit checks a requested row limit and applies the default.
func Limit(n int) (int, error) {
	switch {
	case n == 0:
		return DefaultLimit, nil
	case n < 0 || n > MaxLimit:
		return 0, fault.New(fault.QueryBudgetExceeded, "limit %d is outside 1..%d", n, MaxLimit).With("max_limit", "1000")
	}
	return n, nil
}

// ListRuns lists runs newest first.
func ListRuns(ws *workspace.Workspace, req ListRunsRequest) (*RunList, error) {
	limit, err := Limit(req.Limit)
	if err != nil {
		return nil, err
	}
	after, err := decodeCursor(req.Cursor)
	if err != nil {
		return nil, err
	}
	store := &run.Store{Root: ws.Root}
	ids, err := store.IDs()
	if err != nil {
		return nil, err
	}
	rows := make([]RunSummary, 0, len(ids))
	for _, id := range ids {
		m, err := store.Get(id)
		if err != nil {
			continue // status reports unreadable runs
		}
		rows = append(rows, summarize(m))
	}
	sort.Slice(rows, func(i, j int) bool { return runKey(rows[i]) > runKey(rows[j]) })
	res := &RunList{SchemaVersion: 1, Total: len(rows), Runs: []RunSummary{}}
	for _, r := range rows {
		if after != "" && runKey(r) >= after {
			continue
		}
		if len(res.Runs) == limit {
			res.Truncated = true
			res.Cursor = encodeCursor(runKey(res.Runs[len(res.Runs)-1]))
			break
		}
		res.Runs = append(res.Runs, r)
	}
	res.Returned = len(res.Runs)
	return res, nil
}

// ShowRun returns a run's current manifest.
func ShowRun(ws *workspace.Workspace, id string) (*run.Manifest, error) {
	return (&run.Store{Root: ws.Root}).Get(strings.TrimSpace(id))
}

func summarize(m *run.Manifest) RunSummary {
	s := RunSummary{RunID: m.RunID, RunType: m.RunType, CreatedAt: m.CreatedAt, ExecutionStatus: m.ExecutionStatus,
		CaptureStatus: m.CaptureStatus, ValidationStatus: m.ValidationStatus, ArtifactCount: len(m.Artifacts)}
	if m.Environment != nil {
		s.EnvironmentID = m.Environment.EnvironmentID
	}
	if m.SourceState != nil {
		s.SourceStateID = m.SourceState.SourceStateID
	}
	return s
}

func runKey(r RunSummary) string {
	return r.CreatedAt.UTC().Format("2006-01-02T15:04:05.000000Z") + "|" + r.RunID
}

func encodeCursor(key string) string {
	return base64.RawURLEncoding.EncodeToString([]byte("v1|" + key))
}

func decodeCursor(c string) (string, error) {
	if c == "" {
		return "", nil
	}
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil || !strings.HasPrefix(string(b), "v1|") {
		return "", fault.New(fault.StaleCursor, "the cursor is not one this query issued").Fix("Repeat the query without --cursor.")
	}
	return strings.TrimPrefix(string(b), "v1|"), nil
}
