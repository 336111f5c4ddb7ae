package mcpserver_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestPyTorchTool: analyze_pytorch is flameox analyze pytorch --json over
// MCP, value for value, and a trace that is not PyTorch's is refused.
func TestPyTorchTool(t *testing.T) {
	dir := project(t)
	for name, data := range map[string][]byte{"browser.json": []byte(`{"traceEvents":[{"ph":"X","cat":"blink","name":"Layout","pid":1,"tid":1,"ts":0,"dur":5}]}`)} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(filepath.Join("..", "adapter", "trace", "testdata", "hta__mi250_rocm6.2_kineto.json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "rocm.json.gz"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	c := connect(t, dir, nil)
	_, art := c.importedRun("rocm.json.gz")
	got := mcpResult(t, c, "analyze_pytorch", map[string]any{"input": art, "limit": 5})
	want := porcelainJSON(t, dir, "analyze", "pytorch", art, "--limit", "5")
	nextForms(t, "analyze_pytorch", got, want)
	delete(got.(map[string]any), "next_tools")
	delete(got.(map[string]any), "next_steps")
	delete(want.(map[string]any), "next_steps")
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("analyze_pytorch differs from flameox analyze pytorch\nMCP: %v\nCLI: %v", got, want)
	}
	if ops, _ := got.(map[string]any)["operators"].([]any); len(ops) != 5 {
		t.Fatalf("operators %v", ops)
	}
	_, br := c.importedRun("browser.json")
	c.fails("analyze_pytorch", map[string]any{"input": br}, "COMPARISON_INVALID")
	if !strings.HasPrefix(art, "sha256:") {
		t.Fatal(art)
	}
}
