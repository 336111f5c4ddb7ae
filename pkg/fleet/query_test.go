package fleet

import (
	"context"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/flameox/flameox/pkg/evidence/schema"
	"github.com/flameox/flameox/pkg/fault"
)

// twoExports exports two workspaces: A (a laptop, two commits, one
// failed run) into dirA, B (a CI runner) into dirB or, when shared is
// set, both into one directory. It returns the directories and the
// workspace ids.
func twoExports(t *testing.T, shared bool) (dirA, dirB, wsA, wsB string) {
	t.Helper()
	a := newBench()
	a.env("env-laptop", "linux", "Laptop CPU")
	a.state("ss-1", "1111111111111111111111111111111111111111")
	a.state("ss-2", "2222222222222222222222222222222222222222")
	a.run("env-laptop", "ss-1", "scan", "succeeded", "BenchmarkScan", "sec/op", 10, 11, 12)
	a.run("env-laptop", "ss-2", "scan", "succeeded", "BenchmarkScan", "sec/op", 20, 21, 22)
	a.run("env-laptop", "ss-2", "scan", "failed", "", "sec/op")
	b := newBench()
	b.env("env-ci", "linux", "CI CPU")
	b.state("ss-2", "2222222222222222222222222222222222222222")
	b.run("env-ci", "ss-2", "scan", "succeeded", "BenchmarkScan", "sec/op", 30, 31)
	b.run("env-ci", "ss-2", "scan", "timed_out", "", "sec/op")
	b.run("env-ci", "ss-2", "other", "succeeded", "BenchmarkOther", "sec/op", 5)
	b.data[schema.Comparisons] = []map[string]any{{"comparison_id": "cmp-1", "baseline_run_set_id": "rs-1", "candidate_run_set_id": "rs-2",
		"metric": "gobench.sec/op", "unit": "sec/op", "polarity": "lower_is_better", "estimand": "median_ratio", "method": "order_statistic",
		"independent_unit": "run", "decision": "meaningful_regression", "validity": "exploratory", "mismatches": []string{}, "relative_change": 0.5}}
	dirA = t.TempDir()
	dirB = dirA
	if !shared {
		dirB = t.TempDir()
	}
	wsA = exported(t, dirA, a.data).Meta.WorkspaceID
	wsB = exported(t, dirB, b.data).Meta.WorkspaceID
	return dirA, dirB, wsA, wsB
}

func TestFleetQuery(t *testing.T) {
	ctx := context.Background()
	dirA, dirB, wsA, wsB := twoExports(t, false)
	shared, _, sA, sB := twoExports(t, true)
	both := []string{wsA, wsB}
	slices.Sort(both)
	bothShared := []string{sA, sB}
	slices.Sort(bothShared)
	tests := []struct {
		name    string
		from    []string
		query   string
		params  map[string]string
		limit   int
		rows    [][]any // the leading columns of each row, compared
		total   int
		corpora []string
	}{
		{"runs per environment over two dirs", []string{dirA, dirB}, "runs_per_environment", nil, 0,
			[][]any{{"env-ci", "linux", "amd64", "CI CPU", int64(4), int64(3), int64(1), int64(1)}, {"env-laptop", "linux", "amd64", "Laptop CPU", int64(4), int64(3), int64(1), int64(1)}},
			2, both},
		{"one directory holding two workspaces", []string{shared}, "runs_per_environment", map[string]string{"workload": "scan"}, 0,
			[][]any{{"env-laptop", "linux", "amd64", "Laptop CPU", int64(4), int64(3), int64(1), int64(1)}, {"env-ci", "linux", "amd64", "CI CPU", int64(4), int64(2), int64(1), int64(1)}},
			2, bothShared},
		{"metric history across states and environments", []string{dirA, dirB}, "metric_history@1", map[string]string{"metric": "gobench.sec/op", "workload": "scan"}, 0,
			[][]any{
				{"scan", "BenchmarkScan", "sec/op", "env-ci", "2222222222222222222222222222222222222222", int64(1), int64(1), int64(2), 30.5, 30.0, 31.0},
				{"scan", "BenchmarkScan", "sec/op", "env-laptop", "1111111111111111111111111111111111111111", int64(1), int64(1), int64(3), 11.0, 10.0, 12.0},
				{"scan", "BenchmarkScan", "sec/op", "env-laptop", "2222222222222222222222222222222222222222", int64(1), int64(1), int64(3), 21.0, 20.0, 22.0},
			}, 3, both},
		{"metric history truncated", []string{dirA, dirB}, "metric_history", map[string]string{"metric": "gobench.sec/op"}, 1,
			[][]any{{"other", "BenchmarkOther", "sec/op", "env-ci"}}, 4, both},
		{"failures by environment", []string{dirA, dirB}, "failures_by_environment", nil, 0,
			[][]any{{"env-ci", "scan", "timed_out", "failed"}, {"env-laptop", "scan", "failed", "failed"}}, 2, both},
		{"newest comparisons", []string{dirB}, "newest_comparisons", map[string]string{"decision": "meaningful_regression"}, 0,
			[][]any{{wsB, "cmp-1", "gobench.sec/op", "sec/op", "meaningful_regression", "exploratory", 0.5}}, 1, []string{wsB}},
		{"comparisons only in one corpus", []string{dirA}, "newest_comparisons", nil, 0, nil, 0, []string{wsA}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Query(ctx, QueryRequest{From: tc.from, Name: tc.query, Params: tc.params, Limit: tc.limit})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, c := range res.Corpora {
				got = append(got, c.WorkspaceID)
				if c.CommitID == "" {
					t.Errorf("corpus %s without its commit", c.WorkspaceID)
				}
			}
			slices.Sort(got)
			if !slices.Equal(got, tc.corpora) {
				t.Errorf("corpora %v, want %v", got, tc.corpora)
			}
			if res.Total != tc.total || res.Returned != len(tc.rows) || res.Truncated != (tc.total > len(tc.rows)) {
				t.Errorf("total %d returned %d truncated %v, want %d %d", res.Total, res.Returned, res.Truncated, tc.total, len(tc.rows))
			}
			if len(res.Rows) != len(tc.rows) {
				t.Fatalf("rows %v, want %v", res.Rows, tc.rows)
			}
			for i, want := range tc.rows {
				if len(res.Rows[i]) != len(res.Columns) {
					t.Errorf("row %d has %d cells for %d columns", i, len(res.Rows[i]), len(res.Columns))
				}
				for j, w := range want {
					if res.Rows[i][j] != w {
						t.Errorf("row %d column %s = %#v, want %#v (row %v)", i, res.Columns[j], res.Rows[i][j], w, res.Rows[i])
					}
				}
			}
		})
	}
}

func TestFleetQueryRefuses(t *testing.T) {
	ctx := context.Background()
	dirA, _, _, _ := twoExports(t, false)
	empty := t.TempDir()
	stray := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(stray, "manifests"), 0o755))
	must(t, os.WriteFile(filepath.Join(stray, "manifests", "other.json"), []byte(`{"workspace_id":"../x","commit_id":"c"}`), 0o644))
	tests := []struct {
		name string
		req  QueryRequest
		code fault.Code
	}{
		{"unknown query", QueryRequest{From: []string{dirA}, Name: "SELECT 1"}, fault.InvalidArguments},
		{"unknown version", QueryRequest{From: []string{dirA}, Name: "runs_per_environment@9"}, fault.InvalidArguments},
		{"unknown parameter", QueryRequest{From: []string{dirA}, Name: "runs_per_environment", Params: map[string]string{"sql": "x"}}, fault.InvalidArguments},
		{"missing required parameter", QueryRequest{From: []string{dirA}, Name: "metric_history"}, fault.InvalidArguments},
		{"no directory", QueryRequest{Name: "runs_per_environment"}, fault.InvalidArguments},
		{"not an export", QueryRequest{From: []string{empty}, Name: "runs_per_environment"}, fault.NotFound},
		{"manifest naming another path", QueryRequest{From: []string{stray}, Name: "runs_per_environment"}, fault.WorkspaceInvalid},
		{"limit past the maximum", QueryRequest{From: []string{dirA}, Name: "runs_per_environment", Limit: 5000}, fault.QueryBudgetExceeded},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Query(ctx, tc.req)
			var fe *fault.Error
			if !errors.As(err, &fe) || fe.Code != tc.code {
				t.Fatalf("err = %v, want %s", err, tc.code)
			}
		})
	}
}

// TestFleetQueryReadsOnce: the same workspace in two directories is
// read once, so nothing is counted twice.
func TestFleetQueryReadsOnce(t *testing.T) {
	b := newBench()
	b.env("env-laptop", "linux", "Laptop CPU")
	b.state("ss-1", "1111111111111111111111111111111111111111")
	for i := 0; i < 3; i++ {
		b.run("env-laptop", "ss-1", "scan", "succeeded", "BenchmarkScan", "sec/op", 1)
	}
	dirA, copyA := t.TempDir(), t.TempDir()
	exportTo(t, copyA, exported(t, dirA, b.data))
	res, err := Query(context.Background(), QueryRequest{From: []string{dirA, copyA}, Name: "runs_per_environment"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Corpora) != 1 || len(res.Warnings) != 1 || len(res.Rows) != 1 || res.Rows[0][5] != int64(3) {
		t.Fatalf("corpora %v warnings %v rows %v", res.Corpora, res.Warnings, res.Rows)
	}
}

func TestQueriesListed(t *testing.T) {
	seen := map[string]bool{}
	for _, n := range Queries() {
		if seen[n.Name] || n.Version == "" || n.Description == "" || len(n.Columns) == 0 || len(n.Tables) == 0 {
			t.Errorf("query %+v", n)
		}
		seen[n.Name] = true
	}
	for _, want := range []string{"metric_history", "runs_per_environment", "failures_by_environment", "newest_comparisons"} {
		if !seen[want] {
			t.Errorf("no query %s", want)
		}
	}
}

// TestFleetQueryCurrentRows: a run's revisions count once, at the newest
// (here: failed after it had succeeded), and a measurement published
// twice is one value.
func TestFleetQueryCurrentRows(t *testing.T) {
	b := newBench()
	b.env("env-1", "linux", "CPU")
	b.state("ss-1", "1111111111111111111111111111111111111111")
	id := b.run("env-1", "ss-1", "scan", "succeeded", "BenchmarkScan", "sec/op", 1, 2, 3)
	b.run("env-1", "ss-1", "scan", "succeeded", "BenchmarkScan", "sec/op", 4)
	rev := maps.Clone(b.data[schema.Runs][0])
	rev["revision"], rev["execution_status"], rev["capture_status"] = int32(2), "failed", "failed"
	b.data[schema.Runs] = append(b.data[schema.Runs], rev)
	b.data[schema.Measurements] = append(b.data[schema.Measurements], maps.Clone(b.data[schema.Measurements][0]))
	dir := t.TempDir()
	exported(t, dir, b.data)
	ctx := context.Background()
	res, err := Query(ctx, QueryRequest{From: []string{dir}, Name: "runs_per_environment"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 1 || res.Rows[0][5] != int64(2) || res.Rows[0][6] != int64(1) {
		t.Errorf("runs per environment: %v", res.Rows)
	}
	res, err = Query(ctx, QueryRequest{From: []string{dir}, Name: "failures_by_environment"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 1 || res.Rows[0][6] != int64(1) || res.Rows[0][9] != id {
		t.Errorf("failures: %v", res.Rows)
	}
	res, err = Query(ctx, QueryRequest{From: []string{dir}, Name: "metric_history", Params: map[string]string{"metric": "gobench.sec/op"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 1 || res.Rows[0][7] != int64(4) || res.Rows[0][6] != int64(2) {
		t.Errorf("metric history: %v", res.Rows)
	}
}
