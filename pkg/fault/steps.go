package fault

import (
	"encoding/json"
	"fmt"
)

// Step is one thing a user or agent can do next, in the words of both
// interfaces: the CLI command, and the MCP tool with its arguments. A
// step only a person can take (approving a workload) has no Tool.
//
// Results and errors carry the CLI form (`flameox … --json` prints it, and
// it is what the JSON contract always held); the MCP server turns them into
// the MCP form at its edge (Next.UseMCP, Error.UseMCP), so an agent is
// pointed at tools, never at a shell.
type Step struct {
	Command   string         // "flameox stacks callers RUN FRAME"
	Tool      string         // "get_frame_callers"
	Arguments map[string]any // {"input": RUN, "frame_id": FRAME}
}

// Call is a Step's MCP form: the tool to call and its arguments.
type Call struct {
	Tool      string         `json:"tool"`
	Arguments map[string]any `json:"arguments"`
}

// mcpText is how an MCP answer names the step: the tool and its arguments
// as JSON, or the command when only a person can run it.
func (s Step) mcpText() string {
	if s.Tool == "" {
		return s.Command
	}
	args := s.Arguments
	if args == nil {
		args = map[string]any{}
	}
	b, err := json.Marshal(args)
	if err != nil {
		return s.Tool
	}
	return s.Tool + " " + string(b)
}

func (s Step) call() Call {
	args := s.Arguments
	if args == nil {
		args = map[string]any{}
	}
	return Call{Tool: s.Tool, Arguments: args}
}

// Next is the next steps of a result: NextSteps names them as the
// interface that answered does (CLI commands, or over MCP each tool with
// its arguments), and over MCP NextTools lists the same steps as calls.
// Embed it in a result type.
type Next struct {
	NextSteps []string `json:"next_steps"`
	NextTools []Call   `json:"next_tools,omitempty"`
	steps     []Step
	mcp       bool
}

// Then appends steps (CLI form).
func (n *Next) Then(steps ...Step) {
	if n.NextSteps == nil {
		n.NextSteps = []string{}
	}
	for _, s := range steps {
		n.steps = append(n.steps, s)
		n.NextSteps = append(n.NextSteps, s.Command)
	}
}

// UseMCP rewrites n into its MCP form: each step the tool with its
// arguments, and NextTools the calls. Steps only a person can take keep
// their command. It is idempotent.
func (n *Next) UseMCP() {
	if n.mcp {
		return
	}
	n.mcp = true
	if n.NextSteps == nil {
		n.NextSteps = []string{}
	}
	for i, s := range n.steps {
		if i < len(n.NextSteps) {
			n.NextSteps[i] = s.mcpText()
		}
		if s.Tool != "" {
			n.NextTools = append(n.NextTools, s.call())
		}
	}
}

// remedy is a remediation written with steps: Remediation[index] is its
// CLI rendering.
type remedy struct {
	index  int
	format string
	steps  []Step
}

// FixSteps appends a remediation that names steps: format holds one %s per
// step, filled with "`command`" on the CLI and "`tool {arguments}`" over
// MCP (see UseMCP), e.g.
//
//	e.FixSteps("List the profile's functions with %s.",
//		fault.Step{Command: "flameox analyze hotspots RUN --limit 100", Tool: "analyze_hotspots",
//			Arguments: map[string]any{"input": "RUN", "limit": 100}})
func (e *Error) FixSteps(format string, steps ...Step) *Error {
	e.remedies = append(e.remedies, remedy{index: len(e.Remediation), format: format, steps: steps})
	e.Remediation = append(e.Remediation, render(format, steps, func(s Step) string { return "`" + s.Command + "`" }))
	return e
}

func render(format string, steps []Step, name func(Step) string) string {
	args := make([]any, len(steps))
	for i, s := range steps {
		args[i] = name(s)
	}
	return fmt.Sprintf(format, args...)
}

// UseMCP rewrites e's remediations written with FixSteps into their MCP
// form and lists their tool calls in NextTools. It is idempotent.
func (e *Error) UseMCP() {
	if e == nil || e.mcp {
		return
	}
	e.mcp = true
	for _, r := range e.remedies {
		if r.index < len(e.Remediation) {
			e.Remediation[r.index] = render(r.format, r.steps, func(s Step) string { return "`" + s.mcpText() + "`" })
		}
		for _, s := range r.steps {
			if s.Tool != "" {
				e.NextTools = append(e.NextTools, s.call())
			}
		}
	}
}

// ForMCP is a copy of e in its MCP form (see UseMCP); e is unchanged.
func (e *Error) ForMCP() *Error {
	if e == nil || len(e.remedies) == 0 || e.mcp {
		return e
	}
	c := *e
	c.Remediation = append([]string(nil), e.Remediation...)
	c.NextTools = append([]Call(nil), e.NextTools...)
	c.UseMCP()
	return &c
}
