package mcpserver

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/flameox/flameox/pkg/fault"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Prompts are the common investigations as tool sequences, for hosts that
// offer them as slash commands. Each renders to at most 1 KiB (prompts_test.go holds them to it);
// the arguments are inserted as JSON strings (clipped), never as
// instructions. They name only tools that exist: comparing two captures
// reads both with analyze_hotspots until a comparison tool lands.

type prompt struct {
	p    *mcp.Prompt
	text func(args map[string]string) string
}

var prompts = []prompt{
	{&mcp.Prompt{Name: "find_hotspot", Title: "Find the hotspot of a workload",
		Description: "Capture a declared workload with a CPU profile and find where its time goes.",
		Arguments: []*mcp.PromptArgument{
			{Name: "workload", Description: "declared workload name (list_workloads)", Required: true},
			{Name: "adapter", Description: "capture adapter (default gotest; perf or py-spy for other programs)"}}},
		func(a map[string]string) string {
			return "Find the CPU hotspot of workload " + a["workload"] + " with flameox:\n" +
				"1. get_workload {name}: what it measures; a gotest workload needs options.profiles = \"cpu\".\n" +
				"2. plan_capture {adapter: " + a["adapter"] + ", workload}. If not approved, stop: the human runs `flameox workload approve` (you cannot).\n" +
				"3. start_capture {plan_token}, then get_job {job_id, wait_seconds: 50} until it is terminal; note run_id.\n" +
				"4. analyze_hotspots {input: run_id}: the top rows by self value.\n" +
				"5. get_frame_callers {input: run_id, frame_id} of the top row, then get_stack_examples for one whole stack.\n" +
				"Report the function, its self and inclusive fractions, the call path and the run id."
		}},
	{&mcp.Prompt{Name: "compare_captures", Title: "Compare two captures",
		Description: "Compare where the time goes in two captured runs (a baseline and a candidate).",
		Arguments: []*mcp.PromptArgument{
			{Name: "baseline", Description: "run id of the baseline (default: the older of the two newest runs)"},
			{Name: "candidate", Description: "run id of the candidate (default: the newest run)"},
			{Name: "workload", Description: "workload whose runs to compare, to pick runs with list_runs"}}},
		func(a map[string]string) string {
			return "Compare baseline run " + a["baseline"] + " with candidate run " + a["candidate"] + " (workload " + a["workload"] + "):\n" +
				"1. If a run id is empty, list_runs {workload} and take the two newest successful runs.\n" +
				"2. get_run for each: check they share workload, adapter and parameters; say so if not.\n" +
				"3. analyze_hotspots {input, limit: 20} for each. Match rows by function; compare self and inclusive fractions (fractions, not raw values, unless the totals match).\n" +
				"4. For the functions whose share moved most, get_frame_callers {input, frame_id: the function name as a regexp} in both runs.\n" +
				"5. For benchmarks, query_measurements {run_id} for each.\n" +
				"Report what moved, by how much, through which callers, and both run ids."
		}},
}

func (s *server) addPrompts() {
	for _, pr := range prompts {
		pr := pr
		s.mcp.AddPrompt(pr.p, func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			args := map[string]string{}
			for _, a := range pr.p.Arguments {
				v := req.Params.Arguments[a.Name]
				if a.Required && strings.TrimSpace(v) == "" {
					return nil, fault.New(fault.InvalidArguments, "prompt %s needs the argument %s", pr.p.Name, a.Name)
				}
				if v == "" && a.Name == "adapter" {
					v = "gotest"
				}
				args[a.Name] = promptValue(v)
			}
			return &mcp.GetPromptResult{Description: pr.p.Description,
				Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: pr.text(args)}}}}, nil
		})
	}
}

// promptValue is an argument as a JSON string of at most 80 bytes of
// text: a name or id, never a line of its own.
func promptValue(v string) string {
	if len(v) > 80 {
		v = v[:80]
	}
	b, _ := json.Marshal(strings.ToValidUTF8(v, ""))
	return string(b)
}
