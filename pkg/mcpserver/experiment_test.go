package mcpserver_test

import (
	"reflect"
	"slices"
	"testing"
	"time"
)

// experimentTOML declares a treatment whose oracle disagrees (broken) and
// one that waits far longer than any test (long), each in an experiment.
const experimentTOML = `schema_version = 1
[workloads.w]
argv = ["/bin/sh", "-c", "if [ $0 = long ]; then sleep 300; fi; echo $0", "{impl}"]
timeout_seconds = 600
[workloads.w.parameters]
impl = ["good", "broken", "long"]
[workloads.w.oracle]
strength = "cross_treatment_equivalence"
argv = ["/bin/sh", "-c", "if [ $0 = broken ]; then echo 41; else echo 42; fi", "{impl}"]

[experiments.oracle]
workload = "w"
variants = ["good", "broken"]
blocks = 3
random_seed = 5

[experiments.slow]
workload = "w"
variants = ["long", "good"]
design = "fixed_order"
blocks = 2
`

type experimentJob struct {
	job
	Experiment *struct {
		Experiment struct {
			ExperimentID string `json:"experiment_id"`
		} `json:"experiment"`
		Status      string         `json:"status"`
		Outcomes    map[string]int `json:"outcomes"`
		TrialsTotal int            `json:"trials_total"`
		Trials      []struct {
			Variant string `json:"variant"`
			Outcome string `json:"outcome"`
			RunID   string `json:"run_id"`
		} `json:"trials"`
		RunSets []struct {
			RunSetID    string `json:"run_set_id"`
			MemberCount int    `json:"member_count"`
		} `json:"run_sets"`
	} `json:"experiment"`
	Comparisons []struct {
		Baseline   string `json:"baseline_variant"`
		Candidate  string `json:"candidate_variant"`
		Comparison *struct {
			Metric     string `json:"metric"`
			Decision   string `json:"decision"`
			Validity   string `json:"validity"`
			Mismatches []struct {
				What string `json:"what"`
			} `json:"mismatches"`
			Baseline struct {
				RunSetID string `json:"run_set_id"`
			} `json:"baseline"`
		} `json:"comparison"`
	} `json:"comparisons"`
}

type experimentPlan struct {
	PlanToken   string `json:"plan_token"`
	TrialsTotal int    `json:"trials_total"`
	Plan        struct {
		DesignID string `json:"experiment_design_id"`
		Trials   []struct {
			Block   int    `json:"block"`
			Variant string `json:"variant"`
		} `json:"trials"`
	} `json:"plan"`
}

// TestExperimentJob: plan_experiment lists every trial and returns a
// token only start_experiment spends; the job runs every trial,
// publishes them, rejects the broken treatment through its oracle, and
// freezes one run set per variant; its result stays small.
func TestExperimentJob(t *testing.T) {
	dir := captureProject(t, experimentTOML, "w")
	c := connect(t, dir, nil)
	var p experimentPlan
	c.ok("plan_experiment", map[string]any{"experiment": "oracle", "adapter": "process"}, &p)
	if p.TrialsTotal != 6 || len(p.Plan.Trials) != 6 || p.PlanToken == "" || p.Plan.DesignID == "" {
		t.Fatalf("plan_experiment: %+v", p)
	}
	// A capture tool refuses an experiment's token and leaves it unspent.
	c.fails("start_capture", map[string]any{"plan_token": p.PlanToken}, "INVALID_CAPTURE_PLAN")
	var started experimentJob
	c.ok("start_experiment", map[string]any{"plan_token": p.PlanToken}, &started)
	if started.Kind != "experiment" || started.Terminal {
		t.Fatalf("start_experiment: %+v", started)
	}
	c.fails("start_experiment", map[string]any{"plan_token": p.PlanToken}, "INVALID_CAPTURE_PLAN")
	var done experimentJob
	var env envelope
	for deadline := time.Now().Add(120 * time.Second); !done.Terminal; {
		if time.Now().After(deadline) {
			t.Fatalf("the experiment did not end: %+v", done.job)
		}
		env = c.ok("get_job", map[string]any{"job_id": started.JobID, "wait_seconds": 10}, &done)
	}
	e := done.Experiment
	if done.Status != "succeeded" || e == nil || e.Status != "completed" || e.TrialsTotal != 6 ||
		e.Outcomes["succeeded"] != 3 || e.Outcomes["oracle_failed"] != 3 || len(e.RunSets) != 2 {
		t.Fatalf("finished experiment job: %s", env.raw)
	}
	for _, tr := range e.Trials {
		if want := map[string]string{"good": "succeeded", "broken": "oracle_failed"}[tr.Variant]; tr.Outcome != want || tr.RunID == "" {
			t.Fatalf("trial %+v, want %s with a run", tr, want)
		}
	}
	for _, rs := range e.RunSets {
		if rs.MemberCount != 3 {
			t.Fatalf("run set %+v, want 3 members (every trial of the variant)", rs)
		}
	}
	// The job ends with the declared comparison of broken against good
	// on the declared (default) primary metric: every broken trial failed
	// its oracle, so it is invalid and pairs nothing.
	if len(done.Comparisons) != 1 {
		t.Fatalf("comparisons: %s", env.raw)
	}
	vc := done.Comparisons[0]
	if vc.Baseline != "good" || vc.Candidate != "broken" || vc.Comparison == nil || vc.Comparison.Validity != "invalid" ||
		vc.Comparison.Decision != "inconclusive" || vc.Comparison.Metric != "categorical_outcome" || vc.Comparison.Baseline.RunSetID != e.RunSets[0].RunSetID ||
		!slices.ContainsFunc(vc.Comparison.Mismatches, func(m struct {
			What string `json:"what"`
		}) bool {
			return m.What == "oracle"
		}) {
		t.Fatalf("declared comparison: %+v\n%s", vc, env.raw)
	}
	if n := len(env.raw); n > 12<<10 {
		t.Fatalf("get_job's experiment result is %d bytes, over 12 KiB", n)
	}
	// The published experiment reads back the same over MCP and the CLI.
	if len(done.NextTools) == 0 || done.NextTools[0].Tool != "get_experiment" || done.NextTools[0].Arguments["experiment_id"] != e.Experiment.ExperimentID {
		t.Fatalf("a finished experiment job's next tools: %+v", done.NextTools)
	}
	expID := e.Experiment.ExperimentID
	got := mcpResult(t, c, "get_experiment", map[string]any{"experiment_id": expID})
	want := porcelainJSON(t, dir, "experiment", "show", expID, "--limit", "20")
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("get_experiment differs from flameox experiment show --json\nMCP: %v\nCLI: %v", got, want)
	}
	detail := got.(map[string]any)
	if detail["total"].(float64) != 6 || len(detail["run_sets"].([]any)) != 2 || len(detail["variants"].([]any)) != 2 {
		t.Fatalf("get_experiment: %v", detail)
	}
}

// TestExperimentJobCancelled: cancel_job during the first trial kills its
// capture; the job ends cancelled with that trial cancelled and every
// other one unattempted.
func TestExperimentJobCancelled(t *testing.T) {
	dir := captureProject(t, experimentTOML, "w")
	c := connect(t, dir, nil)
	var p experimentPlan
	c.ok("plan_experiment", map[string]any{"experiment": "slow", "adapter": "process"}, &p)
	var started experimentJob
	c.ok("start_experiment", map[string]any{"plan_token": p.PlanToken}, &started)
	c.pollJob(started.JobID, "started its first trial", func(j job) bool { return j.RunID != "" })
	var cancelled experimentJob
	c.ok("cancel_job", map[string]any{"job_id": started.JobID}, &cancelled)
	e := cancelled.Experiment
	if cancelled.Status != "cancelled" || e == nil || e.Status != "cancelled" || e.TrialsTotal != 4 ||
		e.Outcomes["cancelled"] != 1 || e.Outcomes["unattempted"] != 3 {
		t.Fatalf("cancelled experiment job: %+v %+v", cancelled.job, e)
	}
}
