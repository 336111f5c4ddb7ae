package mcpserver_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/flameox/flameox/pkg/internal/testenv"
	"github.com/flameox/flameox/pkg/mcpserver"
)

// tsSDK is the TypeScript SDK version most hosts (Claude Code, Cursor, the
// MCP Inspector) are built on; its client rejects schemas go-sdk accepts.
const tsSDK = "1.32.2"

const tsClient = `import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [bin, dir, runID, artifactID, want] = process.argv.slice(2);
const fail = (msg) => { console.error("FAIL: " + msg); process.exit(1); };
try {
  const transport = new StdioClientTransport({ command: bin, args: ["serve", "--project-root", dir], stderr: "inherit" });
  const client = new Client({ name: "flameox-ts-test", version: "1.0.0" });
  await client.connect(transport);
  if (client.getServerVersion()?.name !== "flameox") fail("server info " + JSON.stringify(client.getServerVersion()));
  if (!client.getInstructions()?.includes("plan_capture")) fail("no instructions");
  const tools = await client.listTools();
  if (tools.tools.length !== Number(want)) fail("listTools returned " + tools.tools.length + " tools, want " + want);
  for (const t of tools.tools) {
    if (!t.outputSchema || !t.annotations) fail(t.name + " lacks outputSchema or annotations");
  }
  const st = await client.callTool({ name: "workspace_status", arguments: {} });
  if (st.isError || st.structuredContent?.ok !== true || !st.structuredContent?.result?.workspace?.workspace_id) fail("workspace_status: " + JSON.stringify(st));
  const hot = await client.callTool({ name: "analyze_hotspots", arguments: { input: runID } });
  if (hot.isError || !(hot.structuredContent?.result?.rows?.length > 0)) fail("analyze_hotspots: " + JSON.stringify(hot).slice(0, 500));
  const bad = await client.callTool({ name: "get_run", arguments: { run_id: "00000000-0000-4000-8000-000000000000" } });
  if (!bad.isError || bad.structuredContent?.error?.code !== "NOT_FOUND") fail("get_run: " + JSON.stringify(bad));
  const res = await client.readResource({ uri: "flameox://runs/" + runID });
  if (JSON.parse(res.contents[0].text).run?.run_id !== runID) fail("readResource run: " + res.contents[0].text.slice(0, 300));
  const art = await client.readResource({ uri: "flameox://artifacts/" + artifactID });
  if (JSON.parse(art.contents[0].text).artifact_id !== artifactID) fail("readResource artifact");
  const tpls = await client.listResourceTemplates();
  if (tpls.resourceTemplates.length !== 7) fail("templates " + tpls.resourceTemplates.length);
  await client.close();
  console.log("ok " + tools.tools.length + " tools");
} catch (e) {
  fail(e?.stack || String(e));
}
`

// tsSDKDir returns node and a directory where the TypeScript SDK is
// installed (once per machine, in the system's temporary directory): a
// client script must live there for node to resolve the SDK.
func tsSDKDir(t *testing.T) (node, dir string) {
	t.Helper()
	node, npm := testenv.LookPath(t, "node"), testenv.LookPath(t, "npm")
	dir = filepath.Join(os.TempDir(), "flameox-mcp-ts-sdk-"+tsSDK)
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk", "package.json")); err != nil {
		os.MkdirAll(dir, 0o755)
		os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"private": true, "type": "module"}`+"\n"), 0o644)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, npm, "install", "--no-audit", "--no-fund", "@modelcontextprotocol/sdk@"+tsSDK)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			testenv.Unable(t, "npm registry", "unreachable", "npm install @modelcontextprotocol/sdk@%s: %v\n%s", tsSDK, err, out)
		}
	}
	return node, dir
}

// tsScript writes a client script into the SDK's directory for the
// duration of the test and returns its path.
func tsScript(t *testing.T, sdkDir string, text []byte) string {
	t.Helper()
	script := filepath.Join(sdkDir, "client-"+strconv.Itoa(os.Getpid())+"-"+strings.ReplaceAll(t.Name(), "/", "_")+".mjs")
	if err := os.WriteFile(script, text, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(script) })
	return script
}

// TestTypeScriptClient drives the built fox-mcp binary with the TypeScript
// SDK's stdio client: a schema it rejects would hide every tool from hosts.
func TestTypeScriptClient(t *testing.T) {
	node, sdkDir := tsSDKDir(t)
	goTool := testenv.Go(t)
	bin := filepath.Join(t.TempDir(), "fox-mcp")
	if out, err := exec.Command(goTool, "build", "-o", bin, "github.com/flameox/flameox/cmd/fox-mcp").CombinedOutput(); err != nil {
		t.Fatalf("go build fox-mcp: %v\n%s", err, out)
	}
	dir := project(t)
	c := connect(t, dir, nil)
	runID, artifactID := c.importedRun(copyTestdata(t, dir, "google-pprof__sample.cpu.pb.gz"))
	c.cs.Close()

	script := tsScript(t, sdkDir, []byte(tsClient))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, script, bin, dir, runID, artifactID, strconv.Itoa(len(mcpserver.Tools())))
	cmd.Dir = sdkDir
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "ok ") {
		t.Fatalf("TypeScript client: %v\n%s", err, out)
	}
	t.Logf("TypeScript SDK %s: %s", tsSDK, strings.TrimSpace(string(out)))
}

// Budgets of an agent's session (issue 14): a host forwards every result
// into the model's context, and an investigation should take a handful of
// calls.
const (
	agentMaxBytes = 8 << 10 // per result: its text, and its structured content
	agentMaxCalls = 10      // tool calls besides get_job polls
)

// agentConfig is the one JSON argument of the agent scripts in
// testdata/agent: the server to start (this test binary acting as fox-mcp
// over a real stdio pipe), the capture to run and the budgets.
type agentConfig struct {
	Command    string            `json:"command"`
	Args       []string          `json:"args"`
	Env        map[string]string `json:"env"`
	Workload   string            `json:"workload"`
	Parameters map[string]any    `json:"parameters"`
	MaxBytes   int               `json:"max_bytes"`
	MaxCalls   int               `json:"max_calls"`
	Tools      int               `json:"tools"`
	Failure    bool              `json:"failure,omitempty"` // also capture a failing test
	Cancel     bool              `json:"cancel,omitempty"`  // also cancel a running capture
}

// agentProject is a project with the workloads of testdata/agent (a Go
// module whose test burns CPU in spin.Mix), approved as a human would,
// under the default MCP containment where Bubblewrap is installed.
func agentProject(t *testing.T) string {
	t.Helper()
	testenv.LookPath(t, "go")
	toml, err := os.ReadFile(filepath.Join("testdata", "agent", "flameox.toml"))
	if err != nil {
		t.Fatal(err)
	}
	dir := captureProject(t, string(toml), "spin", "broken")
	if err := os.CopyFS(filepath.Join(dir, "spin"), os.DirFS(filepath.Join("testdata", "agent", "spin"))); err != nil {
		t.Fatal(err)
	}
	return dir
}

func agentArg(t *testing.T, dir string, cfg agentConfig) string {
	t.Helper()
	env := map[string]string{}
	for _, kv := range os.Environ() {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	env["FOX_MCP_TEST_SERVE"] = "1"
	cfg.Command, cfg.Args, cfg.Env = os.Args[0], []string{"serve", "--project-root", dir}, env
	cfg.MaxBytes, cfg.MaxCalls, cfg.Tools = agentMaxBytes, agentMaxCalls, len(mcpserver.Tools())
	b, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// runAgent runs an agent script to its end and returns its summary line.
func runAgent(t *testing.T, dir string, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if err != nil || !strings.HasPrefix(lines[len(lines)-1], "ok ") {
		t.Fatalf("%s: %v\n%s", filepath.Base(args[0]), err, out)
	}
	return lines[len(lines)-1]
}

// TestTypeScriptAgent is an agent's whole investigation through the
// TypeScript SDK with its default request timeout (60 s): a contained
// gotest capture that outlasts that timeout, then hotspots, callers,
// stack examples, the run, the profile artifact and the viewer plan, in
// at most agentMaxCalls calls of at most agentMaxBytes each.
func TestTypeScriptAgent(t *testing.T) {
	if testing.Short() {
		t.Skip("captures a go test that runs for more than 60 s")
	}
	node, sdkDir := tsSDKDir(t)
	text, err := os.ReadFile(filepath.Join("testdata", "agent", "agent.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	script := tsScript(t, sdkDir, text)
	dir := agentProject(t)
	out := runAgent(t, sdkDir, node, script, agentArg(t, dir, agentConfig{Workload: "spin", Parameters: map[string]any{"seconds": 65}, Failure: true, Cancel: true}))
	t.Logf("TypeScript SDK %s: %s", tsSDK, out)
}
