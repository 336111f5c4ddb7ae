// An agent's session with flameox through the TypeScript SDK's stdio
// client, as a host built on it (Claude Code, Cursor, the MCP Inspector)
// drives the server: every request under the SDK's default request
// timeout, every result validated against the tool's output schema (the
// SDK does that once listTools has run), and every result small enough
// for a model's context. Run by TestTypeScriptAgent (ts_test.go) with one
// JSON argument:
//
//   {"command": ..., "args": [...], "env": {...},   the server to start
//    "workload": "spin", "parameters": {...},        the capture to run
//    "max_bytes": 8192, "max_calls": 10,             the budgets
//    "tools": N,                                     tools/list's length
//    "failure": true, "cancel": true}                the other checks
//
// It prints one line "ok {summary}" or exits 1 with "FAIL: why".
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const cfg = JSON.parse(process.argv[2]);
const fail = (msg) => { console.error("FAIL: " + msg); process.exit(1); };
const show = (v) => JSON.stringify(v).slice(0, 3000);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const client = new Client({ name: "flameox-ts-agent", version: "1.0.0" });
const sizes = [];
let calls = 0, polls = 0, pollMax = 0;

// call is one tools/call with the SDK's defaults (no timeout option, no
// progress token: what a host sends); polls of get_job are counted apart.
async function call(name, args, poll = false) {
  if (poll) polls++; else calls++;
  const res = await client.callTool({ name, arguments: args });
  const text = (res.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("");
  const size = { tool: name, text: Buffer.byteLength(text), structured: Buffer.byteLength(JSON.stringify(res.structuredContent ?? null)) };
  if (!poll) sizes.push(size);
  else pollMax = Math.max(pollMax, size.text, size.structured);
  return [res, size];
}

// small fails when a result is over the byte budget.
function small(res, size) {
  const budget = cfg.max_bytes;
  if (size.text > budget || size.structured > budget) {
    fail(`${size.tool}: ${size.text} bytes of text and ${size.structured} of structured content, budget ${budget}: ${show(res)}`);
  }
  return res;
}

// ok is the result of a call that must succeed; bounded says it must fit
// the budget (the investigation's calls), else its size is only recorded.
let bounded = true, unbounded = 0;
async function ok(name, args, poll = false) {
  const [res, size] = await call(name, args, poll);
  if (res.isError || res.structuredContent?.ok !== true) fail(`${name}: ${show(res)}`);
  if (!bounded) unbounded = Math.max(unbounded, size.text, size.structured);
  return (bounded ? small(res, size) : res).structuredContent.result;
}

// job waits for a background job to end, long-polling get_job well
// inside the request timeout.
async function job(j) {
  for (const end = Date.now() + 30 * 60e3; !j.terminal; ) {
    if (Date.now() > end) fail("the job never ended: " + show(j));
    j = await ok("get_job", { job_id: j.job_id, wait_seconds: 20 }, true);
  }
  return j;
}

// capture runs a planned capture to its end and returns its job, whose
// capture is capture.Result ({run, artifact_ids, failure, ...}).
// Switching how an agent waits for a capture changes this function only.
async function capture(planToken) {
  return job(await ok("start_capture", { plan_token: planToken }));
}

// plan plans a gotest capture of a workload.
async function plan(workload, parameters) {
  const p = await ok("plan_capture", { adapter: "gotest", workload, parameters });
  if (!p.plan_token) fail("plan_capture: no plan_token: " + show(p));
  return p.plan_token;
}

// failed: a capture whose test fails says so, names the test and carries
// the end of its output, where the failure's message is.
async function failed() {
  const j = await capture(await plan("broken", {}));
  const f = j.capture?.failure;
  if (j.status !== "failed" || !j.run_id || f?.class !== "test_failed") fail("failed capture: " + show(j));
  if (!(f.failed_tests ?? []).some((t) => t.endsWith("TestBroken"))) fail("failed capture names no failed test: " + show(f));
  const tails = (f.lines ?? []).join("\n") + (f.stdout_tail?.text ?? "") + (f.stderr_tail?.text ?? "");
  if (!tails.includes("the marker of a failing test")) fail("failed capture carries no output tail with the test's message: " + show(f));
  return f.class;
}

// cancelled: cancelling a running capture job ends it cancelled, with its
// run terminal and named.
async function cancelled() {
  let j = await ok("start_capture", { plan_token: await plan(cfg.workload, { seconds: 300 }) });
  for (const end = Date.now() + 10 * 60e3; !(j.run_id && j.phase === "capturing"); ) {
    if (j.terminal || Date.now() > end) fail("the capture to cancel never ran: " + show(j));
    await sleep(500);
    j = await ok("get_job", { job_id: j.job_id }, true);
  }
  const c = await ok("cancel_job", { job_id: j.job_id });
  if (!c.terminal || c.status !== "cancelled" || c.run_id !== j.run_id) fail("cancel_job: " + show(c));
  const r = await ok("get_run", { run_id: c.run_id });
  if (r.run?.execution_status !== "cancelled") fail("the cancelled job's run: " + show(r));
  return c.status;
}

try {
  const began = Date.now();
  await client.connect(new StdioClientTransport({ command: cfg.command, args: cfg.args, env: cfg.env, stderr: "inherit" }));
  const listed = Date.now();
  const tools = await client.listTools();
  const listMs = Date.now() - listed;
  if (tools.tools.length !== cfg.tools) fail(`listTools returned ${tools.tools.length} tools, want ${cfg.tools}`);
  for (const t of tools.tools) {
    if (!t.outputSchema || !t.annotations) fail(t.name + " lacks outputSchema or annotations");
  }

  const token = await plan(cfg.workload, cfg.parameters);
  const captured = Date.now();
  const done = await capture(token);
  const captureMs = Date.now() - captured;
  const res = done.capture ?? {};
  const runID = res.run?.run_id;
  if (done.status !== "succeeded" || !runID || res.run.execution_status !== "succeeded" || res.run.capture_status !== "registered") fail("capture: " + show(done));

  // The hot function, found by name among the top rows, as a model would.
  const hot = await ok("analyze_hotspots", { input: runID });
  const mix = (hot.rows ?? []).find((r) => r.function.endsWith("spin.Mix"));
  if (!mix) fail("analyze_hotspots: spin.Mix is not among the rows: " + show(hot));
  const callers = await ok("get_frame_callers", { input: runID, frame_id: mix.frame_id });
  if (!(callers.edges ?? []).some((e) => e.function.endsWith("spin.Spin"))) fail("get_frame_callers: spin.Spin does not call spin.Mix: " + show(callers));
  const stacks = await ok("get_stack_examples", { input: runID, frame_id: mix.frame_id });
  if (!(stacks.examples?.length > 0) || !stacks.examples[0].frames.some((f) => f.function.endsWith("spin.TestSpin"))) {
    fail("get_stack_examples: no stack from spin.TestSpin: " + show(stacks));
  }
  const run = await ok("get_run", { run_id: runID });
  if (run.run?.run_id !== runID) fail("get_run: " + show(run));
  const art = await ok("get_artifact", { artifact_id: hot.source.artifact_id });
  if (art.artifact?.artifact_id !== hot.source.artifact_id && art.artifact_id !== hot.source.artifact_id) fail("get_artifact: " + show(art));
  const viewer = await ok("get_native_viewer_plan", { artifact_id: hot.source.artifact_id });
  if (!viewer.tool?.startsWith("go tool pprof")) fail("get_native_viewer_plan: " + show(viewer));

  if (calls > cfg.max_calls) fail(`${calls} calls besides get_job polls, budget ${cfg.max_calls}`);
  const summary = { calls, polls, poll_max_bytes: pollMax, capture_ms: captureMs, list_tools_ms: listMs, total_ms: Date.now() - began, sizes };
  // The failure and the cancellation are checked for what they say; their
  // sizes (a failure carries its output's tails) are reported.
  bounded = false;
  if (cfg.failure) summary.failure = await failed();
  if (cfg.cancel) summary.cancel = await cancelled();
  summary.other_max_bytes = unbounded;
  await client.close();
  console.log("ok " + JSON.stringify(summary));
} catch (e) {
  fail(e?.stack || String(e));
}
