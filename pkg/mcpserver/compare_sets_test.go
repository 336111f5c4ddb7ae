package mcpserver_test

import (
	"reflect"
	"testing"
)

// compareTOML declares two treatments of a go-test-style benchmark whose
// candidate is about 10% faster in every block.
const compareTOML = `schema_version = 1
[workloads.scan]
argv = ["/bin/sh", "-c", "r=$(od -An -N1 -tu1 /dev/urandom); case $0 in base) v=100;; *) v=90;; esac; echo \"BenchmarkScan 1000 $((v + r % 5)) ns/op\"", "{impl}"]
timeout_seconds = 60
[workloads.scan.parameters]
impl = ["base", "cand"]

[experiments.scan]
workload = "scan"
variants = ["base", "cand"]
blocks = 6
random_seed = 2
primary_metric = "gobench.sec/op"
polarity = "lower_is_better"
practical_threshold = 0.05
`

// TestCompareRunSetsParity: compare_run_sets returns what flameox
// experiment compare --json and flameox compare --json print for the same
// run sets and rule, by default and with a seeded bootstrap; a bad rule
// is a structured error.
func TestCompareRunSetsParity(t *testing.T) {
	dir := captureProject(t, compareTOML, "scan")
	run := porcelainJSON(t, dir, "experiment", "run", "scan", "--adapter", "process").(map[string]any)
	sets := run["run_sets"].([]any)
	if len(sets) != 2 {
		t.Fatalf("run sets: %v", sets)
	}
	base, cand := sets[0].(map[string]any)["run_set_id"].(string), sets[1].(map[string]any)["run_set_id"].(string)
	c := connect(t, dir, nil)
	for _, tc := range []struct {
		name string
		args map[string]any
		cli  []string
	}{
		{"default", map[string]any{"practical_threshold": 0.05}, []string{"--threshold", "0.05"}},
		{"bootstrap", map[string]any{"confidence_method": "bca", "seed": 3, "resamples": 999, "confidence_level": 0.9},
			[]string{"--method", "bca", "--seed", "3", "--resamples", "999", "--confidence", "0.9"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := map[string]any{"baseline_run_set": base, "candidate_run_set": cand, "metric": "gobench.sec/op"}
			for k, v := range tc.args {
				args[k] = v
			}
			got := mcpResult(t, c, "compare_run_sets", args)
			flags := append([]string{base, cand, "--metric", "gobench.sec/op"}, tc.cli...)
			for _, cmd := range [][]string{{"experiment", "compare"}, {"compare"}} {
				if want := porcelainJSON(t, dir, append(cmd, flags...)...); !reflect.DeepEqual(got, want) {
					t.Fatalf("compare_run_sets differs from flameox %v --json\nMCP: %v\nCLI: %v", cmd, got, want)
				}
			}
			r := got.(map[string]any)
			// Not a committed project: the source identity is partial, so at best exploratory.
			if r["decision"] != "meaningful_improvement" || r["validity"] != "exploratory" || r["paired_count"].(float64) != 6 {
				t.Fatalf("comparison: %v", r)
			}
		})
	}
	c.fails("compare_run_sets", map[string]any{"baseline_run_set": base, "candidate_run_set": cand, "metric": "gobench.sec/op",
		"confidence_method": "magic"}, "INVALID_ARGUMENTS")
	c.fails("compare_run_sets", map[string]any{"baseline_run_set": base, "candidate_run_set": base, "metric": "gobench.sec/op"}, "COMPARISON_INVALID")

	// The investigation the run opened reads back as the same report over
	// MCP and the CLI.
	inv := run["experiment"].(map[string]any)["investigation_id"].(string)
	got := mcpResult(t, c, "summarize_investigation", map[string]any{"investigation_id": inv})
	if want := porcelainJSON(t, dir, "evidence", "summarize", inv, "--format", "json"); !reflect.DeepEqual(got, want) {
		t.Fatalf("summarize_investigation differs from flameox evidence summarize --json\nMCP: %v\nCLI: %v", got, want)
	}
	r := got.(map[string]any)
	if ex := r["experiments"].([]any); len(ex) != 1 || ex[0].(map[string]any)["trials_total"].(float64) != 12 {
		t.Fatalf("report: %v", r)
	}
	c.fails("summarize_investigation", map[string]any{"investigation_id": "inv-missing"}, "NOT_FOUND")
}
