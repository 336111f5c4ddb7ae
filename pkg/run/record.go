package run

import "github.com/flameox/flameox/pkg/record"

// Record is the `run` record fox-capture writes for every run it creates or
// finishes: enough for fox-publish to find the manifest, nothing more.
type Record struct {
	record.Header
	// Workspace is the absolute workspace root (.diagnostics).
	Workspace string `json:"workspace"`
	RunID     string `json:"run_id"`
	Revision  int    `json:"revision"`
	// Manifest is the workspace-relative projection path.
	Manifest         string   `json:"manifest"`
	RunType          string   `json:"run_type"`
	ExecutionStatus  string   `json:"execution_status"`
	CaptureStatus    string   `json:"capture_status"`
	ValidationStatus string   `json:"validation_status"`
	ArtifactIDs      []string `json:"artifact_ids"`
}

// NewRecord describes manifest m of the workspace at root.
func NewRecord(root string, m *Manifest) Record {
	ids := make([]string, 0, len(m.Artifacts))
	for _, a := range m.Artifacts {
		ids = append(ids, a.ArtifactID)
	}
	return Record{
		Header:    record.Header{Record: record.KindRun, SchemaVersion: record.SchemaVersion},
		Workspace: root, RunID: m.RunID, Revision: m.Revision, Manifest: ManifestRel(m.RunID),
		RunType: m.RunType, ExecutionStatus: m.ExecutionStatus, CaptureStatus: m.CaptureStatus,
		ValidationStatus: m.ValidationStatus, ArtifactIDs: ids,
	}
}
