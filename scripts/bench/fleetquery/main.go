// Command fleetquery measures fleet queries (docs/history.md "Measured"):
// it publishes one synthetic workspace of N runs (environments, source
// states, a gobench.sec/op value per run and measurement), exports it with
// the real `flameox export corpus` code, clones the export into K
// directories under new workspace ids (hard links: the Parquet files hold
// no workspace id, the directory names and the manifest do), and times
// fleet.Query over all K directories at once, median of R.
//
//	go run ./scripts/bench/fleetquery -runs 100000 -corpora 10 -dir /tmp/fq
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/flameox/flameox/pkg/durable"
	"github.com/flameox/flameox/pkg/evidence/schema"
	"github.com/flameox/flameox/pkg/fleet"
	"github.com/flameox/flameox/pkg/publish"
	"github.com/flameox/flameox/pkg/workspace"
	"github.com/google/uuid"
)

func main() {
	runs := flag.Int("runs", 100000, "runs per corpus")
	corpora := flag.Int("corpora", 10, "exported corpora")
	repeat := flag.Int("repeat", 5, "timed repetitions per query (the median is printed)")
	dir := flag.String("dir", "", "work directory (kept); default a temporary one, removed")
	flag.Parse()
	if err := run(*runs, *corpora, *repeat, *dir); err != nil {
		fmt.Fprintln(os.Stderr, "fleetquery:", err)
		os.Exit(1)
	}
}

func run(n, k, repeat int, dir string) error {
	ctx := context.Background()
	if dir == "" {
		d, err := os.MkdirTemp("", "flameox-fleetquery-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		dir = d
	}
	project := filepath.Join(dir, "project")
	if err := os.MkdirAll(project, 0o755); err != nil {
		return err
	}
	res, err := workspace.Init(ctx, project, time.Now(), publish.FirstCommit)
	if err != nil {
		return err
	}
	ws := res.Workspace
	start := time.Now()
	if err := populate(ctx, ws, n); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "published %d runs in %s\n", n, time.Since(start).Round(time.Millisecond))
	base := filepath.Join(dir, "export-0")
	start = time.Now()
	if _, err := fleet.Export(ctx, ws, fleet.ExportRequest{To: base}, time.Now()); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "exported in %s\n", time.Since(start).Round(time.Millisecond))
	dirs := []string{base}
	for i := 1; i < k; i++ {
		d := filepath.Join(dir, fmt.Sprintf("export-%d", i))
		if err := clone(base, ws.Meta.WorkspaceID, d); err != nil {
			return err
		}
		dirs = append(dirs, d)
	}
	list, _ := json.Marshal(dirs)
	if err := os.WriteFile(filepath.Join(dir, "dirs.json"), list, 0o644); err != nil {
		return err
	}
	fmt.Printf("| query | corpora | runs | rows | total | median of %d |\n|---|---|---|---|---|---|\n", repeat)
	for _, q := range []fleet.QueryRequest{
		{Name: "runs_per_environment"},
		{Name: "failures_by_environment"},
		{Name: "metric_history", Params: map[string]string{"metric": "gobench.sec/op", "workload": "scan"}},
		{Name: "metric_changes", Params: map[string]string{"metric": "gobench.sec/op", "workload": "scan"}},
	} {
		q.From = dirs
		var times []time.Duration
		var last *fleet.QueryResult
		for r := 0; r < repeat; r++ {
			s := time.Now()
			res, err := fleet.Query(ctx, q)
			if err != nil {
				return fmt.Errorf("%s: %w", q.Name, err)
			}
			times = append(times, time.Since(s))
			last = res
		}
		sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
		fmt.Printf("| %s | %d | %d | %d | %d | %s |\n", q.Name, len(last.Corpora), n*k, last.Returned, last.Total, times[len(times)/2].Round(time.Millisecond))
	}
	return nil
}

var (
	workloads = []string{"scan", "parse", "render", "index", "compress"}
	statuses  = []string{"succeeded", "succeeded", "succeeded", "succeeded", "failed", "timed_out"}
	envs      = []string{"sha256:env-laptop", "sha256:env-ci-a", "sha256:env-ci-b", "sha256:env-arm"}
)

const states = 50

// populate publishes n runs in chunks of 10,000, as the corpus bench does.
func populate(ctx context.Context, ws *workspace.Workspace, n int) error {
	rng := rand.New(rand.NewPCG(1, 2))
	at := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for done := 0; done < n; done += 10000 {
		st, err := publish.NewStage(ws.Root, "bench", "1", time.Now())
		if err != nil {
			return err
		}
		tw := map[*schema.Table]*schema.Writer{}
		for _, t := range []*schema.Table{schema.Runs, schema.Measurements, schema.Environments, schema.SourceStates} {
			if tw[t], err = st.Table(t); err != nil {
				st.Discard()
				return err
			}
		}
		if done == 0 {
			for i, e := range envs {
				if err := tw[schema.Environments].AppendRow(row(schema.Environments, map[string]any{"environment_id": e, "identity_quality": "exact",
					"os": "linux", "arch": "amd64", "cpu_model": fmt.Sprintf("CPU %d", i), "cpu_count": int32(4 << i), "fields_json": "{}",
					"missing_fields": []string{}, "observed_at": at})); err != nil {
					return err
				}
			}
			for i := 0; i < states; i++ {
				if err := tw[schema.SourceStates].AppendRow(row(schema.SourceStates, map[string]any{"source_state_id": fmt.Sprintf("sha256:state-%d", i),
					"identity_quality": "clean", "head_commit": fmt.Sprintf("%040x", i+1), "fields_json": "{}", "missing_fields": []string{}})); err != nil {
					return err
				}
			}
		}
		for i := done; i < min(n, done+10000); i++ {
			id := uuid.NewString()
			at = at.Add(time.Second)
			state := i * states / n
			status := statuses[rng.IntN(len(statuses))]
			capture := "registered"
			if status != "succeeded" {
				capture = "failed"
			}
			if err := tw[schema.Runs].AppendRow(row(schema.Runs, map[string]any{"run_id": id, "revision": int32(2), "run_type": "execution",
				"created_at": at, "execution_status": status, "capture_status": capture, "validation_status": "not_requested",
				"environment_id": envs[rng.IntN(len(envs))], "source_state_id": fmt.Sprintf("sha256:state-%d", state),
				"workload_name": workloads[rng.IntN(len(workloads))], "manifest_path": "runs/" + id + "/manifest.json"})); err != nil {
				return err
			}
			for j := 0; j < 4; j++ {
				v := 1e-3 * (1 + 0.01*rng.NormFloat64())
				if err := tw[schema.Measurements].AppendRow(row(schema.Measurements, map[string]any{"measurement_id": fmt.Sprintf("%s/%d", id, j),
					"run_id": id, "name": "gobench.sec/op", "value_float": v, "unit": "sec/op", "aggregation": "mean", "scope": "benchmark",
					"subject": "Scan", "worker_id": "example.com/scan", "value_index": int32(j), "is_warmup": false, "evidence_level": "observed"})); err != nil {
					return err
				}
			}
		}
		files, err := st.Finish()
		if err != nil {
			st.Discard()
			return err
		}
		if _, err := publish.Commit(ctx, ws, st, files, publish.Meta{Publisher: "bench", PublisherVersion: "1"}); err != nil {
			return err
		}
		st.Discard()
	}
	return nil
}

// row renders vals in t's column order; other columns get NULL, or a
// typed zero when not nullable.
func row(t *schema.Table, vals map[string]any) []any {
	out := make([]any, 0, len(t.Columns)-schema.NumCommon)
	for _, c := range t.Columns[schema.NumCommon:] {
		v, ok := vals[c.Name]
		if !ok && !c.Nullable {
			switch c.TypeName() {
			case "string":
				v = ""
			case "int32", "int64", "uint64":
				v = 0
			case "float64":
				v = 0.0
			case "bool":
				v = false
			case "list<string>":
				v = []string{}
			case "timestamp[us, UTC]":
				v = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			}
		}
		out = append(out, v)
	}
	return out
}

// clone makes dst an export of a new workspace id with src's files
// (hard links) and manifest.
func clone(src, wsID, dst string) error {
	m, err := fleet.ReadManifest(src, wsID)
	if err != nil || m == nil {
		return fmt.Errorf("read manifest of %s: %v", src, err)
	}
	id := uuid.NewString()
	m.WorkspaceID = id
	for i, f := range m.Files {
		to := strings.Replace(f.Path, "workspace_id="+wsID, "workspace_id="+id, 1)
		if err := os.MkdirAll(filepath.Join(dst, filepath.Dir(to)), 0o755); err != nil {
			return err
		}
		if err := os.Link(filepath.Join(src, f.Path), filepath.Join(dst, to)); err != nil {
			return err
		}
		m.Files[i].Path = to
	}
	b, err := durable.MarshalIndent(m)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(dst, "manifests"), 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dst, "manifests", id+".json"), b, 0o644)
}
