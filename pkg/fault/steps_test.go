package fault

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestStepsInEachInterface(t *testing.T) {
	step := Step{Command: "flameox analyze hotspots R --limit 100", Tool: "analyze_hotspots", Arguments: map[string]any{"input": "R", "limit": 100}}
	human := Step{Command: "flameox workload approve W"}
	cases := []struct {
		name         string
		cli, mcp     []string
		wantMCPTools []Call
		build        func() *Error
	}{
		{"tool step", []string{"List them with `flameox analyze hotspots R --limit 100`."},
			[]string{"List them with `analyze_hotspots {\"input\":\"R\",\"limit\":100}`."},
			[]Call{{Tool: "analyze_hotspots", Arguments: map[string]any{"input": "R", "limit": 100}}},
			func() *Error { return New(NotFound, "x").FixSteps("List them with %s.", step) }},
		{"human step and plain text", []string{"plain", "Ask a person to run `flameox workload approve W`."},
			[]string{"plain", "Ask a person to run `flameox workload approve W`."}, nil,
			func() *Error {
				return New(ExecutionRefused, "x").Fix("plain").FixSteps("Ask a person to run %s.", human)
			}},
	}
	for _, tc := range cases {
		e := tc.build()
		if !reflect.DeepEqual(e.Remediation, tc.cli) || e.NextTools != nil {
			t.Errorf("%s: CLI form %q %v", tc.name, e.Remediation, e.NextTools)
		}
		m := e.ForMCP()
		if !reflect.DeepEqual(m.Remediation, tc.mcp) || !reflect.DeepEqual(m.NextTools, tc.wantMCPTools) {
			t.Errorf("%s: MCP form %q %v", tc.name, m.Remediation, m.NextTools)
		}
		if !reflect.DeepEqual(e.Remediation, tc.cli) {
			t.Errorf("%s: ForMCP changed the original: %q", tc.name, e.Remediation)
		}
		m.UseMCP() // idempotent
		if len(m.NextTools) != len(tc.wantMCPTools) {
			t.Errorf("%s: UseMCP twice added calls: %v", tc.name, m.NextTools)
		}
	}
}

func TestNextInEachInterface(t *testing.T) {
	var n Next
	n.Then(Step{Command: "flameox stacks callers R F", Tool: "get_frame_callers", Arguments: map[string]any{"input": "R", "frame_id": "F"}})
	cli, _ := json.Marshal(n)
	if string(cli) != `{"next_steps":["flameox stacks callers R F"]}` {
		t.Fatalf("CLI form: %s", cli)
	}
	n.UseMCP()
	n.UseMCP()
	mcp, _ := json.Marshal(n)
	want := `{"next_steps":["get_frame_callers {\"frame_id\":\"F\",\"input\":\"R\"}"],"next_tools":[{"tool":"get_frame_callers","arguments":{"frame_id":"F","input":"R"}}]}`
	if string(mcp) != want {
		t.Fatalf("MCP form:\n%s\nwant\n%s", mcp, want)
	}
}
