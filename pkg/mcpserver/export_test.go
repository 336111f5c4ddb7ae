package mcpserver_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExportProfileTool: export_profile writes the file inside the
// project and returns its path; outside the project, or inside
// .diagnostics, it is refused.
func TestExportProfileTool(t *testing.T) {
	dir := project(t)
	b, err := os.ReadFile(filepath.Join("..", "profile", "testdata", "google-pprof__sample.cpu.pb.gz"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "cpu.pb.gz"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	c := connect(t, dir, nil)
	run, _ := c.importedRun("cpu.pb.gz")
	got := mcpResult(t, c, "export_profile", map[string]any{"input": run, "format": "collapsed", "output": "cpu.collapsed"}).(map[string]any)
	if got["path"] != filepath.Join(dir, "cpu.collapsed") || got["format"] != "collapsed" {
		t.Fatalf("%v", got)
	}
	text, err := os.ReadFile(filepath.Join(dir, "cpu.collapsed"))
	if err != nil || !strings.Contains(string(text), ";") {
		t.Fatalf("%v %.200s", err, text)
	}
	c.fails("export_profile", map[string]any{"input": run, "format": "pprof", "output": "../escape.pb.gz"}, "INVALID_ARGUMENTS")
	c.fails("export_profile", map[string]any{"input": run, "format": "pprof", "output": ".diagnostics/x.pb.gz"}, "INVALID_ARGUMENTS")
	if _, err := os.Stat(filepath.Join(filepath.Dir(dir), "escape.pb.gz")); err == nil {
		t.Fatal("wrote outside the project")
	}
}
