package mcpserver_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// TestAnalysisFiltersOverMCP: analyze_hotspots takes focus and ignore,
// and the frame tools a regexp of function names, with the results of
// the same flameox commands; get_native_viewer_plan takes a run id and
// names the URL pprof will serve (a real port).
func TestAnalysisFiltersOverMCP(t *testing.T) {
	dir := project(t)
	c := connect(t, dir, nil)
	runID, _ := c.importedRun(copyTestdata(t, dir, "google-pprof__sample.cpu.pb.gz"))
	for _, tc := range []struct {
		tool string
		args map[string]any
		cli  []string
	}{
		{"analyze_hotspots", map[string]any{"input": runID, "focus": "runtime\\.", "ignore": "evacuate"},
			[]string{"analyze", "hotspots", runID, "--limit", "10", "--focus", "runtime\\.", "--ignore", "evacuate"}},
		{"get_frame_callers", map[string]any{"input": runID, "frame_id": "runtime\\.map"},
			[]string{"stacks", "callers", runID, "runtime\\.map", "--limit", "10"}},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			got, want := mcpResult(t, c, tc.tool, tc.args), porcelainJSON(t, dir, tc.cli...)
			nextForms(t, tc.tool, got, want)
			if !reflect.DeepEqual(got, want) {
				g, _ := json.MarshalIndent(got, "", " ")
				w, _ := json.MarshalIndent(want, "", " ")
				t.Fatalf("MCP and CLI differ\nMCP: %s\nCLI: %s", g, w)
			}
			b, _ := json.Marshal(got)
			if tc.tool == "analyze_hotspots" && !strings.Contains(string(b), `"focus":"runtime\\.","ignore":"evacuate"`) {
				t.Fatalf("the filters are not echoed: %s", b)
			}
			if tc.tool == "get_frame_callers" && !strings.Contains(string(b), `"matches":[`) {
				t.Fatalf("the regexp's matches are not listed: %s", b)
			}
		})
	}
	plan := mcpResult(t, c, "get_native_viewer_plan", map[string]any{"artifact_id": runID}).(map[string]any)
	if u, _ := plan["url"].(string); !strings.HasPrefix(u, "http://localhost:") || strings.HasSuffix(u, ":0/") {
		t.Fatalf("viewer plan: %v", plan)
	}
}
