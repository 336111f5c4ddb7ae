package mcpserver_test

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const failuresTOML = `schema_version = 1
[workloads.ok]
argv = ["/bin/sh", "-c", "exit 0"]
timeout_seconds = 10
[workloads.fail]
argv = ["/bin/sh", "-c", "echo nope >&2; exit 2"]
timeout_seconds = 10
`

// TestAnalyzeFailures: analyze_failures is flameox analyze failures
// --json over MCP, value for value, on real failed attempts (a workload
// that exits 2, twice; a quarantined import) beside successes; it is
// read-only, its default result stays small, record_analysis records it,
// and a bad time is a structured INVALID_ARGUMENTS.
func TestAnalyzeFailures(t *testing.T) {
	dir := captureProject(t, failuresTOML, "ok", "fail")
	if err := os.WriteFile(filepath.Join(dir, "nan.json"), []byte(`{"benchmarks":[{"metadata":{"name":"a"},"runs":[{"values":[1.0,NaN]}]}],"version":"1.0"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	c := connect(t, dir, nil)
	for _, name := range []string{"ok", "fail", "fail"} {
		p := c.plan(name)
		if env := c.call("execute_capture_plan", map[string]any{"plan_token": p.PlanToken}); env.OK != (name == "ok") {
			t.Fatalf("capture %s: %s", name, env.raw)
		}
	}
	if env := c.call("import_artifact", map[string]any{"path": "nan.json"}); env.OK || env.Error == nil || env.Error.Code != "ARTIFACT_PARSE_FAILED" {
		t.Fatalf("a broken import: %s", env.raw)
	}
	for _, tc := range []struct {
		name string
		args map[string]any
		cli  []string
	}{
		{"default", map[string]any{}, []string{"analyze", "failures"}},
		{"filtered", map[string]any{"workload": "fail", "limit": 2, "since": "2000-01-01T00:00:00Z"},
			[]string{"analyze", "failures", "--workload", "fail", "--limit", "2", "--since", "2000-01-01T00:00:00Z"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, want := mcpResult(t, c, "analyze_failures", tc.args), porcelainJSON(t, dir, tc.cli...)
			nextForms(t, "analyze_failures", got, want)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("analyze_failures differs from flameox %v\nMCP: %v\nCLI: %v", tc.cli, got, want)
			}
		})
	}
	var res struct {
		Summary struct {
			Attempts, Failed, Succeeded int
		} `json:"summary"`
		Groups []struct {
			Dimension, Value string
			Failures         int
			Succeeded        int
			Isolated         bool
		} `json:"groups"`
	}
	c.ok("analyze_failures", map[string]any{}, &res)
	if res.Summary.Attempts != 4 || res.Summary.Failed != 3 || res.Summary.Succeeded != 1 {
		t.Fatalf("summary %+v", res.Summary)
	}
	found := map[string]bool{}
	for _, g := range res.Groups {
		switch {
		case g.Dimension == "workload" && g.Failures == 2 && g.Succeeded == 0 && !g.Isolated:
			found["fail"] = true
		case g.Dimension == "exit" && g.Value == "exit 2" && g.Failures == 2:
			found["exit"] = true
		case g.Dimension == "collector" && g.Value == "import benchmark_samples" && g.Isolated:
			found["import"] = true
		}
	}
	if len(found) != 3 {
		t.Errorf("groups %+v (found %v)", res.Groups, found)
	}
	if n := resultBytes(t, c, "analyze_failures", map[string]any{}); n > 8<<10 {
		t.Errorf("default analyze_failures result is %d bytes (> 8 KiB)", n)
	}
	var rec struct {
		Recipe     string `json:"recipe"`
		AnalysisID string `json:"analysis_id"`
	}
	c.ok("record_analysis", map[string]any{"recipe": "failures", "arguments": map[string]any{"limit": 3}}, &rec)
	if rec.Recipe != "failures" || rec.AnalysisID == "" {
		t.Fatalf("record_analysis failures: %+v", rec)
	}
	tools, err := c.cs.ListTools(t.Context(), &mcp.ListToolsParams{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range tools.Tools {
		if tl.Name == "analyze_failures" && (tl.Annotations == nil || !tl.Annotations.ReadOnlyHint) {
			t.Errorf("analyze_failures is not read-only: %+v", tl.Annotations)
		}
	}
	c.fails("analyze_failures", map[string]any{"since": "yesterday"}, "INVALID_ARGUMENTS")
	c.fails("analyze_failures", map[string]any{"limit": 5000}, "INVALID_ARGUMENTS")
}
