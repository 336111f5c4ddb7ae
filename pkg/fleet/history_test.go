package fleet

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flameox/flameox/pkg/internal/testenv"
)

// series builds a corpus of one benchmark over len(means) source states
// (commit i is strings.Repeat of its digit), two runs of five values per
// state, values mean*(1 + sd*N(0,1)) from a fixed seed.
func series(means []float64, sd float64, seed uint64) (*bench, []string) {
	b := newBench()
	b.env("env-1", "linux", "CPU")
	rng := rand.New(rand.NewPCG(seed, 7))
	var commits []string
	for i, m := range means {
		c := fmt.Sprintf("%040x", i+1)
		commits = append(commits, c)
		b.state(fmt.Sprintf("ss-%d", i), c)
		for r := 0; r < 2; r++ {
			vs := make([]float64, 5)
			for j := range vs {
				vs[j] = m * (1 + sd*rng.NormFloat64())
			}
			b.run("env-1", fmt.Sprintf("ss-%d", i), "scan", "succeeded", "BenchmarkScan", "sec/op", vs...)
		}
	}
	return b, commits
}

func TestHistoryChangePoints(t *testing.T) {
	flat := []float64{100, 100, 100, 100, 100, 100, 100, 100}
	step := []float64{100, 100, 100, 100, 120, 120, 120, 120}
	faster := []float64{100, 100, 100, 80, 80, 80}
	small := []float64{100, 100, 100, 103, 103, 103}
	tests := []struct {
		name      string
		means     []float64
		sd        float64
		threshold float64
		want      map[int]string // point index -> direction of its change point
	}{
		{"a real step is flagged once", step, 0.01, 0, map[int]string{4: "regression"}},
		{"an improvement is flagged", faster, 0.01, 0, map[int]string{3: "improvement"}},
		{"noise only is not flagged", flat, 0.01, 0, nil},
		{"wide noise only is not flagged", flat, 0.05, 0, nil},
		{"a step hidden in wide noise is not flagged", small, 0.05, 0, nil},
		{"a small step in tight noise is flagged", small, 0.002, 0, map[int]string{3: "regression"}},
		{"a small step under the threshold is not flagged", small, 0.002, 0.05, nil},
		{"a step past the threshold is flagged", step, 0.01, 0.05, map[int]string{4: "regression"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, commits := series(tc.means, tc.sd, 1)
			dir := t.TempDir()
			ws := exported(t, dir, b.data)
			for _, from := range []string{"export", "workspace"} {
				req := HistoryRequest{Metric: "gobench.sec/op", Workload: "scan", Benchmark: "BenchmarkScan", Threshold: tc.threshold}
				if from == "export" {
					req.From = []string{dir}
				}
				h, err := MetricHistory(context.Background(), ws, req)
				if err != nil {
					t.Fatal(err)
				}
				if len(h.Series) != 1 {
					t.Fatalf("%s: series %+v", from, h.Series)
				}
				s := h.Series[0]
				if len(s.Points) != len(tc.means) || s.Unit != "sec/op" || s.Polarity != "lower_is_better" {
					t.Fatalf("%s: %d points, unit %s %s", from, len(s.Points), s.Unit, s.Polarity)
				}
				got := map[int]string{}
				for i, p := range s.Points {
					if p.HeadCommit != commits[i] || p.N != 10 || p.Runs != 2 {
						t.Errorf("%s: point %d is %s with %d values in %d runs, want %s", from, i, p.HeadCommit, p.N, p.Runs, commits[i])
					}
					if (i == 0) != (p.Change == nil) {
						t.Errorf("%s: point %d change %+v", from, i, p.Change)
					}
					if p.Change != nil && p.Change.ChangePoint {
						got[i] = p.Change.Direction
					}
				}
				if fmt.Sprint(got) != fmt.Sprint(orEmpty(tc.want)) || h.ChangePoints != len(tc.want) {
					t.Errorf("%s: change points %v (%d), want %v", from, got, h.ChangePoints, tc.want)
				}
				if len(h.Corpora) != 1 || h.Corpora[0].CommitID == "" {
					t.Errorf("%s: corpora %+v", from, h.Corpora)
				}
			}
		})
	}
}

func orEmpty(m map[int]string) map[int]string {
	if m == nil {
		return map[int]string{}
	}
	return m
}

// TestHistoryGitOrder: commits measured out of order are put in the
// repository's order when the project is a git checkout that has them.
func TestHistoryGitOrder(t *testing.T) {
	git := testenv.LookPath(t, "git")
	repo := t.TempDir()
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(git, args...)
		cmd.Dir = repo
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com",
			"GIT_AUTHOR_DATE=2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE=2026-01-01T00:00:00Z")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	run("init", "-q")
	var commits []string
	for i := 0; i < 3; i++ {
		must(t, os.WriteFile(filepath.Join(repo, "f"), []byte{byte('a' + i)}, 0o644))
		run("add", "f")
		run("commit", "-q", "-m", fmt.Sprint(i))
		commits = append(commits, run("rev-parse", "HEAD"))
	}
	// Measured newest commit first.
	b := newBench()
	b.env("env-1", "linux", "CPU")
	for i := 2; i >= 0; i-- {
		b.state(fmt.Sprintf("ss-%d", i), commits[i])
		b.run("env-1", fmt.Sprintf("ss-%d", i), "scan", "succeeded", "BenchmarkScan", "sec/op", float64(i+1))
	}
	dir := t.TempDir()
	exported(t, dir, b.data)
	for _, tc := range []struct {
		repo  string
		order string
		want  []string
	}{
		{repo, OrderGit, commits},
		{"", OrderFirstMeasured, []string{commits[2], commits[1], commits[0]}},
	} {
		h, err := MetricHistory(context.Background(), nil, HistoryRequest{Metric: "gobench.sec/op", Workload: "scan", From: []string{dir}, Repo: tc.repo})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, p := range h.Series[0].Points {
			got = append(got, p.HeadCommit)
		}
		if h.Order != tc.order || fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("repo %q: order %s %v, want %s %v", tc.repo, h.Order, got, tc.order, tc.want)
		}
	}
}

func TestHistoryRefuses(t *testing.T) {
	dir := t.TempDir()
	b, _ := series([]float64{1}, 0, 1)
	exported(t, dir, b.data)
	for _, req := range []HistoryRequest{
		{Workload: "scan", From: []string{dir}},
		{Metric: "gobench.sec/op", From: []string{dir}},
		{Metric: "gobench.sec/op", Workload: "scan", From: []string{dir}, Threshold: -1},
		{Metric: "gobench.sec/op", Workload: "scan", From: []string{dir}, Limit: -1},
		{Metric: "gobench.sec/op", Workload: "scan"}, // neither a workspace nor exports
	} {
		if _, err := MetricHistory(context.Background(), nil, req); err == nil {
			t.Errorf("%+v: no error", req)
		}
	}
	h, err := MetricHistory(context.Background(), nil, HistoryRequest{Metric: "gobench.B/op", Workload: "scan", From: []string{dir}})
	if err != nil || len(h.Series) != 0 || len(h.Warnings) != 1 {
		t.Fatalf("no values: %+v, %v", h, err)
	}
}

// TestMetricChangesQuery: the fleet query metric_changes is the history
// as rows, over exports or the workspace.
func TestMetricChangesQuery(t *testing.T) {
	b, commits := series([]float64{100, 100, 100, 120, 120}, 0.01, 1)
	dir := t.TempDir()
	ws := exported(t, dir, b.data)
	params := map[string]string{"metric": "gobench.sec/op", "workload": "scan"}
	for _, req := range []QueryRequest{
		{Name: "metric_changes", From: []string{dir}, Params: params},
		{Name: "metric_changes@1", Workspace: ws, Params: params},
		{Name: "metric_changes", Workspace: ws, Params: params, Limit: 2},
	} {
		res, err := Query(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		want := min(len(commits), max(req.Limit, len(commits)))
		if req.Limit > 0 {
			want = req.Limit
		}
		if res.Total != len(commits) || len(res.Rows) != want || res.Truncated != (want < len(commits)) {
			t.Fatalf("%+v: total %d rows %d truncated %v", req, res.Total, len(res.Rows), res.Truncated)
		}
		for i, row := range res.Rows {
			flagged := row[15] == true
			if row[4] != commits[i] || flagged != (i == 3) || (i == 3 && row[16] != "regression") {
				t.Errorf("%+v: row %d %v", req, i, row)
			}
		}
	}
	if _, err := Query(context.Background(), QueryRequest{Name: "metric_changes", Params: params}); err == nil {
		t.Error("metric_changes without a workspace or exports answered")
	}
}
