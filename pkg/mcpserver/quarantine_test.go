package mcpserver_test

import (
	"os"
	"path/filepath"
	"testing"
)

// TestImportArtifactQuarantines: a file that stores but cannot be extracted
// fails import_artifact with the parse error and the run it concerns, and
// that run is published quarantined with the reason, so list_runs shows it
// (as `flameox import` does) instead of leaving it registered and unlisted.
func TestImportArtifactQuarantines(t *testing.T) {
	dir := project(t)
	good, err := os.ReadFile(filepath.Join("..", "profile", "testdata", "google-pprof__sample.cpu.pb.gz"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "truncated.pb.gz"), good[:len(good)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	c := connect(t, dir, nil)
	env := c.fails("import_artifact", map[string]any{"path": "truncated.pb.gz", "kind": "sample_profile"}, "ARTIFACT_PARSE_FAILED")
	if env.Error.RunID == "" {
		t.Fatalf("the error names no run: %+v", env.Error)
	}
	var runs struct {
		Runs []struct {
			RunID         string `json:"run_id"`
			CaptureStatus string `json:"capture_status"`
			ErrorCode     string `json:"error_code"`
		} `json:"runs"`
	}
	c.ok("list_runs", nil, &runs)
	if len(runs.Runs) != 1 || runs.Runs[0].RunID != env.Error.RunID || runs.Runs[0].CaptureStatus != "quarantined" ||
		runs.Runs[0].ErrorCode != "ARTIFACT_PARSE_FAILED" {
		t.Fatalf("list_runs = %+v, want the run %s quarantined with ARTIFACT_PARSE_FAILED", runs.Runs, env.Error.RunID)
	}
	// The server still serves, and a good file imports.
	c.importedRun(copyTestdata(t, dir, "google-pprof__sample.cpu.pb.gz"))
}
