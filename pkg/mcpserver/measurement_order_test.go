package mcpserver_test

import (
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"testing"
)

// TestMeasurementOrderOverMCP: query_measurements' first page comes in
// the same order as `flameox measurements query` (by subject, then unit in
// go test -bench order), not in the order DuckDB's hash aggregate happens
// to produce (issue 14), and every call returns the same page.
func TestMeasurementOrderOverMCP(t *testing.T) {
	dir := project(t)
	c := connect(t, dir, nil)
	b, err := os.ReadFile(filepath.Join("..", "adapter", "gotest", "testdata", "golang-perf__suffixarray.bench"))
	if err != nil {
		t.Skip(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "suffixarray.bench"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	env := c.call("import_artifact", map[string]any{"path": "suffixarray.bench"})
	if !env.OK {
		t.Skipf("this build does not import benchmark text: %+v", env.Error)
	}
	first := mcpResult(t, c, "query_measurements", nil)
	ms, _ := first.(map[string]any)["measurements"].([]any)
	if len(ms) < 2 {
		t.Fatalf("%d measurements", len(ms))
	}
	subjects := make([]string, len(ms))
	for i, m := range ms {
		subjects[i], _ = m.(map[string]any)["subject"].(string)
	}
	if !sort.StringsAreSorted(subjects) {
		t.Errorf("first page not by subject: %q", subjects)
	}
	if again := mcpResult(t, c, "query_measurements", nil); !reflect.DeepEqual(again, first) {
		t.Error("two calls returned different first pages")
	}
	if cli := porcelainJSON(t, dir, "measurements", "query", "--limit", "20"); !reflect.DeepEqual(cli, first) {
		t.Error("the MCP first page differs from the CLI's")
	}
}
