package mcpserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flameox/flameox/pkg/cli"
	"github.com/flameox/flameox/pkg/mcpserver"
	"github.com/flameox/flameox/pkg/tool/flameox"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpOnly are tools no porcelain command names, with the reason.
var mcpOnly = map[string]string{
	"start_capture": jobsReason, "get_job": jobsReason, "cancel_job": jobsReason, "propose_workload": proposeReason,
}

// jobsReason: `flameox capture run` waits in the foreground as long as it
// takes; detached jobs exist for hosts whose tool calls time out.
const jobsReason = "jobs outlast a host's tool timeout; the CLI waits"

// proposeReason: a person declares a workload by editing flameox.toml;
// an agent drafts one, and `flameox workload approve NAME` adopts it.
const proposeReason = "agents draft workloads; a person adopts them with flameox workload approve"

// drafted are the banned argument names propose_workload takes: a draft
// of a [workloads.NAME] table, which runs nothing and is not approved; only
// a person's `flameox workload approve NAME` adopts it (issue 14, item 9).
var drafted = []string{"argv", "cwd", "env"}

// TestCommandsParity: every porcelain command has an MCP tool or says why
// not, and every tool belongs to a command (or to mcpOnly).
func TestCommandsParity(t *testing.T) {
	tools := mcpserver.Tools()
	named := map[string]bool{}
	for _, c := range flameox.Commands() {
		switch {
		case c.MCPTool != "":
			if !slices.Contains(tools, c.MCPTool) {
				t.Errorf("command %q names MCP tool %q, which the server does not register", c.Name, c.MCPTool)
			}
			named[c.MCPTool] = true
		case c.CLIOnly == "":
			t.Errorf("command %q has neither an MCP tool nor a CLIOnly reason", c.Name)
		}
	}
	for _, tool := range tools {
		if !named[tool] && mcpOnly[tool] == "" {
			t.Errorf("tool %s is named by no command; add it to a command or to mcpOnly with a reason", tool)
		}
	}
}

// schemaMap is a JSON schema as the client decoded it.
func schemaMap(t *testing.T, s any) map[string]any {
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("schema is not an object: %s", b)
	}
	return m
}

// concrete fails on a `true` or empty sub-schema anywhere in s: the
// TypeScript client rejects the whole tools/list because of one.
func concrete(t *testing.T, where string, s any) {
	m, ok := s.(map[string]any)
	if !ok || len(m) == 0 {
		if s == false {
			return
		}
		t.Errorf("%s: non-concrete sub-schema %v", where, s)
		return
	}
	for _, k := range []string{"properties", "$defs", "patternProperties"} {
		props, _ := m[k].(map[string]any)
		for name, sub := range props {
			concrete(t, where+"."+name, sub)
		}
	}
	for _, k := range []string{"items", "additionalProperties", "not", "contains"} {
		if sub, ok := m[k]; ok {
			concrete(t, where+"/"+k, sub)
		}
	}
	for _, k := range []string{"anyOf", "oneOf", "allOf", "prefixItems"} {
		subs, _ := m[k].([]any)
		for i, sub := range subs {
			concrete(t, fmt.Sprintf("%s/%s[%d]", where, k, i), sub)
		}
	}
}

func TestToolSchemasAndAnnotations(t *testing.T) {
	in, err := mcpserver.Inspect(context.Background(), mcpserver.Options{ProjectRoot: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	codex := regexp.MustCompile(`^[a-z0-9_]{1,64}$`)
	banned := []string{"argv", "cmd", "command", "cwd", "shell", "sql", "script", "executable", "env"}
	for _, tool := range in.Tools {
		names = append(names, tool.Name)
		if !codex.MatchString(tool.Name) {
			t.Errorf("%s: not a Codex-safe name", tool.Name)
		}
		input, output := schemaMap(t, tool.InputSchema), schemaMap(t, tool.OutputSchema)
		concrete(t, tool.Name+" input", input)
		concrete(t, tool.Name+" output", output)
		props, _ := input["properties"].(map[string]any)
		for p := range props {
			if (slices.Contains(banned, p) && !(tool.Name == "propose_workload" && slices.Contains(drafted, p))) || (p == "path" && tool.Name != "import_artifact") {
				t.Errorf("%s takes %q", tool.Name, p)
			}
		}
		outProps, _ := output["properties"].(map[string]any)
		for _, k := range []string{"schema_version", "ok", "result", "error"} {
			if outProps[k] == nil {
				t.Errorf("%s: output schema lacks envelope field %s", tool.Name, k)
			}
		}
		checkAnnotations(t, tool)
	}
	if !slices.Equal(names, mcpserver.Tools()) {
		t.Fatalf("tools/list %v != Tools() %v", names, mcpserver.Tools())
	}
	if len(in.ResourceTemplates) != 7 || in.Instructions == "" {
		t.Fatalf("templates %d, instructions %d bytes", len(in.ResourceTemplates), len(in.Instructions))
	}
}

func checkAnnotations(t *testing.T, tool *mcp.Tool) {
	a := tool.Annotations
	if a == nil || a.DestructiveHint == nil || a.OpenWorldHint == nil || a.Title == "" {
		t.Errorf("%s: annotations are not explicit: %+v", tool.Name, a)
		return
	}
	type hints struct{ ro, idem, destr, open bool }
	got := hints{a.ReadOnlyHint, a.IdempotentHint, *a.DestructiveHint, *a.OpenWorldHint}
	want := hints{ro: true, idem: true}
	switch tool.Name {
	case "initialize_workspace", "propose_workload": // writes a file, the same for the same input
		want = hints{idem: true}
	case "freeze_run_set": // the same runs give the same set
		want = hints{idem: true}
	case "record_comparison": // the same comparison again is reported, not published twice
		want = hints{idem: true}
	case "import_artifact", "record_analysis", "create_investigation", "record_hypothesis", "record_finding": // additive
		want = hints{}
	case "execute_capture_plan", "start_capture", "start_experiment":
		want = hints{destr: true, open: true}
	case "export_profile", "render_picture": // writes the file it is given, replacing one there
		want = hints{idem: true, destr: true}
	case "cancel_job": // kills the capture's process tree
		want = hints{idem: true, destr: true}
	}
	if got != want {
		t.Errorf("%s: hints %+v, want %+v", tool.Name, got, want)
	}
}

// porcelainJSON runs `flameox --json ARGS` in process in dir.
func porcelainJSON(t *testing.T, dir string, args ...string) any {
	t.Helper()
	var out bytes.Buffer
	env := &cli.Env{Stdin: bytes.NewReader(nil), Stdout: &out, Stderr: io.Discard, Getenv: os.Getenv, Environ: os.Environ,
		Dir: dir, Now: time.Now, Name: "flameox"}
	if code := cli.Run(context.Background(), env, flameox.Run, append([]string{"--json"}, args...)); code != 0 {
		t.Fatalf("flameox %v: exit %d\n%s", args, code, out.String())
	}
	var v any
	if err := json.Unmarshal(out.Bytes(), &v); err != nil {
		t.Fatalf("flameox %v: %v\n%s", args, err, out.String())
	}
	return v
}

// mcpResult is a tool's structured result, normalized the same way.
func mcpResult(t *testing.T, c *client, name string, args map[string]any) any {
	t.Helper()
	env := c.ok(name, args, nil)
	var v any
	if err := json.Unmarshal(env.Result, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestCLIJSONEqualsMCPResult: `flameox … --json` and the MCP result are
// the same model, value for value, on the same workspace state.
func TestCLIJSONEqualsMCPResult(t *testing.T) {
	dir := project(t)
	c := connect(t, dir, nil)
	runID, _ := c.importedRun(copyTestdata(t, dir, "google-pprof__sample.cpu.pb.gz"))
	cases := []struct {
		tool string
		args map[string]any
		cli  []string
	}{
		{"workspace_status", nil, []string{"status"}},
		{"list_runs", nil, []string{"runs", "list", "--limit", "20"}},
		{"analyze_hotspots", map[string]any{"input": runID}, []string{"analyze", "hotspots", runID, "--limit", "10"}},
	}
	for _, tc := range cases {
		got, want := mcpResult(t, c, tc.tool, tc.args), porcelainJSON(t, dir, tc.cli...)
		nextForms(t, tc.tool, got, want)
		if !reflect.DeepEqual(got, want) {
			g, _ := json.MarshalIndent(got, "", " ")
			w, _ := json.MarshalIndent(want, "", " ")
			t.Errorf("%s differs from flameox %v\nMCP: %s\nCLI: %s", tc.tool, tc.cli, g, w)
		}
	}
}

// nextForms checks that next steps name tools over MCP and commands on
// the CLI (the same steps, in each interface's words), then drops them
// so that the rest of the two results can be compared value for value.
func nextForms(t *testing.T, tool string, mcpRes, cliRes any) {
	t.Helper()
	m, _ := mcpRes.(map[string]any)
	c, _ := cliRes.(map[string]any)
	if m == nil || c == nil || m["next_steps"] == nil {
		return
	}
	ms, _ := m["next_steps"].([]any)
	cs, _ := c["next_steps"].([]any)
	calls, _ := m["next_tools"].([]any)
	if len(ms) != len(cs) || len(calls) != len(cs) {
		t.Errorf("%s: %d next steps and %d calls over MCP, %d on the CLI", tool, len(ms), len(calls), len(cs))
	}
	for i := range cs {
		if cmd, _ := cs[i].(string); !strings.HasPrefix(cmd, "flameox ") {
			t.Errorf("%s: CLI next step %q is not a command", tool, cmd)
		}
		if i < len(ms) && i < len(calls) {
			call, _ := calls[i].(map[string]any)
			if name, _ := call["tool"].(string); name == "" || !strings.HasPrefix(ms[i].(string), name+" {") {
				t.Errorf("%s: MCP next step %q / call %v do not name a tool", tool, ms[i], call)
			}
		}
	}
	if _, ok := c["next_tools"]; ok {
		t.Errorf("%s: the CLI JSON carries next_tools", tool)
	}
	delete(m, "next_steps")
	delete(m, "next_tools")
	delete(c, "next_steps")
}
