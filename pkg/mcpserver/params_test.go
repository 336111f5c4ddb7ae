package mcpserver_test

import (
	"encoding/json"
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

// TestPlanCaptureNumericParameters: JSON numbers (and booleans) are
// parameter values too, as agents send them (issue 14: "values must be
// strings" refused {"count": 25}); they are checked like text values.
func TestPlanCaptureNumericParameters(t *testing.T) {
	dir := captureProject(t, `schema_version = 1
[workloads.count]
argv = ["/bin/true", "--count={count}", "{ratio}", "{fast}"]
timeout_seconds = 10
[workloads.count.parameters]
count = {min = 1, max = 50}
ratio = {min = 0.1, max = 0.9, default = 0.5}
fast = [false, true]
`, "count")
	c := connect(t, dir, nil)
	var p struct {
		Plan struct {
			Workload struct {
				Parameters map[string]string `json:"parameters"`
			} `json:"workload"`
		} `json:"plan"`
	}
	c.ok("plan_capture", map[string]any{"adapter": "process", "workload": "count", "parameters": map[string]any{"count": 25, "ratio": 0.25, "fast": true}}, &p)
	if got := p.Plan.Workload.Parameters; got["count"] != "25" || got["ratio"] != "0.25" || got["fast"] != "true" {
		t.Fatalf("plan parameters %v", got)
	}
	for _, tt := range []struct {
		value any
		want  string
	}{{51, "outside the range [1, 50]"}, {2.5, "not an integer"}, {json.Number("90071992547409930"), "outside the range"}} {
		env := c.fails("plan_capture", map[string]any{"adapter": "process", "workload": "count", "parameters": map[string]any{"count": tt.value}}, "INVALID_ARGUMENTS")
		if !strings.Contains(env.Error.Message, tt.want) || env.Error.Details["parameter"] != "count" {
			t.Errorf("count=%v: %+v, want %q", tt.value, env.Error, tt.want)
		}
	}
	// An object is no parameter value: refused by the input schema.
	c.fails("plan_capture", map[string]any{"adapter": "process", "workload": "count", "parameters": map[string]any{"count": map[string]any{}}}, "INVALID_ARGUMENTS")
}
