package mcpserver_test

import (
	"strings"
	"testing"
)

// TestArgumentErrorsReadable: an argument the input schema refuses comes
// back naming the argument, what it must be and what was sent, with a
// remediation, never the validator's raw text (issue 14: "100000/1 is
// greater than 1000.000000", "<invalid reflect.Value>" for null).
func TestArgumentErrorsReadable(t *testing.T) {
	c := connect(t, project(t), nil)
	for _, tt := range []struct {
		tool  string
		args  map[string]any
		field string
		msg   string // in the message
		fix   string // in the first remediation
	}{
		{"list_runs", map[string]any{"limit": 100000}, "limit", "argument limit must be at most 1000, not 100000", "from 1 to 1000"},
		{"list_runs", map[string]any{"limit": 0}, "limit", "must be at least 1, not 0", "or omit it for the default"},
		{"list_runs", map[string]any{"limit": nil}, "limit", "must be an integer, not null", "instead of sending null"},
		{"list_runs", map[string]any{"limit": "ten"}, "limit", "must be an integer, not a string", "an integer"},
		{"list_runs", map[string]any{"limit": 2.5}, "limit", "not the number 2.5", "an integer"},
		{"plan_capture", map[string]any{"adapter": "bash", "workload": "x"}, "adapter", `must be one of "`, "one of"},
		{"plan_capture", map[string]any{"adapter": "process"}, "workload", "missing required argument workload", "Call again with workload"},
		{"plan_capture", map[string]any{"adapter": "process", "workload": "x", "parameters": map[string]any{"n": []any{1}}}, "parameters.n",
			"argument parameters.n must be a string, a number or a boolean, not an array", "parameters.n"},
	} {
		env := c.fails(tt.tool, tt.args, "INVALID_ARGUMENTS")
		e := env.Error
		if !strings.Contains(e.Message, tt.msg) || e.Details["field"] != tt.field || len(e.Remediation) == 0 || !strings.Contains(e.Remediation[0], tt.fix) {
			t.Errorf("%s %v: %+v\nwant message %q, field %q, fix %q", tt.tool, tt.args, e, tt.msg, tt.field, tt.fix)
		}
		for _, raw := range []string{"reflect.Value", "/1 is greater", "validating"} {
			if strings.Contains(e.Message, raw) || strings.Contains(env.text, raw) {
				t.Errorf("%s %v: validator text %q in %q", tt.tool, tt.args, raw, e.Message)
			}
		}
	}
}
