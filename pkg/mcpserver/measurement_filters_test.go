package mcpserver_test

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestMeasurementFiltersOverMCP: query_measurements takes the same
// subject, workload and parameter filters as `flameox measurements
// query`, with the same result.
func TestMeasurementFiltersOverMCP(t *testing.T) {
	dir := project(t)
	c := connect(t, dir, nil)
	c.importedRun(copyTestdata(t, dir, "google-pprof__sample.cpu.pb.gz"))
	all := mcpResult(t, c, "query_measurements", map[string]any{"limit": 1000}).(map[string]any)
	ms, _ := all["measurements"].([]any)
	if len(ms) == 0 {
		t.Fatal("the imported profile has no measurements")
	}
	subject := ""
	for _, m := range ms {
		if s, _ := m.(map[string]any)["subject"].(string); s != "" && subject == "" {
			subject = s
		}
	}
	if subject == "" {
		t.Fatalf("no measurement has a subject: %v", ms)
	}
	for _, tc := range []struct {
		name string
		args map[string]any
		cli  []string
		rows func(n int) bool
	}{
		{"subject", map[string]any{"subject": subject}, []string{"--subject", subject}, func(n int) bool { return n > 0 && n <= len(ms) }},
		{"parameter", map[string]any{"parameters": map[string]string{"n": "1"}}, []string{"--parameter", "n=1"}, func(n int) bool { return n == 0 }},
		{"workload", map[string]any{"workload": "bench"}, []string{"--workload", "bench"}, func(n int) bool { return n == 0 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := mcpResult(t, c, "query_measurements", tc.args)
			want := porcelainJSON(t, dir, append([]string{"measurements", "query", "--limit", "20"}, tc.cli...)...)
			if !reflect.DeepEqual(got, want) {
				g, _ := json.MarshalIndent(got, "", " ")
				w, _ := json.MarshalIndent(want, "", " ")
				t.Fatalf("MCP and CLI differ\nMCP: %s\nCLI: %s", g, w)
			}
			n := len(got.(map[string]any)["measurements"].([]any))
			if !tc.rows(n) {
				t.Fatalf("%d rows", n)
			}
		})
	}
}
