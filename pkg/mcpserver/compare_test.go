package mcpserver_test

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestCompareRuns: over MCP, the benchstat view of two runs is the same
// model as `flameox compare RUN_A RUN_B --json`, bounded like every list,
// with a decision and the validity on every row.
func TestCompareRuns(t *testing.T) {
	dir := project(t)
	var ids []string
	c := connect(t, dir, nil)
	for _, name := range []string{"golang-perf__crc-old.txt", "golang-perf__crc-new.txt"} {
		b, err := os.ReadFile(filepath.Join("..", "compare", "testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
		var imp struct {
			Run struct {
				RunID string `json:"run_id"`
			} `json:"run"`
		}
		c.ok("import_artifact", map[string]any{"path": name, "kind": "benchmark_samples"}, &imp)
		ids = append(ids, imp.Run.RunID)
	}
	got := mcpResult(t, c, "compare_runs", map[string]any{"run_a": ids[0], "run_b": ids[1], "ignore": "note", "filter": "/poly:IEEE"})
	want := porcelainJSON(t, dir, "compare", ids[0], ids[1], "--ignore", "note", "--filter", "/poly:IEEE", "--limit", "20")
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("compare_runs differs from flameox compare --json\nMCP: %v\nCLI: %v", got, want)
	}
	res := got.(map[string]any)
	rows, _ := res["rows"].([]any)
	if len(rows) != 20 || res["truncated"] != true || res["total"].(float64) != 24 {
		t.Fatalf("want a first page of 20 of 24 rows: %d rows, truncated %v, total %v", len(rows), res["truncated"], res["total"])
	}
	decisions := map[string]int{}
	for _, r := range rows {
		row := r.(map[string]any)
		decisions[row["decision"].(string)]++
		if row["validity"] != "exploratory" {
			t.Fatalf("row validity %v", row["validity"])
		}
	}
	if decisions["meaningful_improvement"] == 0 || decisions["meaningful_regression"] == 0 {
		t.Fatalf("decisions %v: crc-new is faster at large sizes and slower at size 40", decisions)
	}
	if v := res["validity"].(map[string]any); v["status"] != "exploratory" {
		t.Fatalf("validity %v", v)
	}
}
