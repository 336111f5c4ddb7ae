package capture_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/flameox/flameox/pkg/adapter"
	"github.com/flameox/flameox/pkg/adapter/process"
	"github.com/flameox/flameox/pkg/broker"
	"github.com/flameox/flameox/pkg/capture"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/inquiry"
	"github.com/flameox/flameox/pkg/publish"
	"github.com/flameox/flameox/pkg/workload"
	"github.com/flameox/flameox/pkg/workspace"
)

// experimentToml declares four treatments of one workload: good and
// broken both exit 0 but broken's oracle prints another number; fail
// exits 3; slow outlives its timeout.
const experimentToml = `schema_version = 1
[workloads.w]
argv = ["sh", "-c", "case $0 in fail) exit 3;; slow) sleep 30;; esac; echo ran $0 $1", "{impl}", "{n}"]
timeout_seconds = 1
[workloads.w.parameters]
impl = ["good", "broken", "fail", "slow", "other"]
n = [1, 2]
[workloads.w.oracle]
strength = "cross_treatment_equivalence"
argv = ["sh", "-c", "if [ $0 = broken ]; then echo 41 $1; else echo 42 $1; fi", "{impl}", "{n}"]
tolerance = 0.001

[experiments.all]
workload = "w"
variants = ["good", "broken", "fail", "slow"]
treatment_parameter = "impl"
blocks = 2
random_seed = 3

[experiments.pair]
workload = "w"
variants = ["good", "other"]
treatment_parameter = "impl"
scaling_parameter = "n"
scaling_values = [1, 2]
blocks = 3
random_seed = 11
`

func experimentService(t *testing.T) *capture.Service {
	t.Helper()
	project := t.TempDir()
	if err := os.WriteFile(filepath.Join(project, workload.FileName), []byte(experimentToml), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	res, err := workspace.Init(ctx, project, time.Now(), publish.FirstCommit)
	if err != nil {
		t.Fatal(err)
	}
	ws := res.Workspace
	ws.Config.Execution.GraceSeconds = 1
	f, err := workload.Load(project)
	if err != nil {
		t.Fatal(err)
	}
	wl, _ := f.Workload("w")
	if _, err := workload.Approve(ctx, ws, wl, time.Now()); err != nil {
		t.Fatal(err)
	}
	return capture.New(ws, capture.Options{Identity: &capture.IdentityCollector{Runner: broker.Default},
		Adapters: adapter.NewRegistry(process.New())})
}

// TestExperimentOutcomes: every planned trial ends in one outcome and is
// counted; a failing workload is failed, one past its timeout timed_out,
// and the broken treatment fails the cross-treatment oracle while the
// good one passes it.
func TestExperimentOutcomes(t *testing.T) {
	svc := experimentService(t)
	var ran, blocks int
	var declared []any
	res, err := svc.RunExperiment(context.Background(), capture.ExperimentRequest{Experiment: "all", Adapter: "process"},
		capture.ExperimentSink{
			Declared: func(b []any) error { declared = b; return nil },
			Ran:      func(*capture.Result) error { ran++; return nil },
			Trials:   func(ts []inquiry.Trial) error { blocks++; return nil },
		})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != capture.ExperimentCompleted || len(res.Trials) != 8 || ran != 8 || blocks != 2 {
		t.Fatalf("status %s, %d trials, %d runs, %d blocks", res.Status, len(res.Trials), ran, blocks)
	}
	// An investigation of its own, the experiment and its four variants,
	// declared before any trial.
	if len(declared) != 6 || res.Investigation == nil || res.Experiment.InvestigationID != res.Investigation.InvestigationID {
		t.Fatalf("declared %d records: %+v", len(declared), declared)
	}
	want := map[string]string{"good": inquiry.TrialSucceeded, "broken": inquiry.TrialOracleFailed,
		"fail": inquiry.TrialFailed, "slow": inquiry.TrialTimedOut}
	perBlock := map[string]int{}
	for _, tr := range res.Trials {
		if tr.Outcome != want[tr.Variant] {
			t.Errorf("%s trial in %s: outcome %s (%s), want %s", tr.Variant, tr.BlockID, tr.Outcome, tr.ExclusionReason, want[tr.Variant])
		}
		if tr.RunID == "" {
			t.Errorf("%s trial has no run", tr.Variant)
		}
		perBlock[tr.BlockID+"/"+tr.Variant]++
	}
	for k, n := range perBlock {
		if n != 1 {
			t.Errorf("%s ran %d times", k, n)
		}
	}
	if res.Outcomes[inquiry.TrialSucceeded] != 2 || res.Outcomes[inquiry.TrialOracleFailed] != 2 ||
		res.Outcomes[inquiry.TrialFailed] != 2 || res.Outcomes[inquiry.TrialTimedOut] != 2 {
		t.Fatalf("outcomes %v", res.Outcomes)
	}
	journal := readJournal(t, capture.JournalPath(svc.WS.Root, res.Experiment.ExperimentID))
	// Every trial planned, registered before it ran and closed after (24
	// trial lines); both blocks handed to the sink; the journal closed.
	if journal[inquiry.KindTrial] != 24 || journal[inquiry.KindExperiment] != 1 || journal[inquiry.KindVariant] != 4 ||
		journal["experiment_block_handed_over"] != 2 || journal["experiment_closed"] != 1 || journal["experiment_journal"] != 1 {
		t.Fatalf("journal holds %v", journal)
	}
}

// TestExperimentCancelled: cancelling during the second trial cancels
// that trial's capture and records every later trial unattempted; no
// trial is left pending or dropped.
func TestExperimentCancelled(t *testing.T) {
	svc := experimentService(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	started := 0
	res, err := svc.RunExperiment(ctx, capture.ExperimentRequest{Experiment: "pair", Adapter: "process"},
		capture.ExperimentSink{Ran: func(*capture.Result) error {
			started++
			if started == 2 {
				cancel()
			}
			return nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != capture.ExperimentCancelled || len(res.Trials) != 12 {
		t.Fatalf("status %s with %d trials", res.Status, len(res.Trials))
	}
	n := 0
	for _, o := range inquiry.TerminalOutcomes() {
		n += res.Outcomes[o]
	}
	if n != 12 || res.Outcomes[inquiry.TrialUnattempted] != 10 || res.Outcomes[inquiry.TrialSucceeded] != 2 {
		t.Fatalf("outcomes %v", res.Outcomes)
	}
	for _, tr := range res.Trials[2:] {
		if tr.Outcome != inquiry.TrialUnattempted || tr.ExclusionReason == "" || tr.RunID != "" {
			t.Fatalf("trial %+v after the cancellation", tr)
		}
	}
	if res.Trials[0].ParameterName != "n" || res.Trials[0].ParameterValueInt == nil {
		t.Fatalf("the scaling parameter is not recorded: %+v", res.Trials[0].Trial)
	}
}

// TestExperimentRefusesUnapproved: an experiment whose workload is not
// approved records nothing.
func TestExperimentRefusesUnapproved(t *testing.T) {
	svc := experimentService(t)
	toml := experimentToml + "\n[workloads.w.env]\nX = \"1\"\n"
	if err := os.WriteFile(filepath.Join(svc.WS.ProjectRoot, workload.FileName), []byte(toml), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := svc.RunExperiment(context.Background(), capture.ExperimentRequest{Experiment: "pair", Adapter: "process"}, capture.ExperimentSink{})
	if fault.As(err).Code != fault.ExecutionRefused {
		t.Fatalf("err = %v, want EXECUTION_REFUSED", err)
	}
	if _, err := os.Stat(filepath.Join(svc.WS.Root, "experiments")); !os.IsNotExist(err) {
		t.Fatalf("a refused experiment left a journal: %v", err)
	}
}

func readJournal(t *testing.T, path string) map[string]int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	kinds := map[string]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var h struct {
			Record, Outcome string
		}
		if err := json.Unmarshal(sc.Bytes(), &h); err != nil {
			t.Fatal(err)
		}
		kinds[h.Record]++
	}
	return kinds
}
