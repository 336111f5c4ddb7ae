package mcpserver_test

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestSummarizeMeasurements: over MCP, a run's benchmark summary is the
// same model as `flameox measurements summary --json`, with rows and
// their warnings, and bounded like every list.
func TestSummarizeMeasurements(t *testing.T) {
	dir := project(t)
	b, err := os.ReadFile(filepath.Join("..", "query", "testdata", "golang-perf__crc-old.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "crc.txt"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	c := connect(t, dir, nil)
	var imp struct {
		Run struct {
			RunID string `json:"run_id"`
		} `json:"run"`
	}
	c.ok("import_artifact", map[string]any{"path": "crc.txt", "kind": "benchmark_samples"}, &imp)
	got := mcpResult(t, c, "summarize_measurements", map[string]any{"run_id": imp.Run.RunID})
	want := porcelainJSON(t, dir, "measurements", "summary", imp.Run.RunID, "--limit", "20")
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("summarize_measurements differs from flameox measurements summary --json\nMCP: %v\nCLI: %v", got, want)
	}
	res := got.(map[string]any)
	rows, _ := res["rows"].([]any)
	if len(rows) != 20 || res["truncated"] != true || res["total"].(float64) <= 20 {
		t.Fatalf("want a first page of 20 rows of more: %d rows, truncated %v, total %v", len(rows), res["truncated"], res["total"])
	}
	first := rows[0].(map[string]any)
	if first["n"].(float64) != 10 || first["median"].(float64) <= 0 || first["range"] == "" {
		t.Fatalf("first row: %v", first)
	}
}
