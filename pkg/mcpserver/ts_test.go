package mcpserver_test

import (
	"context"
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

// TestTypeScriptClient drives the built fox-mcp binary with the TypeScript
// SDK's stdio client: a schema it rejects would hide every tool from hosts.
func TestTypeScriptClient(t *testing.T) {
	node, npm := testenv.LookPath(t, "node"), testenv.LookPath(t, "npm")
	sdkDir := filepath.Join(os.TempDir(), "flameox-mcp-ts-sdk-"+tsSDK)
	if _, err := os.Stat(filepath.Join(sdkDir, "node_modules", "@modelcontextprotocol", "sdk", "package.json")); err != nil {
		os.MkdirAll(sdkDir, 0o755)
		os.WriteFile(filepath.Join(sdkDir, "package.json"), []byte(`{"private": true, "type": "module"}`+"\n"), 0o644)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, npm, "install", "--no-audit", "--no-fund", "@modelcontextprotocol/sdk@"+tsSDK)
		cmd.Dir = sdkDir
		if out, err := cmd.CombinedOutput(); err != nil {
			if testenv.CI() {
				t.Fatalf("npm install @modelcontextprotocol/sdk@%s: %v\n%s", tsSDK, err, out)
			}
			testenv.Skip(t, "npm registry", "unreachable", "npm install @modelcontextprotocol/sdk@%s: %v", tsSDK, err)
		}
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatal("go is not on PATH (the go toolchain is what runs these tests)")
	}
	bin := filepath.Join(t.TempDir(), "fox-mcp")
	if out, err := exec.Command(goTool, "build", "-o", bin, "github.com/flameox/flameox/cmd/fox-mcp").CombinedOutput(); err != nil {
		t.Fatalf("go build fox-mcp: %v\n%s", err, out)
	}
	dir := project(t)
	c := connect(t, dir, nil)
	runID, artifactID := c.importedRun(copyTestdata(t, dir, "google-pprof__sample.cpu.pb.gz"))
	c.cs.Close()

	script := filepath.Join(sdkDir, "client-"+strconv.Itoa(os.Getpid())+".mjs")
	if err := os.WriteFile(script, []byte(tsClient), 0o644); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(script)
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
