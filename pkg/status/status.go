package status

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"time"

	"github.com/flameox/flameox/pkg/artifact"
	"github.com/flameox/flameox/pkg/catalog"
	"github.com/flameox/flameox/pkg/corpus"
	"github.com/flameox/flameox/pkg/lease"
	"github.com/flameox/flameox/pkg/run"
	"github.com/flameox/flameox/pkg/workspace"
)

// Status is the result of `flameox status` (and the MCP workspace_status).
type Status struct {
	SchemaVersion int           `json:"schema_version"`
	Workspace     WorkspaceInfo `json:"workspace"`
	Head          HeadInfo      `json:"head"`
	Runs          RunCounts     `json:"runs"`
	Artifacts     ArtifactStats `json:"artifacts"`
	Catalog       CatalogInfo   `json:"catalog"`
	// Caches are the writable caches of contained captures
	// (.diagnostics/cache/NAME): no evidence, deletable.
	Caches []CacheStats `json:"caches"`
	// AbandonedStaging lists staging entries whose owner process is gone.
	AbandonedStaging []StagingEntry `json:"abandoned_staging"`
	// StaleRuns are running or pending runs whose owner is provably gone;
	// `flameox recover` closes them.
	StaleRuns       []string `json:"stale_runs"`
	QuarantinedRuns []string `json:"quarantined_runs"`
	Warnings        []string `json:"warnings"`
}

// CatalogInfo says whether catalog.duckdb exists and matches HEAD. Queries
// never depend on it; `flameox catalog rebuild` refreshes it.
type CatalogInfo struct {
	Exists  bool   `json:"exists"`
	Fresh   bool   `json:"fresh"`
	BuiltAt string `json:"built_at,omitempty"`
}

// WorkspaceInfo is the workspace's static identity.
type WorkspaceInfo struct {
	WorkspaceID    string    `json:"workspace_id"`
	Root           string    `json:"root"`
	ProjectRoot    string    `json:"project_root"`
	CreatedAt      time.Time `json:"created_at"`
	FlameoxVersion string    `json:"flameox_version"`
}

// HeadInfo describes the published corpus head.
type HeadInfo struct {
	CommitID    string    `json:"commit_id"`
	CreatedAt   time.Time `json:"created_at"`
	Generations int       `json:"generations"`
	// Rows counts published rows per table (from generation manifests).
	Rows map[string]int64 `json:"rows"`
	// Orphans are files a crashed publication left outside every commit;
	// they are invisible to readers.
	Orphans []string `json:"orphans"`
}

// RunCounts counts runs by type and by each state machine.
type RunCounts struct {
	Total int `json:"total"`
	// Unpublished counts runs with no published revision yet.
	Unpublished  int            `json:"unpublished"`
	ByType       map[string]int `json:"by_type"`
	ByExecution  map[string]int `json:"by_execution_status"`
	ByCapture    map[string]int `json:"by_capture_status"`
	ByValidation map[string]int `json:"by_validation_status"`
}

// ArtifactStats counts stored objects; by kind counts each object once per
// kind it is registered as.
type ArtifactStats struct {
	Objects int                  `json:"objects"`
	Bytes   int64                `json:"bytes"`
	ByKind  map[string]KindStats `json:"by_kind"`
}

// KindStats counts objects and bytes of one kind.
type KindStats struct {
	Objects int   `json:"objects"`
	Bytes   int64 `json:"bytes"`
}

// StagingEntry is one abandoned staging directory.
type StagingEntry struct {
	Path       string    `json:"path"` // workspace-relative
	ModifiedAt time.Time `json:"modified_at"`
	Owner      string    `json:"owner"` // why it is considered abandoned
}

// Collect reads the status of ws.
func Collect(ctx context.Context, ws *workspace.Workspace) (*Status, error) {
	st := &Status{
		SchemaVersion: 1,
		Workspace: WorkspaceInfo{WorkspaceID: ws.Meta.WorkspaceID, Root: ws.Root, ProjectRoot: ws.ProjectRoot,
			CreatedAt: ws.Meta.CreatedAt, FlameoxVersion: ws.Meta.FlameoxVersion},
		Runs:             RunCounts{ByType: map[string]int{}, ByExecution: map[string]int{}, ByCapture: map[string]int{}, ByValidation: map[string]int{}},
		Artifacts:        ArtifactStats{ByKind: map[string]KindStats{}},
		AbandonedStaging: []StagingEntry{}, StaleRuns: []string{}, QuarantinedRuns: []string{}, Warnings: []string{},
	}
	snap, err := corpus.Pin(ws.Root)
	if err != nil {
		return nil, err
	}
	st.Head = HeadInfo{CommitID: snap.Commit.CommitID, CreatedAt: snap.Commit.CreatedAt, Generations: len(snap.Generations),
		Rows: snap.Rows, Orphans: corpus.Orphans(snap)}
	if st.Head.Orphans == nil {
		st.Head.Orphans = []string{}
	}
	if len(st.Head.Orphans) > 0 {
		st.Warnings = append(st.Warnings, fmt.Sprintf("%d orphaned publication file(s) outside every commit (a publication was interrupted); they are invisible to queries", len(st.Head.Orphans)))
	}

	if err := countPublished(ctx, ws, st, snap.Rows); err != nil {
		return nil, err
	}
	if cs, err := catalog.ReadStatus(ws.Root); err == nil {
		st.Catalog = CatalogInfo{Exists: cs.Exists, Fresh: cs.Fresh}
		if cs.Exists {
			st.Catalog.BuiltAt = cs.BuiltAt.UTC().Format(time.RFC3339)
		}
	}
	st.AbandonedStaging = abandonedStaging(ws)
	st.Caches = caches(ws)
	for _, e := range st.AbandonedStaging {
		st.Warnings = append(st.Warnings, "abandoned staging "+e.Path+" ("+e.Owner+"); `flameox recover` removes it")
	}
	return st, nil
}

// stale reports an open run whose owner is provably gone, by the rule
// `flameox recover` closes it by (run.OwnerState), so status never names
// a stale run that recovery would leave open.
func stale(m *run.Manifest) bool {
	if !m.Open() {
		return false
	}
	st, _ := run.OwnerState(m, time.Now())
	return st == lease.Gone
}

func abandonedStaging(ws *workspace.Workspace) []StagingEntry {
	out := []StagingEntry{}
	ents, err := os.ReadDir(ws.Path("staging"))
	if err != nil {
		return out
	}
	for _, e := range ents {
		if !e.IsDir() || e.Name() == "duckdb-temp" {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue
		}
		why := ""
		b, err := os.ReadFile(ws.Path("staging", e.Name(), artifact.StagingOwner))
		var o lease.Owner
		switch {
		case errors.Is(err, fs.ErrNotExist):
			if time.Since(info.ModTime()) > time.Minute {
				why = "no owner recorded"
			}
		case err != nil || json.Unmarshal(b, &o) != nil:
			why = "owner record unreadable"
		case o.Check() == lease.Gone:
			why = "owner process gone"
		}
		if why != "" {
			out = append(out, StagingEntry{Path: "staging/" + e.Name(), ModifiedAt: info.ModTime().UTC(), Owner: why})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}
