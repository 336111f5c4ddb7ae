package mcpserver_test

import (
	"context"
	"encoding/json"
	"os"
	"sort"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// resultBytes is the size of a tool's structured content on the wire.
func resultBytes(t *testing.T, c *client, name string, args map[string]any) int {
	t.Helper()
	res, err := c.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil || res.IsError {
		t.Fatalf("%s: %v %+v", name, err, res)
	}
	b, _ := json.Marshal(res.StructuredContent)
	return len(b)
}

// TestDefaultResultSizes: default results stay small enough for hosts
// that cap tool output (Claude Code warns from about 10k tokens).
func TestDefaultResultSizes(t *testing.T) {
	dir := project(t)
	c := connect(t, dir, nil)
	runID, artifactID := c.importedRun(copyTestdata(t, dir, "google-pprof__large.cpu.pb.gz"))
	var hot struct {
		Rows []struct {
			FrameID string `json:"frame_id"`
		} `json:"rows"`
		Truncated bool `json:"truncated"`
	}
	c.ok("analyze_hotspots", map[string]any{"input": runID}, &hot)
	if len(hot.Rows) != 10 || !hot.Truncated {
		t.Fatalf("default hotspots: %d rows, truncated %v", len(hot.Rows), hot.Truncated)
	}
	frame := map[string]any{"input": runID, "frame_id": hot.Rows[0].FrameID}
	for _, tc := range []struct {
		name string
		args map[string]any
	}{
		{"workspace_status", nil}, {"list_capabilities", nil}, {"list_runs", nil}, {"list_artifacts", nil},
		{"get_run", map[string]any{"run_id": runID}}, {"get_artifact", map[string]any{"artifact_id": artifactID}},
		{"analyze_hotspots", map[string]any{"input": runID}}, {"get_frame_callers", frame},
		{"get_frame_callees", frame}, {"get_stack_examples", frame},
	} {
		if n := resultBytes(t, c, tc.name, tc.args); n > 8<<10 {
			t.Errorf("%s: default result is %d bytes (> 8 KiB)", tc.name, n)
		} else {
			t.Logf("%-20s %5d bytes", tc.name, n)
		}
	}
}

// TestMeasureRoundTrip measures tools/call round trips over stdio with the
// go-sdk client (median of 100). Run with FLAMEOX_MCP_MEASURE=1 -v.
func TestMeasureRoundTrip(t *testing.T) {
	if os.Getenv("FLAMEOX_MCP_MEASURE") != "1" {
		t.Skip("set FLAMEOX_MCP_MEASURE=1 to measure")
	}
	dir := project(t)
	c := connect(t, dir, nil)
	runID, _ := c.importedRun(copyTestdata(t, dir, "google-pprof__large.cpu.pb.gz"))
	for _, tc := range []struct {
		name string
		args map[string]any
	}{{"workspace_status", nil}, {"analyze_hotspots", map[string]any{"input": runID}}} {
		size := resultBytes(t, c, tc.name, tc.args) // also warms up
		times := make([]time.Duration, 100)
		for i := range times {
			start := time.Now()
			if _, err := c.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tc.name, Arguments: tc.args}); err != nil {
				t.Fatal(err)
			}
			times[i] = time.Since(start)
		}
		sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
		t.Logf("%s: median %s (p10 %s, p90 %s) over 100 calls; default result %d bytes",
			tc.name, times[50].Round(10*time.Microsecond), times[10].Round(10*time.Microsecond), times[90].Round(10*time.Microsecond), size)
	}
}
