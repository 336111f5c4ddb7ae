package mcpserver_test

import (
	"strings"
	"testing"
)

// TestPlanCaptureRangeParameters: plan_capture's text values select
// numbers inside a declared range, rendered canonically, and a value
// outside it, or not an integer, is refused naming parameter and range.
func TestPlanCaptureRangeParameters(t *testing.T) {
	dir := captureProject(t, `schema_version = 1
[workloads.count]
argv = ["/bin/true", "--count={count}", "{ratio}"]
timeout_seconds = 10
[workloads.count.parameters]
count = {min = 1, max = 50}
ratio = {min = 0.1, max = 0.9, default = 0.5}
`, "count")
	c := connect(t, dir, nil)
	var p struct {
		Plan struct {
			Workload struct {
				Parameters map[string]string `json:"parameters"`
				Approval   string            `json:"approval"`
			} `json:"workload"`
		} `json:"plan"`
	}
	c.ok("plan_capture", map[string]any{"adapter": "process", "workload": "count", "parameters": map[string]any{"count": "2.5e1", "ratio": "0.250"}}, &p)
	if got := p.Plan.Workload.Parameters; got["count"] != "25" || got["ratio"] != "0.25" || p.Plan.Workload.Approval != "approved" {
		t.Fatalf("plan parameters %v (%s)", got, p.Plan.Workload.Approval)
	}
	for value, want := range map[string]string{"51": `"51" is outside the range [1, 50]`, "2.5": `"2.5" is not an integer (range [1, 50])`, "x": `"x" is not a number`} {
		env := c.fails("plan_capture", map[string]any{"adapter": "process", "workload": "count", "parameters": map[string]any{"count": value}}, "INVALID_ARGUMENTS")
		if !strings.Contains(env.Error.Message, want) || env.Error.Details["parameter"] != "count" || env.Error.Details["max"] != "50" {
			t.Errorf("count=%s: %+v, want %q", value, env.Error, want)
		}
	}
}
