package analysis

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/flameox/flameox/pkg/adapter"
	"github.com/flameox/flameox/pkg/artifact"
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
	Available     bool     `json:"available"`
	Remediation   []string `json:"remediation"`
}

// Viewer plans the native viewer of a stored artifact. adapters decide by
// the registration's producer (perf.data → perf report), else by content.
func Viewer(ctx context.Context, ws *workspace.Workspace, reg *adapter.Registry, artifactID string) (*ViewerPlan, error) {
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
	for _, name := range []string{producer, "pprof", "process"} {
		a, err := reg.Get(name)
		if err != nil {
			continue
		}
		if v, err := a.Viewer(path, kind); err == nil && v != nil {
			plan = v
			break
		}
	}
	if plan == nil {
		return nil, fault.New(fault.CapabilityUnavailable, "no native viewer is known for %s (%s)", artifactID, kind)
	}
	res := &ViewerPlan{SchemaVersion: 1, ArtifactID: detail.ArtifactID, Kind: kind, Path: path, Tool: plan.Tool,
		Argv: plan.Argv, Note: plan.Note, Remediation: []string{}}
	if _, err := exec.LookPath(plan.Argv[0]); err == nil {
		res.Available = true
	} else {
		res.Remediation = append(res.Remediation, plan.Argv[0]+" is not on PATH: "+plan.Note)
	}
	if _, err := os.Stat(path); err != nil {
		return nil, fault.Wrap(fault.ArtifactIntegrityFailed, err, "payload of %s", artifactID)
	}
	_ = artifact.ObjectRel
	return res, nil
}
