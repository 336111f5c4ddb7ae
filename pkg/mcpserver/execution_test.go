package mcpserver_test

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestAnalyzeExecution: analyze_execution is flameox analyze execution
// --json over MCP, value for value; a run without execution evidence is
// a structured NOT_FOUND.
func TestAnalyzeExecution(t *testing.T) {
	dir := project(t)
	head := `{"flameox_observations": 1, "language": "python", "pid": 1}` + "\n"
	for name, body := range map[string]string{
		"good.jsonl": head + `{"t": "observe", "name": "policy", "values": {"clipping_enabled": true}, "phase": "train"}` + "\n",
		"bad.jsonl":  head + `{"t": "observe", "name": "policy", "values": {"clipping_enabled": false}, "phase": "train"}` + "\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c := connect(t, dir, nil)
	good, _ := c.importedRun("good.jsonl")
	bad, _ := c.importedRun("bad.jsonl")
	got := mcpResult(t, c, "analyze_execution", map[string]any{"input": good, "against": bad})
	want := porcelainJSON(t, dir, "analyze", "execution", good, "--against", bad)
	nextForms(t, "analyze_execution", got, want)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("analyze_execution differs from flameox analyze execution --json\nMCP: %v\nCLI: %v", got, want)
	}
	facts := got.(map[string]any)["changes"].(map[string]any)["facts"].([]any)
	if len(facts) != 1 || facts[0].(map[string]any)["status"] != "changed" || facts[0].(map[string]any)["name"] != "policy.clipping_enabled" {
		t.Fatalf("changes %v", facts)
	}
	cpu, _ := c.importedRun(copyTestdata(t, dir, "google-pprof__sample.cpu.pb.gz"))
	if env := c.call("analyze_execution", map[string]any{"input": cpu}); env.OK || env.Error == nil || env.Error.Code != "NOT_FOUND" {
		t.Fatalf("a CPU profile: %+v", env)
	}
}

// TestRecordExecution: record_analysis takes the execution recipe, as
// flameox analyze record execution does.
func TestRecordExecution(t *testing.T) {
	dir := project(t)
	body := `{"flameox_observations": 1}` + "\n" + `{"t": "observe", "name": "policy", "values": {"on": true}}` + "\n"
	if err := os.WriteFile(filepath.Join(dir, "obs.jsonl"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	c := connect(t, dir, nil)
	run, _ := c.importedRun("obs.jsonl")
	var rec struct {
		Operation  string `json:"operation"`
		AnalysisID string `json:"analysis_id"`
	}
	c.ok("record_analysis", map[string]any{"recipe": "execution", "arguments": map[string]any{"input": run}}, &rec)
	if rec.Operation != "execution" || rec.AnalysisID == "" {
		t.Fatalf("record_analysis execution: %+v", rec)
	}
}
