package mcpserver_test

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// toolsListBudget is the most bytes tools/list may take on the wire with
// today's tools (docs/mcp.md, "Schema budget"): hosts load every tool
// definition into the model's context, and the TypeScript SDK compiles
// every output schema when it lists tools.
const toolsListBudget = 64 << 10

// TestToolsListBudget: the raw tools/list response a host reads stays
// within the budget.
func TestToolsListBudget(t *testing.T) {
	msgs := rawSession(t, project(t), []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
	}, 2)
	for _, m := range msgs {
		if id, _ := m["id"].(float64); id == 2 {
			n := len(m["_raw"].(string))
			tools := m["result"].(map[string]any)["tools"].([]any)
			t.Logf("tools/list: %d bytes for %d tools", n, len(tools))
			if n > toolsListBudget {
				t.Fatalf("tools/list is %d bytes, over the %d-byte budget", n, toolsListBudget)
			}
			return
		}
	}
	t.Fatal("no tools/list response")
}

// TestReadingToolsAreReadOnly: every tool that reads (get_, list_,
// analyze_, query_, summarize_) says so, so hosts never ask for approval to read;
// recording an analysis is its own, additive tool.
func TestReadingToolsAreReadOnly(t *testing.T) {
	c := connect(t, project(t), nil)
	tools, err := c.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, tool := range tools.Tools {
		seen[tool.Name] = true
		for _, prefix := range []string{"get_", "list_", "analyze_", "query_", "summarize_"} {
			if strings.HasPrefix(tool.Name, prefix) {
				if a := tool.Annotations; a == nil || !a.ReadOnlyHint || !a.IdempotentHint {
					t.Errorf("%s reads but is not annotated readOnlyHint and idempotentHint: %+v", tool.Name, a)
				}
			}
		}
		if tool.Name == "record_analysis" && tool.Annotations.ReadOnlyHint {
			t.Errorf("record_analysis writes the corpus but says it is read-only")
		}
	}
	if !seen["record_analysis"] {
		t.Error("no record_analysis tool")
	}
}

// TestTextCarriesTheResult: the text content is a summary line, then the
// envelope as JSON equal to the structured content (function names
// included), for hosts that forward only content[].
func TestTextCarriesTheResult(t *testing.T) {
	dir := project(t)
	c := connect(t, dir, nil)
	runID, _ := c.importedRun(copyTestdata(t, dir, "google-pprof__sample.cpu.pb.gz"))
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"analyze_hotspots", map[string]any{"input": runID}},
		{"get_run", map[string]any{"run_id": "00000000-0000-4000-8000-000000000000"}},
		{"workspace_status", map[string]any{"bogus": 1}},
	} {
		env := c.call(tc.tool, tc.args)
		summary, js, ok := strings.Cut(env.text, "\n")
		if !ok || summary == "" || strings.HasPrefix(summary, "{") {
			t.Fatalf("%s: text is not a summary line then JSON: %q", tc.tool, env.text)
		}
		var fromText, structured any
		if err := json.Unmarshal([]byte(js), &fromText); err != nil {
			t.Fatalf("%s: the text's JSON: %v\n%s", tc.tool, err, js)
		}
		json.Unmarshal(env.raw, &structured)
		if !reflect.DeepEqual(fromText, structured) {
			t.Fatalf("%s: the text's JSON differs from the structured content\ntext: %s\nstructured: %s", tc.tool, js, env.raw)
		}
	}
	env := c.ok("analyze_hotspots", map[string]any{"input": runID}, nil)
	var hot struct {
		Rows []struct {
			Function string `json:"function"`
		} `json:"rows"`
	}
	json.Unmarshal(env.Result, &hot)
	if len(hot.Rows) == 0 || hot.Rows[0].Function == "" || !strings.Contains(env.text, hot.Rows[0].Function) {
		t.Fatalf("the text does not name the top function: %q", env.text)
	}
}

// TestNextStepsNameTools: over MCP, next steps and remediations name the
// tool and its arguments (and list the calls), never a shell command; the
// call they name works.
func TestNextStepsNameTools(t *testing.T) {
	dir := project(t)
	c := connect(t, dir, nil)
	runID, _ := c.importedRun(copyTestdata(t, dir, "google-pprof__sample.cpu.pb.gz"))
	type call struct {
		Tool      string         `json:"tool"`
		Arguments map[string]any `json:"arguments"`
	}
	var hot struct {
		NextSteps []string `json:"next_steps"`
		NextTools []call   `json:"next_tools"`
	}
	c.ok("analyze_hotspots", map[string]any{"input": runID}, &hot)
	if len(hot.NextTools) != 3 || hot.NextTools[0].Tool != "get_frame_callers" || hot.NextTools[0].Arguments["input"] != runID {
		t.Fatalf("next_tools: %+v", hot.NextTools)
	}
	for _, s := range hot.NextSteps {
		if strings.Contains(s, "flameox ") {
			t.Errorf("next step over MCP names a command: %q", s)
		}
	}
	for _, n := range hot.NextTools {
		c.ok(n.Tool, n.Arguments, nil)
	}

	env := c.fails("get_frame_callers", map[string]any{"input": runID, "frame_id": "^no_such_function$"}, "NOT_FOUND")
	var e struct {
		Remediation []string `json:"remediation"`
		NextTools   []call   `json:"next_tools"`
	}
	var raw struct {
		Error json.RawMessage `json:"error"`
	}
	json.Unmarshal(env.raw, &raw)
	json.Unmarshal(raw.Error, &e)
	if len(e.Remediation) == 0 || !strings.Contains(e.Remediation[0], "`analyze_hotspots {") || strings.Contains(e.Remediation[0], "flameox ") {
		t.Fatalf("remediation over MCP: %q", e.Remediation)
	}
	if len(e.NextTools) != 1 || e.NextTools[0].Tool != "analyze_hotspots" {
		t.Fatalf("error next_tools: %+v", e.NextTools)
	}
	c.ok(e.NextTools[0].Tool, e.NextTools[0].Arguments, nil)

	// The CLI names the commands.
	cli := porcelainJSON(t, dir, "analyze", "hotspots", runID).(map[string]any)
	steps := cli["next_steps"].([]any)
	if len(steps) != 3 || !strings.HasPrefix(steps[0].(string), "flameox stacks callers "+runID) || cli["next_tools"] != nil {
		t.Fatalf("CLI next steps: %v / %v", steps, cli["next_tools"])
	}
}

// TestRecordAnalysis: record_analysis records a recipe with the arguments
// of its analysis tool; analyze_hotspots no longer records.
func TestRecordAnalysis(t *testing.T) {
	dir := project(t)
	c := connect(t, dir, nil)
	runID, _ := c.importedRun(copyTestdata(t, dir, "google-pprof__sample.cpu.pb.gz"))
	c.fails("analyze_hotspots", map[string]any{"input": runID, "record": true}, "INVALID_ARGUMENTS")

	var rec struct {
		Recipe     string `json:"recipe"`
		Operation  string `json:"operation"`
		AnalysisID string `json:"analysis_id"`
		Commit     string `json:"recorded_in_commit_id"`
		NextTools  []struct {
			Tool      string         `json:"tool"`
			Arguments map[string]any `json:"arguments"`
		} `json:"next_tools"`
	}
	c.ok("record_analysis", map[string]any{"recipe": "hotspots", "arguments": map[string]any{"input": runID, "limit": 5}}, &rec)
	if rec.AnalysisID == "" || rec.Commit == "" || rec.Recipe != "hotspots" || rec.Operation == "" || len(rec.NextTools) != 1 {
		t.Fatalf("record_analysis: %+v", rec)
	}
	var ev struct {
		RefID string `json:"ref_id"`
	}
	c.ok(rec.NextTools[0].Tool, rec.NextTools[0].Arguments, &ev)
	if ev.RefID != rec.AnalysisID {
		t.Fatalf("get_evidence of the recorded analysis: %+v", ev)
	}

	env := c.fails("record_analysis", map[string]any{"recipe": "hotspots", "arguments": map[string]any{"input": runID, "bogus": 1}}, "INVALID_ARGUMENTS")
	if env.Error.Details["unknown_fields"] != "bogus" {
		t.Fatalf("unknown recipe argument not named: %+v", env.Error)
	}
	c.fails("record_analysis", map[string]any{"recipe": "flamegraph", "arguments": map[string]any{}}, "INVALID_ARGUMENTS")
}
