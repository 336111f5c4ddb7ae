// Golden (c) of SPEC §9 over MCP alone, through the TypeScript SDK's
// stdio client, as an agent in a host drives it: an investigation and its
// hypothesis; for Python under memray and for C under massif, the
// declared experiment of contrib/examples/retained-memory, the memory
// recipe on its two run sets (what grew, by stack, and the comparison
// that decides the growth is meaningful), recorded, and the recorded
// comparison of memory.retained_end; a supported finding citing both
// comparisons and both analyses; the report. In at most max_calls tool
// calls (get_job polls included). Run by TestGoldenTypeScript/memory
// (golden_ts_test.go) with one JSON argument:
//
//   {"command": ..., "args": [...], "env": {...},   the server to start
//    "max_calls": 20}
//
// It prints one line "ok {summary}" or exits 1 with "FAIL: why".
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const cfg = JSON.parse(process.argv[2]);
const fail = (msg) => { console.error("FAIL: " + msg); process.exit(1); };
const show = (v) => JSON.stringify(v).slice(0, 4000);
const MiB = 1 << 20;

const client = new Client({ name: "flameox-ts-golden-memory", version: "1.0.0" });
const calls = [];

// call is one tools/call with the SDK's defaults, as a host sends it.
async function call(name, args) {
  calls.push(name);
  return client.callTool({ name, arguments: args });
}

// ok is the result of a call that must succeed.
async function ok(name, args) {
  const res = await call(name, args);
  if (res.isError || res.structuredContent?.ok !== true) fail(`${name}: ${show(res)}`);
  return res.structuredContent.result;
}

// job waits for a background job to end, long-polling get_job inside
// the SDK's request timeout.
async function job(j) {
  for (const end = Date.now() + 20 * 60e3; !j.terminal; ) {
    if (Date.now() > end) fail("the job never ended: " + show(j));
    j = await ok("get_job", { job_id: j.job_id, wait_seconds: 50 });
  }
  return j;
}

// experiment plans and runs a declared experiment in the investigation
// under adapter: all 12 trials succeed (every oracle passes).
async function experiment(name, adapter, inv, hyp) {
  const p = await ok("plan_experiment", { experiment: name, adapter, investigation_id: inv, hypothesis_id: hyp });
  const done = await job(await ok("start_experiment", { plan_token: p.plan_token }));
  const e = done.experiment;
  if (done.status !== "succeeded" || e?.status !== "completed" || e.trials_total !== 12 || e.outcomes?.succeeded !== 12) fail(`${name}: ${show(done)}`);
  return e;
}

// leaf is a memory stack's allocating function (frames are root first).
const leaf = (s) => s?.frames?.[s.frames.length - 1];
const renders = (s, file) => leaf(s)?.function === "render" && (leaf(s)?.file ?? "").endsWith(file);

// half is one collector's half of the golden: its experiment, the memory
// recipe on its two run sets (checked, then recorded), and the recorded
// comparison. want.growth is the stack list the growth compares
// (retained for memray; massif stores only the peak's tree).
async function half(name, adapter, want, inv, hyp) {
  const e = await experiment(name, adapter, inv, hyp);
  const [base, cand] = e.run_sets.map((rs) => rs.run_set_id);
  const args = { input: base, against: cand, practical_threshold: 0.05 };

  const m = await ok("analyze_memory", args);
  const where = `${adapter} analyze_memory`;
  if (m.base?.kind !== "run_set" || m.base.runs_total !== 6 || m.candidate?.runs_total !== 6) fail(`${where} sides: ${show({ base: m.base?.runs_total, cand: m.candidate?.runs_total })}`);
  // memory.retained_end about 8x: the program's 1 MiB and 8 MiB, plus
  // what the interpreter itself keeps on both sides under memray.
  const fig = (m.figure_changes ?? []).find((f) => f.name === "memory.retained_end");
  if (!fig || fig.unit !== "bytes" || fig.base < MiB || fig.candidate < 8 * MiB ||
    Math.abs(fig.delta - 7 * MiB) > 0.1 * MiB || !(fig.ratio >= 7 && fig.ratio <= 8.5)) fail(`${where} memory.retained_end: ${show(fig ?? m.figure_changes)}`);
  // What grew, by stack: render, by the 7 MiB more it keeps.
  const g = m.growth;
  if (g?.role !== want.growth || g.sample_type !== want.sampleType || !renders(g.stacks?.[0], want.file) || g.stacks[0].status !== "grew" ||
    Math.abs(g.stacks[0].delta - 7 * MiB) > 0.2 * MiB) fail(`${where} growth: ${show(g)}`);
  // Each side's top stack of that list is render's too.
  const top = want.growth === "retained" ? "top_retained" : "top_at_peak";
  if (!renders(m.base[top]?.stacks?.[0], want.file) || !renders(m.candidate[top]?.stacks?.[0], want.file)) fail(`${where} ${top}: ${show([m.base[top], m.candidate[top]])}`);
  if (want.timeline && !(m.base.timeline?.points?.length > 0)) fail(`${where} timeline: ${show(m.base.timeline)}`);
  // The comparison decides: a meaningful regression, valid.
  const c = m.comparison;
  if (c?.metric !== "memory.retained_end" || c.polarity !== "lower_is_better" || c.decision !== "meaningful_regression" || c.validity !== "valid" ||
    c.paired_count !== 6) fail(`${where} comparison: ${show(c)}`);

  const rec = await ok("record_analysis", { recipe: "memory", arguments: args });
  if (rec.recipe !== "memory" || !rec.analysis_id) fail(`${adapter} record_analysis: ${show(rec)}`);

  const rc = await ok("record_comparison", { baseline_run_set: base, candidate_run_set: cand, metric: "memory.retained_end", practical_threshold: 0.05 });
  const rcc = rc.comparison;
  if (rcc?.decision !== "meaningful_regression" || rcc.validity !== "valid" || rcc.paired_count !== 6 || !rc.recorded?.comparison_id) fail(`${adapter} record_comparison: ${show(rc)}`);
  return {
    analysis: rec.analysis_id, comparison: rc.recorded.comparison_id, experiment: e.experiment.experiment_id,
    numbers: { retained: [fig.base, fig.candidate], ratio: rcc.ratio, low: rcc.ratio_low, high: rcc.ratio_high, paired: rcc.paired_count },
  };
}

try {
  await client.connect(new StdioClientTransport({ command: cfg.command, args: cfg.args, env: cfg.env, stderr: "inherit" }));
  const summary = {};
  const question = "Does the bigger cache make the program keep more memory?";

  const inv = (await ok("create_investigation", { question })).investigation.investigation_id;
  const hyp = (await ok("record_hypothesis", { investigation_id: inv, claim: "a cache of 128 blocks keeps every block alive until exit",
    prediction: "the candidate retains about 8 times what the baseline does at exit, allocated by render",
    discriminating_condition: "more retained in every complete block, with the same checksum" })).hypothesis.hypothesis_id;
  if (!inv || !hyp) fail("no investigation or hypothesis");

  const py = await half("cache_memory", "memray", { growth: "retained", sampleType: "retained_space", file: "cache.py" }, inv, hyp);
  const c = await half("cache_memory_c", "massif", { growth: "peak", sampleType: "inuse_space", file: "cache.c", timeline: true }, inv, hyp);
  summary.memray = py.numbers;
  summary.massif = c.numbers;

  // Supported: both comparisons are valid, declared and oracle-checked;
  // the memory analyses are its context.
  const f = await ok("record_finding", { kind: "performance", title: "the 128-block cache retains 8x",
    claim: "a cache of 128 blocks keeps 8 MiB alive until exit, where 16 keep 1 MiB: render, called from checksum, retains it",
    evidence_level: "derived", confidence: "high", assessment: "supported", evidence: [
      { ref_type: "comparison", ref_id: py.comparison, relation: "supports" },
      { ref_type: "comparison", ref_id: c.comparison, relation: "supports" },
      { ref_type: "analysis", ref_id: py.analysis, relation: "context" },
      { ref_type: "analysis", ref_id: c.analysis, relation: "context" }] });
  if (f.finding?.assessment !== "supported") fail("record_finding: " + show(f));
  const fnd = f.finding.finding_id;

  const rep = await ok("summarize_investigation", { investigation_id: inv });
  if (rep.investigation?.question !== question) fail("summarize_investigation: question " + show(rep.investigation));
  for (const id of [py.comparison, c.comparison]) {
    const x = (rep.comparisons ?? []).find((x) => x.comparison_id === id);
    if (x?.decision !== "meaningful_regression") fail("summarize_investigation comparison " + id + ": " + show(rep.comparisons));
  }
  for (const id of [py.analysis, c.analysis]) {
    if (!(rep.analyses ?? []).some((x) => x.analysis_id === id)) fail("summarize_investigation lacks analysis " + id + ": " + show(rep.analyses));
  }
  if (!(rep.findings ?? []).some((x) => x.finding_id === fnd)) fail("summarize_investigation lacks " + fnd + ": " + show(rep.findings));
  if ((rep.experiments ?? []).length !== 2) fail("summarize_investigation experiments: " + show(rep.experiments));

  if (calls.length > cfg.max_calls) fail(`${calls.length} calls, budget ${cfg.max_calls}: ${calls.join(" ")}`);
  summary.calls = calls.length;
  summary.tools = calls.join(" ");
  await client.close();
  console.log("ok " + JSON.stringify(summary));
} catch (e) {
  fail(e?.stack || String(e));
}
