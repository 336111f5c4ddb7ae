package provenance

import (
	"encoding/json"
	"time"

	"github.com/flameox/flameox/pkg/record"
)

// Record is the `analysis` record `--record` writes for fox-publish: what
// was computed, from which exact commit and inputs, with which parameters,
// and the digest of the result. The result itself is not stored: because
// commits are immutable, running the same operation version with the same
// parameters at the recorded commit reproduces it, and its digest proves it.
type Record struct {
	record.Header
	Workspace          string    `json:"workspace"`
	AnalysisID         string    `json:"analysis_id"`
	Operation          string    `json:"operation"`
	OperationVersion   string    `json:"operation_version"`
	CorpusCommitID     string    `json:"corpus_commit_id"`
	ParametersJSON     string    `json:"parameters_json"`
	ParametersDigest   string    `json:"parameters_digest"`
	ResultDigest       string    `json:"result_digest"`
	InputRunIDs        []string  `json:"input_run_ids"`
	InputArtifactIDs   []string  `json:"input_artifact_ids"`
	InputGenerationIDs []string  `json:"input_generation_ids"`
	CoverageJSON       string    `json:"coverage_json"`
	Limitations        []string  `json:"limitations"`
	StartedAt          time.Time `json:"started_at"`
	CompletedAt        time.Time `json:"completed_at"`
}

// Decode reads an analysis record from JSON.
func Decode(b []byte) (*Record, error) {
	var r Record
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, err
	}
	return &r, nil
}
