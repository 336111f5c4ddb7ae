package corpus

import "github.com/flameox/flameox/pkg/record"

// GenerationRecord is the `generation` record fox-publish writes: one
// generation it published, and the runs it came from.
type GenerationRecord struct {
	record.Header
	Workspace    string           `json:"workspace"`
	GenerationID string           `json:"generation_id"`
	Manifest     string           `json:"manifest"`
	Tables       map[string]int64 `json:"tables"`
	InputRunIDs  []string         `json:"input_run_ids"`
}

// CommitRecord is the `commit` record fox-publish writes after HEAD moved.
type CommitRecord struct {
	record.Header
	Workspace      string `json:"workspace"`
	CommitID       string `json:"commit_id"`
	ParentCommitID string `json:"parent_commit_id"`
	GenerationID   string `json:"generation_id"`
}
