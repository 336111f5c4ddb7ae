// Goldens (a) and (d) of SPEC §9 over MCP alone, through the TypeScript
// SDK's stdio client, as an agent in a host drives them: an
// investigation and its hypothesis, the scaling experiment of the
// baseline and its recorded fit, the comparison experiment and its
// recorded comparison, the broken treatment captured and rejected by its
// oracle, a supported finding and the report, in at most max_calls tool
// calls (get_job polls included). Run by TestGoldenTypeScript
// (golden_ts_test.go) with one JSON argument:
//
//   {"command": ..., "args": [...], "env": {...},   the server to start
//    "adapter": "gotest", "metric": "gobench.sec/op",
//    "scaling": "reverse_scaling", "baseline": "reverse",
//    "compare": "reverse_compare", "workload": "bench",
//    "broken": {...parameters},
//    "profiled": {"workload": ..., "parameters": {...}, "hot": "ReverseSum"},   optional
//    "max_calls": 20}
//
// It prints one line "ok {summary}" or exits 1 with "FAIL: why".
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const cfg = JSON.parse(process.argv[2]);
const fail = (msg) => { console.error("FAIL: " + msg); process.exit(1); };
const show = (v) => JSON.stringify(v).slice(0, 4000);

const client = new Client({ name: "flameox-ts-golden", version: "1.0.0" });
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

// experiment plans and runs a declared experiment in the investigation:
// every trial must succeed (every oracle passes).
async function experiment(name, inv, hyp) {
  const p = await ok("plan_experiment", { experiment: name, adapter: cfg.adapter, investigation_id: inv, hypothesis_id: hyp });
  const done = await job(await ok("start_experiment", { plan_token: p.plan_token }));
  const e = done.experiment;
  if (done.status !== "succeeded" || e?.status !== "completed" || e.outcomes?.succeeded !== e.trials_total) fail(`${name}: ${show(done)}`);
  return done;
}

// capture plans and runs one capture synchronously (execute_capture_plan:
// a Go or pyperf capture ends well inside the request timeout).
async function capture(workload, parameters) {
  const p = await ok("plan_capture", { adapter: cfg.adapter, workload, parameters });
  return call("execute_capture_plan", { plan_token: p.plan_token });
}

try {
  await client.connect(new StdioClientTransport({ command: cfg.command, args: cfg.args, env: cfg.env, stderr: "inherit" }));
  const summary = {};

  const inv = (await ok("create_investigation", { question: cfg.question })).investigation.investigation_id;
  const hyp = (await ok("record_hypothesis", { investigation_id: inv, claim: cfg.claim, prediction: cfg.prediction,
    discriminating_condition: "faster in every complete block, with the same total" })).hypothesis.hypothesis_id;
  if (!inv || !hyp) fail("no investigation or hypothesis");

  // Scaling: the baseline's fit is linear, or the fit cannot tell; never
  // another model. Recorded, so the finding can cite it.
  const sc = await experiment(cfg.scaling, inv, hyp);
  const expID = sc.experiment.experiment.experiment_id;
  const fit = await ok("analyze_scaling", { experiment_id: expID, variant: cfg.baseline });
  const choice = fit.series?.[0]?.choice;
  if (fit.attempted_trials !== 9 || fit.succeeded_trials !== 9 || !choice) fail("analyze_scaling: " + show(fit));
  const fine = (choice.decision === "chosen" && choice.model === "linear") || choice.decision === "inconclusive" ||
    (choice.decision === "indistinguishable" && choice.candidates.includes("linear"));
  if (!fine) fail("analyze_scaling chose " + show(choice));
  summary.scaling = choice.decision + (choice.model ? " " + choice.model : "") + (choice.candidates?.length ? " (" + choice.candidates.join(", ") + ")" : "");
  const scaling = (await ok("record_analysis", { recipe: "scaling", arguments: { experiment_id: expID, variant: cfg.baseline } })).analysis_id;

  // The comparison: valid, a meaningful improvement, recorded.
  const cmpJob = await experiment(cfg.compare, inv, hyp);
  const [base, cand] = cmpJob.experiment.run_sets.map((rs) => rs.run_set_id);
  const rc = await ok("record_comparison", { baseline_run_set: base, candidate_run_set: cand, metric: cfg.metric, practical_threshold: 0.05 });
  const c = rc.comparison;
  if (c.validity !== "valid" || c.decision !== "meaningful_improvement" || c.paired_count !== 6) fail("record_comparison: " + show(rc));
  const cmp = rc.recorded.comparison_id;
  summary.comparison = { ratio: c.ratio, low: c.ratio_low, high: c.ratio_high, paired: c.paired_count };

  const evidence = [{ ref_type: "comparison", ref_id: cmp, relation: "supports" }, { ref_type: "analysis", ref_id: scaling, relation: "context" }];

  // The profiled run, separate from the measurement runs, and its hotspots.
  if (cfg.profiled) {
    const pr = await capture(cfg.profiled.workload, cfg.profiled.parameters);
    const prof = pr.structuredContent?.result?.run?.run_id;
    if (pr.isError || !prof) fail("profiled capture: " + show(pr));
    const hot = await ok("record_analysis", { recipe: "hotspots", arguments: { input: prof, limit: 3 } });
    evidence.push({ ref_type: "run", ref_id: prof, relation: "context" }, { ref_type: "analysis", ref_id: hot.analysis_id, relation: "context" });
  }

  // The broken treatment runs to its end; its oracle rejects it.
  const br = await capture(cfg.workload, cfg.broken);
  const brRun = br.structuredContent?.result?.run ?? {};
  const brErr = br.structuredContent?.error;
  const rejected = brRun.validation_status === "failed" || (br.isError && /oracle rejected/.test(brErr?.message ?? ""));
  if (!rejected) fail("broken capture: " + show(br));
  summary.broken = brErr?.code ?? brRun.validation_status;

  const f = await ok("record_finding", { kind: "performance", title: cfg.title, claim: cfg.claim, evidence_level: "derived",
    confidence: "high", assessment: "supported", evidence });
  if (f.finding?.assessment !== "supported") fail("record_finding: " + show(f));
  const fnd = f.finding.finding_id;

  const rep = await ok("summarize_investigation", { investigation_id: inv });
  if (rep.investigation?.question !== cfg.question) fail("summarize_investigation: question " + show(rep.investigation));
  if (!(rep.comparisons ?? []).some((x) => x.comparison_id === cmp)) fail("summarize_investigation lacks " + cmp + ": " + show(rep.comparisons));
  if (!(rep.analyses ?? []).some((x) => x.analysis_id === scaling)) fail("summarize_investigation lacks analysis " + scaling + ": " + show(rep.analyses));
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
