package mcpserver_test

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestAnalyzeMemory: analyze_memory is flameox analyze memory --json over
// MCP, value for value, with next steps naming tools; its default result
// stays small; a run without a memory capture is a structured NOT_FOUND.
func TestAnalyzeMemory(t *testing.T) {
	dir := project(t)
	b, err := os.ReadFile(filepath.Join("..", "adapter", "massif", "testdata", "massif-visualizer__massif.out.kate2"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "massif.out.kate2"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	c := connect(t, dir, nil)
	runID, _ := c.importedRun("massif.out.kate2")
	cpuID, _ := c.importedRun(copyTestdata(t, dir, "google-pprof__sample.cpu.pb.gz"))
	for _, tc := range []struct {
		name string
		args map[string]any
		cli  []string
	}{
		{"default", map[string]any{"input": runID}, []string{"analyze", "memory", runID}},
		{"against itself", map[string]any{"input": runID, "against": runID, "limit": 2, "points": 5},
			[]string{"analyze", "memory", runID, "--against", runID, "--limit", "2", "--points", "5"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, want := mcpResult(t, c, "analyze_memory", tc.args), porcelainJSON(t, dir, tc.cli...)
			nextForms(t, "analyze_memory", got, want)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("analyze_memory differs from flameox %v\nMCP: %v\nCLI: %v", tc.cli, got, want)
			}
			base := got.(map[string]any)["base"].(map[string]any)
			if base["sources"].([]any)[0].(map[string]any)["collector"] != "massif" {
				t.Fatalf("base %v", base)
			}
		})
	}
	if n := resultBytes(t, c, "analyze_memory", map[string]any{"input": runID}); n > 16<<10 {
		t.Errorf("default analyze_memory result is %d bytes (> 16 KiB)", n)
	}
	var rec struct {
		Operation  string `json:"operation"`
		AnalysisID string `json:"analysis_id"`
	}
	c.ok("record_analysis", map[string]any{"recipe": "memory", "arguments": map[string]any{"input": runID}}, &rec)
	if rec.Operation != "memory" || rec.AnalysisID == "" {
		t.Fatalf("record_analysis memory: %+v", rec)
	}
	env := c.call("analyze_memory", map[string]any{"input": cpuID})
	if env.OK || env.Error == nil || env.Error.Code != "NOT_FOUND" {
		t.Fatalf("a CPU profile: %+v", env)
	}
}
