package mcpserver_test

import (
	"reflect"
	"testing"
)

// TestRecordComparison: record_comparison over the real transport records
// what compare_run_sets returns, names the comparison and the commit it
// landed in, and get_evidence reads the row back; recording it again (over
// MCP, or with flameox analyze record-comparison --json, the same model)
// publishes nothing and names the first recording; an unknown run set is a
// structured error that publishes nothing.
func TestRecordComparison(t *testing.T) {
	dir := captureProject(t, compareTOML, "scan")
	run := porcelainJSON(t, dir, "experiment", "run", "scan", "--adapter", "process").(map[string]any)
	sets := run["run_sets"].([]any)
	if len(sets) != 2 {
		t.Fatalf("run sets: %v", sets)
	}
	base, cand := sets[0].(map[string]any)["run_set_id"].(string), sets[1].(map[string]any)["run_set_id"].(string)
	args := map[string]any{"baseline_run_set": base, "candidate_run_set": cand, "metric": "gobench.sec/op", "practical_threshold": 0.05}
	c := connect(t, dir, nil)
	compared := mcpResult(t, c, "compare_run_sets", args)

	type recorded struct {
		ComparisonID    string `json:"comparison_id"`
		AnalysisID      string `json:"analysis_id"`
		ExperimentID    string `json:"experiment_id"`
		CommitID        string `json:"recorded_in_commit_id"`
		AlreadyRecorded bool   `json:"already_recorded"`
	}
	var first struct {
		Comparison map[string]any `json:"comparison"`
		Recorded   recorded       `json:"recorded"`
		NextTools  []struct {
			Tool      string         `json:"tool"`
			Arguments map[string]any `json:"arguments"`
		} `json:"next_tools"`
	}
	env := c.ok("record_comparison", args, &first)
	r := first.Recorded
	if r.AlreadyRecorded || len(r.ComparisonID) != 36 || r.AnalysisID == "" || r.CommitID == "" || r.ExperimentID == "" {
		t.Fatalf("record_comparison: %s", env.raw)
	}
	if !reflect.DeepEqual(first.Comparison, compared) {
		t.Fatalf("recorded comparison differs from compare_run_sets\nrecorded: %v\ncompared: %v", first.Comparison, compared)
	}
	if len(first.NextTools) != 1 || first.NextTools[0].Tool != "get_evidence" || first.NextTools[0].Arguments["id"] != r.ComparisonID {
		t.Fatalf("next tools: %+v", first.NextTools)
	}
	if n := len(env.raw); n > 8<<10 {
		t.Fatalf("record_comparison's result is %d bytes, over 8 KiB", n)
	}
	var row struct {
		Fields map[string]string `json:"fields"`
	}
	c.ok("get_evidence", map[string]any{"type": "comparison", "id": r.ComparisonID}, &row)
	if f := row.Fields; f["baseline_run_set_id"] != base || f["candidate_run_set_id"] != cand || f["decision"] != compared.(map[string]any)["decision"] ||
		f["validity"] != "exploratory" || f["complete_pair_n"] != "6" || f["experiment_id"] != r.ExperimentID {
		t.Fatalf("comparisons row: %v", row.Fields)
	}

	var again struct {
		Recorded recorded `json:"recorded"`
	}
	c.ok("record_comparison", args, &again)
	if want := (recorded{r.ComparisonID, r.AnalysisID, r.ExperimentID, r.CommitID, true}); again.Recorded != want {
		t.Fatalf("recorded again: %+v, want %+v", again.Recorded, want)
	}
	// The CLI's --json is the same model.
	got := mcpResult(t, c, "record_comparison", args)
	want := porcelainJSON(t, dir, "analyze", "record-comparison", base, cand, "--metric", "gobench.sec/op", "--threshold", "0.05")
	nextForms(t, "record_comparison", got, want)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("record_comparison differs from flameox analyze record-comparison --json\nMCP: %v\nCLI: %v", got, want)
	}

	c.fails("record_comparison", map[string]any{"baseline_run_set": base, "candidate_run_set": "rs-00000000000000000000000000000000",
		"metric": "gobench.sec/op"}, "NOT_FOUND")
	c.fails("record_comparison", map[string]any{"baseline_run_set": base, "candidate_run_set": cand}, "INVALID_ARGUMENTS")
	var st struct {
		Head struct {
			CommitID string `json:"commit_id"`
		} `json:"head"`
	}
	c.ok("workspace_status", nil, &st)
	if st.Head.CommitID != r.CommitID {
		t.Fatalf("HEAD is %s, not the recording's commit %s: something else was published", st.Head.CommitID, r.CommitID)
	}
}
