package securitytest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// mcpSession runs `flameox mcp serve` in dir with initialize and then one
// tools/call per call, and returns the answers by call index.
func mcpSession(t *testing.T, dir string, calls []mcpCall) map[int]string {
	t.Helper()
	var in strings.Builder
	in.WriteString(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"securitytest","version":"1"}}}` + "\n")
	in.WriteString(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")
	for i, c := range calls {
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": i + 1, "method": "tools/call", "params": map[string]any{"name": c.tool, "arguments": c.args}})
		in.Write(append(b, '\n'))
	}
	out := mustOK(t, "mcp serve", cmdline{tool: "flameox", dir: dir, args: []string{"mcp", "serve"}, stdin: in.String()}.run(t)).stdout
	answers := map[int]string{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var msg struct {
			ID int `json:"id"`
		}
		if err := json.Unmarshal([]byte(line), &msg); err != nil {
			t.Fatalf("mcp serve wrote a line that is not JSON: %.300s", line)
		}
		if msg.ID > 0 {
			answers[msg.ID-1] = line
		}
	}
	return answers
}

type mcpCall struct {
	tool string
	args map[string]any
}

var errorCode = regexp.MustCompile(`\\?"code\\?":\\?"([A-Z_]+)\\?"`)

// TestMCPTraversal gives the MCP tools that take an id or a path what
// climbs out of the workspace or the project: each answer is a tool error
// (isError) with a structured code, nothing is imported, and no canary's
// content comes back.
func TestMCPTraversal(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "p")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	mustOK(t, "init", fx(t, dir, "init"))
	mustOK(t, "import", fx(t, dir, "import", fixture(t, "google-pprof__sample.cpu.pb.gz")))
	outer := filepath.Join(base, "x")
	plantCanaries(t, filepath.Join(dir, "x"), outer)
	if err := os.Symlink(filepath.Join(outer, "x"), filepath.Join(dir, "link.txt")); err != nil {
		t.Fatal(err)
	}
	calls := []mcpCall{
		{"get_run", map[string]any{"run_id": "../../x"}},
		{"get_run_output", map[string]any{"run_id": "../../x"}},
		{"get_artifact", map[string]any{"artifact_id": "sha256:../.."}},
		{"get_artifact", map[string]any{"artifact_id": "sha256:../../../x"}},
		{"get_evidence", map[string]any{"type": "run", "id": "../../x"}},
		{"get_evidence", map[string]any{"type": "generation", "id": "../../x"}},
		{"get_evidence", map[string]any{"type": "artifact", "id": "sha256:../.."}},
		{"analyze_hotspots", map[string]any{"input": "../../x"}},
		{"analyze_hotspots", map[string]any{"input": outer}},
		{"get_trace_window", map[string]any{"input": "../../x"}},
		{"get_native_viewer_plan", map[string]any{"artifact_id": "sha256:../.."}},
		{"import_artifact", map[string]any{"path": "../x/x"}},
		{"import_artifact", map[string]any{"path": filepath.Join(outer, "x")}},
		{"import_artifact", map[string]any{"path": "link.txt"}},
		{"import_artifact", map[string]any{"path": ".diagnostics/workspace.json"}},
		{"get_workload", map[string]any{"name": "../../x"}},
	}
	answers := mcpSession(t, dir, calls)
	allowed := map[string]bool{"INVALID_ARGUMENTS": true, "NOT_FOUND": true, "EXECUTION_REFUSED": true}
	for i, c := range calls {
		line, ok := answers[i]
		if !ok {
			t.Errorf("%s %v: no answer", c.tool, c.args)
			continue
		}
		var msg struct {
			Result *struct {
				IsError bool `json:"isError"`
			} `json:"result"`
			Error *struct{} `json:"error"`
		}
		json.Unmarshal([]byte(line), &msg)
		if msg.Error == nil && (msg.Result == nil || !msg.Result.IsError) {
			t.Errorf("%s %v succeeded: %.500s", c.tool, c.args, line)
			continue
		}
		if m := errorCode.FindStringSubmatch(line); msg.Error == nil && (m == nil || !allowed[m[1]]) {
			t.Errorf("%s %v: not a structured refusal: %.500s", c.tool, c.args, line)
		}
		if strings.Contains(line, canaryMark) {
			t.Errorf("%s %v: the answer holds a canary's content", c.tool, c.args)
		}
	}
	if out := mustOK(t, "runs list", fx(t, dir, "--json", "runs", "list")).stdout; !strings.Contains(out, `"total": 1`) {
		t.Errorf("a refused MCP import left a run: %s", out)
	}
}
