package mcpserver_test

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestAnalyzeDiff: over MCP, a profile diff is the same model as
// `flameox analyze diff --json`, read-only, ranked and bounded.
func TestAnalyzeDiff(t *testing.T) {
	dir := project(t)
	files := map[string]string{
		"base.folded": "main;run;parse 50\nmain;run;compute 100\nmain;run;oldPath 20\n",
		"cand.folded": "main;run;parse 20\nmain;run;compute 130\nmain;run;newPath 5\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c := connect(t, dir, nil)
	ids := map[string]string{}
	for _, name := range []string{"base.folded", "cand.folded"} {
		var imp struct {
			Run struct {
				RunID string `json:"run_id"`
			} `json:"run"`
		}
		c.ok("import_artifact", map[string]any{"path": name}, &imp)
		ids[name] = imp.Run.RunID
	}
	args := map[string]any{"base": ids["base.folded"], "candidate": ids["cand.folded"]}
	got := mcpResult(t, c, "analyze_diff", args)
	want := porcelainJSON(t, dir, "analyze", "diff", ids["base.folded"], ids["cand.folded"], "--limit", "10")
	// Next steps name CLI commands there and tools here.
	tools := got.(map[string]any)["next_tools"]
	for _, m := range []any{got, want} {
		delete(m.(map[string]any), "next_steps")
		delete(m.(map[string]any), "next_tools")
	}
	if tools == nil {
		t.Fatal("no next tools")
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("analyze_diff differs from flameox analyze diff --json\nMCP: %v\nCLI: %v", got, want)
	}
	res := got.(map[string]any)
	rows, _ := res["rows"].([]any)
	if len(rows) != 6 || res["operation"] != "diff" || res["normalized"] != false {
		t.Fatalf("rows %d, result %v", len(rows), res)
	}
	first := rows[0].(map[string]any)
	if first["function"] != "compute" || first["self_delta"].(float64) != 30 || first["presence"] != "both" {
		t.Fatalf("first row: %v", first)
	}
	page := mcpResult(t, c, "analyze_diff", map[string]any{"base": ids["base.folded"], "candidate": ids["cand.folded"], "limit": 2}).(map[string]any)
	if page["truncated"] != true || page["cursor"] == "" || page["total"].(float64) != 6 {
		t.Fatalf("a page of 2: %v", page)
	}
}
