package pyperf

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/flameox/flameox/pkg/adapter"
	"github.com/flameox/flameox/pkg/adapter/adaptertest"
	"github.com/flameox/flameox/pkg/adapter/process"
	"github.com/flameox/flameox/pkg/broker"
	"github.com/flameox/flameox/pkg/capture"
	"github.com/flameox/flameox/pkg/corpus"
	"github.com/flameox/flameox/pkg/evidence/schema"
	"github.com/flameox/flameox/pkg/inquiry"
	"github.com/flameox/flameox/pkg/publish"
	"github.com/flameox/flameox/pkg/workload"
	"github.com/flameox/flameox/pkg/workspace"
)

// experimentToml compares two sizes of one Python command under pyperf,
// 2 blocks of both, each trial 2 worker processes of 1 warm-up and 2
// values, with loops fixed so no calibration run is added.
const experimentToml = `schema_version = 1

[workloads.sum]
argv = ["python3", "-c", "sum(range({n}))"]
timeout_seconds = 300
options = { processes = "2", values = "2", warmups = "1", loops = "1", name = "sum" }
[workloads.sum.parameters]
n = [1000, 2000]

[experiments.size]
workload = "sum"
variants = [1000, 2000]
blocks = 2
random_seed = 3
`

// TestLiveExperiment runs an experiment of pyperf trials end to end and
// finds, in the published measurements, every trial's pyperf hierarchy
// (worker process, warm-ups, values) tagged with the trial, its variant
// and block: the worker hierarchy survives the experiment.
func TestLiveExperiment(t *testing.T) {
	if testing.Short() {
		t.Skip("live capture")
	}
	a := New()
	adaptertest.Usable(t, a.Probe(context.Background()))
	ctx := context.Background()
	project := t.TempDir()
	if err := os.WriteFile(filepath.Join(project, workload.FileName), []byte(experimentToml), 0o644); err != nil {
		t.Fatal(err)
	}
	init, err := workspace.Init(ctx, project, time.Now(), publish.FirstCommit)
	if err != nil {
		t.Fatal(err)
	}
	ws := init.Workspace
	f, err := workload.Load(project)
	if err != nil {
		t.Fatal(err)
	}
	wl, _ := f.Workload("sum")
	if _, err := workload.Approve(ctx, ws, wl, time.Now()); err != nil {
		t.Fatal(err)
	}
	reg := adapter.NewRegistry(process.New(), a)
	svc := capture.New(ws, capture.Options{Identity: &capture.IdentityCollector{Runner: broker.Default}, Adapters: reg})
	pub := publish.New(ws, publish.Options{Extractors: reg.Extractors()})
	res, err := pub.RunExperiment(ctx, svc, capture.ExperimentRequest{Experiment: "size", Adapter: Name}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != capture.ExperimentCompleted || res.Outcomes[inquiry.TrialSucceeded] != 4 || len(res.RunSets) != 2 {
		t.Fatalf("experiment %s, outcomes %v, %d run sets: %+v", res.Status, res.Outcomes, len(res.RunSets), res.Trials)
	}
	trials := map[string]capture.TrialResult{}
	for _, tr := range res.Trials {
		trials[tr.RunID] = tr
	}
	snap, err := corpus.Pin(ws.Root)
	if err != nil {
		t.Fatal(err)
	}
	type tally struct {
		values, warmups int
		workers         map[string]bool
	}
	got := map[string]*tally{}
	cols := []string{"run_id", "name", "worker_id", "is_warmup", "trial_id", "variant_id", "block_id"}
	for _, path := range snap.Files[schema.Measurements.Name] {
		err := schema.Scan(ctx, schema.Measurements, path, cols, func(row []any) error {
			if row[1] != "pyperf.sec" {
				return nil
			}
			tr, ok := trials[row[0].(string)]
			if !ok {
				t.Errorf("a pyperf value of run %v, which is no trial's", row[0])
				return nil
			}
			if row[4] != tr.TrialID || row[5] != tr.VariantID || row[6] != tr.BlockID {
				t.Errorf("run %s's value is placed in %v/%v/%v, its trial is %s/%s/%s", tr.RunID, row[4], row[5], row[6], tr.TrialID, tr.VariantID, tr.BlockID)
			}
			c := got[tr.RunID]
			if c == nil {
				c = &tally{workers: map[string]bool{}}
				got[tr.RunID] = c
			}
			c.workers[row[2].(string)] = true
			if row[3].(bool) {
				c.warmups++
			} else {
				c.values++
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(got) != 4 {
		t.Fatalf("pyperf values of %d trials' runs, want 4", len(got))
	}
	for id, c := range got {
		if c.values != 4 || c.warmups != 2 || len(c.workers) != 2 {
			t.Errorf("run %s: %d values, %d warm-ups, %d workers; want 4, 2 and 2", id, c.values, c.warmups, len(c.workers))
		}
	}
}
