package mcpserver_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNoAdministrativeTools: repair, gc, purge (and restoring or emptying
// trash) are CLI-only (SPEC §8): no MCP tool may offer them, under any
// name that says so, and the one integrity tool reads.
func TestNoAdministrativeTools(t *testing.T) {
	c := connect(t, project(t), nil)
	tools, err := c.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var validate bool
	for _, tool := range tools.Tools {
		for _, word := range []string{"repair", "gc", "garbage", "purge", "trash", "quarantine", "collect"} {
			for _, part := range strings.Split(tool.Name, "_") {
				if part == word {
					t.Errorf("MCP tool %s offers %s, which is CLI-only", tool.Name, word)
				}
			}
		}
		if tool.Name == "validate_workspace" {
			validate = true
			if a := tool.Annotations; a == nil || !a.ReadOnlyHint || !a.IdempotentHint || a.OpenWorldHint == nil || *a.OpenWorldHint {
				t.Errorf("validate_workspace is not read-only, idempotent and closed-world: %+v", a)
			}
		}
	}
	if !validate {
		t.Error("no validate_workspace tool")
	}
}

// TestValidateWorkspace: standard (default) and quick validation over MCP,
// the result model of `flameox validate --json`; level full is CLI-only
// and refused, as is an unknown argument.
func TestValidateWorkspace(t *testing.T) {
	dir := project(t)
	c := connect(t, dir, nil)
	c.importedRun(copyTestdata(t, dir, "google-pprof__sample.cpu.pb.gz"))
	type result struct {
		Level    string `json:"level"`
		Valid    bool   `json:"valid"`
		Problems []struct {
			Code string `json:"code"`
			File string `json:"file"`
		} `json:"problems"`
	}
	var res result
	c.ok("validate_workspace", nil, &res)
	if !res.Valid || len(res.Problems) != 0 || res.Level != "standard" {
		t.Errorf("intact: %+v", res)
	}
	c.fails("validate_workspace", map[string]any{"level": "full"}, "INVALID_ARGUMENTS")
	c.fails("validate_workspace", map[string]any{"deep": true}, "INVALID_ARGUMENTS")
	res = result{}
	c.ok("validate_workspace", map[string]any{"level": "quick"}, &res)
	if !res.Valid || res.Level != "quick" {
		t.Errorf("quick: %+v", res)
	}
	// A deleted Parquet file: valid:false, the file named.
	files, _ := filepath.Glob(filepath.Join(dir, ".diagnostics", "evidence", "runs", "generation=*", "*.parquet"))
	if len(files) == 0 {
		t.Fatal("no runs file")
	}
	if err := os.Remove(files[0]); err != nil {
		t.Fatal(err)
	}
	res = result{}
	c.ok("validate_workspace", nil, &res)
	if res.Valid || len(res.Problems) == 0 || res.Problems[0].Code != "EVIDENCE_FILE_MISSING" || !strings.HasPrefix(res.Problems[0].File, "evidence/runs/") {
		t.Errorf("after deleting %s: %+v", files[0], res)
	}
}
