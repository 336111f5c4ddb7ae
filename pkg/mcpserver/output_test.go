package mcpserver_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/flameox/flameox/pkg/capture"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const failOutTOML = `schema_version = 1
[workloads.fail]
argv = ["/bin/sh", "-c", "i=0; while [ $i -lt 100 ]; do echo \"out $i\"; i=$((i+1)); done; printf 'bad flag \\033]0;x\\007\\n' >&2; exit 2"]
timeout_seconds = 10
`

// TestFailedCaptureOutput: over MCP a failed capture's result names the
// failure class with escaped tails, and get_run_output (read-only) pages
// the stored stream with a bounded budget.
func TestFailedCaptureOutput(t *testing.T) {
	dir := captureProject(t, failOutTOML, "fail")
	c := connect(t, dir, nil)
	p := c.plan("fail")
	env := c.call("execute_capture_plan", map[string]any{"plan_token": p.PlanToken})
	var res capture.Result
	if env.OK || json.Unmarshal(env.Result, &res) != nil || res.Failure == nil || res.Run == nil {
		t.Fatalf("a failed capture: %s", env.raw)
	}
	f := res.Failure
	if f.Class != "process_failed" || f.Stderr == nil || f.Stderr.Text != "bad flag \\x1b]0;x\\a\n" || f.Stdout == nil || f.Stdout.ArtifactID == "" {
		t.Fatalf("failure %+v, stderr %+v", f, f.Stderr)
	}
	if env.Error.Details["failure_class"] != "process_failed" || env.Error.RunID != res.Run.RunID {
		t.Errorf("error %+v", env.Error)
	}
	var page capture.OutputPage
	c.ok("get_run_output", map[string]any{"run_id": res.Run.RunID, "max_bytes": 50}, &page)
	if page.Offset != 0 || page.NextOffset != 50 || !page.Truncated || page.Total != f.Stdout.Bytes || !strings.HasPrefix(page.Text, "out 0\nout 1\n") {
		t.Fatalf("first page %+v", page)
	}
	c.ok("get_run_output", map[string]any{"run_id": res.Run.RunID, "offset": page.NextOffset, "max_bytes": capture.MaxOutputPage}, &page)
	if page.Truncated || page.NextOffset != page.Total || !strings.HasSuffix(page.Text, "out 99\n") {
		t.Fatalf("last page %+v", page)
	}
	c.fails("get_run_output", map[string]any{"run_id": res.Run.RunID, "max_bytes": capture.MaxOutputPage + 1}, "INVALID_ARGUMENTS")
	c.fails("get_run_output", map[string]any{"run_id": res.Run.RunID, "stream": "env"}, "INVALID_ARGUMENTS")
	tools, err := c.cs.ListTools(t.Context(), &mcp.ListToolsParams{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range tools.Tools {
		if tl.Name == "get_run_output" && (tl.Annotations == nil || !tl.Annotations.ReadOnlyHint) {
			t.Errorf("get_run_output is not read-only: %+v", tl.Annotations)
		}
	}
}
