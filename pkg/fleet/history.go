package fleet

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/flameox/flameox/pkg/broker"
	"github.com/flameox/flameox/pkg/catalog"
	"github.com/flameox/flameox/pkg/compare"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/identity"
	"github.com/flameox/flameox/pkg/query"
	"github.com/flameox/flameox/pkg/stats"
	"github.com/flameox/flameox/pkg/workspace"
)

// MaxHistoryValues bounds the values one history reads into memory (the
// tests between source states need every value, as benchstat does).
const MaxHistoryValues = 1 << 20

// MaxSeries bounds the series (environment, benchmark, unit) one history
// returns.
const MaxSeries = 50

// HistoryMethod names the test between adjacent source states.
const HistoryMethod = "benchstat between adjacent source states (Mann-Whitney U test, golang.org/x/perf/benchmath AssumeNothing, alpha 0.05), " +
	"p-values adjusted by Benjamini-Hochberg across each series; a change point needs the adjusted p below alpha, " +
	"at least 6 values on each side and, with a threshold, the ratio's interval beyond it"

// Orders of the source states.
const (
	OrderGit           = "git"            // git rev-list --topo-order of the project's repository
	OrderFirstMeasured = "first_measured" // when the source state was first measured
)

// HistoryRequest asks for a metric's series by source state.
type HistoryRequest struct {
	Metric      string   `json:"metric" jsonschema:"measurement name, e.g. gobench.sec/op or process.wall_time"`
	Workload    string   `json:"workload" jsonschema:"workload name"`
	Benchmark   string   `json:"benchmark,omitempty" jsonschema:"benchmark or test (the measurement's subject)"`
	Environment string   `json:"environment,omitempty" jsonschema:"environment id"`
	From        []string `json:"from,omitempty" jsonschema:"export directories to read instead of the workspace; only read"`
	Threshold   float64  `json:"threshold,omitempty" jsonschema:"practical threshold, a fraction (default 0)"`
	Limit       int      `json:"limit,omitempty" jsonschema:"newest source states per series (default 50, max 1000)"`
	// Repo is a git checkout whose history orders the commits (default:
	// the workspace's project). Not settable over MCP.
	Repo string `json:"-"`
}

// History is the answer of `flameox history` and MCP get_metric_history.
type History struct {
	SchemaVersion int         `json:"schema_version"`
	Metric        string      `json:"metric"`
	Workload      string      `json:"workload"`
	Benchmark     string      `json:"benchmark,omitempty"`
	Corpora       []CorpusRef `json:"corpora"`
	Order         string      `json:"order"`
	Method        string      `json:"method"`
	Alpha         float64     `json:"alpha"`
	Threshold     float64     `json:"threshold"`
	Series        []Series    `json:"series"`
	ChangePoints  int         `json:"change_points"`
	Total         int         `json:"total"`
	Returned      int         `json:"returned"`
	Truncated     bool        `json:"truncated"`
	Warnings      []string    `json:"warnings"`
}

// Series is one environment, benchmark and unit over source states.
type Series struct {
	EnvironmentID string  `json:"environment_id"`
	Benchmark     string  `json:"benchmark"`
	Package       string  `json:"package,omitempty"`
	Unit          string  `json:"unit"`
	Polarity      string  `json:"polarity"`
	Total         int     `json:"total"`
	Truncated     bool    `json:"truncated"`
	Points        []Point `json:"points"`
}

// Point is one source state of a series: its values summarised as
// benchstat does, and the test against the previous point.
type Point struct {
	SourceStateID string    `json:"source_state_id"`
	HeadCommit    string    `json:"head_commit"`
	Clean         bool      `json:"clean"`
	FirstMeasured time.Time `json:"first_measured"`
	Runs          int       `json:"runs"`
	N             int       `json:"n"`
	Median        *float64  `json:"median"`
	Lo            *float64  `json:"lo"`
	Hi            *float64  `json:"hi"`
	Change        *Change   `json:"change,omitempty"`
	values        []float64
	runs          map[string]bool
}

// Change is the test of a point against the previous one.
type Change struct {
	Ratio       *float64 `json:"ratio"`
	Delta       string   `json:"delta"`
	P           *float64 `json:"p"`
	Q           *float64 `json:"q"`
	Decision    string   `json:"decision"`
	ChangePoint bool     `json:"change_point"`
	Direction   string   `json:"direction,omitempty"`
	Warnings    []string `json:"warnings,omitempty"`
}

// historySQL reads every value of a metric for one workload with its
// run's environment and source state, oldest run first. It reads the
// same view names from a workspace snapshot and from exports; over
// exports (corpus set) a measurement joins its run within its own corpus,
// and source states of two corpora may share an id (content-addressed:
// the same state).
func historySQL(corpus bool) string {
	on := "r.run_id = m.run_id"
	if corpus {
		on = "r." + catalog.ColumnWorkspaceID + " = m." + catalog.ColumnWorkspaceID + " AND " + on
	}
	return `
SELECT coalesce(r.environment_id, ''), CASE WHEN starts_with(m.name, 'gobench.') THEN coalesce(m.worker_id, '') ELSE '' END,
       coalesce(m.subject, ''), m.unit, coalesce(r.source_state_id, ''), coalesce(s.head_commit, ''), coalesce(s.clean, false),
       r.run_id, r.created_at, coalesce(m.value_float, m.value_int::DOUBLE)
FROM measurements_current m
JOIN runs_current r ON ` + on + `
LEFT JOIN (SELECT source_state_id, any_value(head_commit) AS head_commit, bool_and(identity_quality = 'clean') AS clean
           FROM source_states_current GROUP BY source_state_id) s ON s.source_state_id = r.source_state_id
WHERE m.name = $1 AND r.workload_name = $2 AND ($3 = '' OR m.subject = $3) AND ($4 = '' OR r.environment_id = $4)
  AND NOT m.is_warmup AND coalesce(m.value_float, m.value_int::DOUBLE) IS NOT NULL
ORDER BY r.created_at, r.run_id, coalesce(m.value_index, 0)
LIMIT $5`
}

var (
	qHistory       = catalog.Query{Name: "fleet.history", Version: "1", SQL: historySQL(false)}
	qHistoryExport = catalog.Query{Name: "fleet.history_exports", Version: "1", SQL: historySQL(true)}
)

var historyTables = []string{"runs_current", "measurements_current", "source_states_current"}

// MetricHistory reads the series of req.Metric for req.Workload by source
// state, from the workspace (ws) or, with req.From, from exports, and
// flags the change points.
func MetricHistory(ctx context.Context, ws *workspace.Workspace, req HistoryRequest) (*History, error) {
	req.Metric, req.Workload, req.Benchmark = strings.TrimSpace(req.Metric), strings.TrimSpace(req.Workload), strings.TrimSpace(req.Benchmark)
	if req.Metric == "" {
		return nil, fault.New(fault.InvalidArguments, "history needs a metric, e.g. gobench.sec/op").With("field", "metric")
	}
	if req.Workload == "" {
		return nil, fault.New(fault.InvalidArguments, "history needs a workload (--workload NAME)").With("field", "workload").
			Fix("`flameox workload list` names the declared workloads.")
	}
	if req.Threshold < 0 || math.IsNaN(req.Threshold) || math.IsInf(req.Threshold, 0) {
		return nil, fault.New(fault.InvalidArguments, "threshold %v is not a fraction >= 0", req.Threshold).With("field", "threshold")
	}
	limit, err := query.Limit(req.Limit)
	if err != nil {
		return nil, err
	}
	h := &History{SchemaVersion: 1, Metric: req.Metric, Workload: req.Workload, Benchmark: req.Benchmark, Method: HistoryMethod,
		Alpha: alpha, Threshold: req.Threshold, Series: []Series{}, Warnings: []string{}, Order: OrderFirstMeasured}
	args := []any{req.Metric, req.Workload, req.Benchmark, strings.TrimSpace(req.Environment), MaxHistoryValues + 1}
	var r *catalog.Reader
	q := qHistory
	if len(req.From) > 0 {
		q = qHistoryExport
		cs, warnings, err := readExports(req.From)
		if err != nil {
			return nil, err
		}
		h.Corpora, h.Warnings = refs(cs), append(h.Warnings, warnings...)
		if r, err = catalog.OpenDatasets(ctx, datasets(cs), catalog.Options{MaxRows: query.MaxLimit}); err != nil {
			return nil, err
		}
		defer r.Close()
		for _, t := range []string{"runs", "measurements", "source_states"} {
			if !r.HasTable(t) {
				h.Warnings = append(h.Warnings, fmt.Sprintf("no corpus read has table %s: nothing to answer from", t))
				return h, nil
			}
		}
	} else {
		if ws == nil {
			return nil, fault.New(fault.WorkspaceNotFound, "history reads a workspace or --from export directories")
		}
		s, err := query.OpenTables(ctx, ws, historyTables...)
		if err != nil {
			return nil, err
		}
		defer s.Close()
		r = s.R
		h.Corpora = []CorpusRef{{Dir: ws.Root, WorkspaceID: ws.Meta.WorkspaceID, CommitID: s.R.Commit()}}
		if req.Repo == "" {
			req.Repo = ws.ProjectRoot
		}
	}
	series := map[seriesKey]*Series{}
	points := map[seriesKey]map[string]*Point{}
	var keys []seriesKey
	count := 0
	err = r.Scan(ctx, q, args, func(rows *sql.Rows) error {
		for rows.Next() {
			var k seriesKey
			var state, head, runID string
			var clean bool
			var at time.Time
			var v float64
			if err := rows.Scan(&k.env, &k.pkg, &k.bench, &k.unit, &state, &head, &clean, &runID, &at, &v); err != nil {
				return err
			}
			if count++; count > MaxHistoryValues {
				return fault.New(fault.QueryBudgetExceeded, "more than %d values of %s for workload %s", MaxHistoryValues, req.Metric, req.Workload).
					With("max_values", fmt.Sprint(MaxHistoryValues)).Fix("Narrow it with --benchmark or --environment.")
			}
			if math.IsNaN(v) || math.IsInf(v, 0) {
				continue
			}
			if series[k] == nil {
				series[k] = &Series{EnvironmentID: k.env, Benchmark: k.bench, Package: k.pkg, Unit: k.unit, Polarity: polarity(k.unit), Points: []Point{}}
				points[k] = map[string]*Point{}
				keys = append(keys, k)
			}
			p := points[k][state]
			if p == nil {
				p = &Point{SourceStateID: state, HeadCommit: head, Clean: clean, FirstMeasured: at.UTC(), runs: map[string]bool{}}
				points[k][state] = p
			}
			p.values = append(p.values, v)
			p.runs[runID] = true
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(keys) == 0 {
		h.Warnings = append(h.Warnings, fmt.Sprintf("no values of %s for workload %s%s", req.Metric, req.Workload, benchSuffix(req.Benchmark)))
		return h, nil
	}
	// Order the source states: by the repository's history when a git
	// checkout knows every commit, else by when each was first measured.
	var commits []string
	seen := map[string]bool{}
	for _, k := range keys {
		for _, p := range points[k] {
			if p.HeadCommit != "" && !seen[p.HeadCommit] {
				seen[p.HeadCommit] = true
				commits = append(commits, p.HeadCommit)
			}
		}
	}
	sort.Strings(commits)
	rank, why := gitOrder(ctx, req.Repo, commits)
	if rank != nil {
		h.Order = OrderGit
	} else if why != "" {
		h.Warnings = append(h.Warnings, why)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].less(keys[j]) })
	for _, k := range keys {
		s := series[k]
		for _, p := range points[k] {
			s.Points = append(s.Points, *p)
		}
		sort.SliceStable(s.Points, func(i, j int) bool {
			a, b := s.Points[i], s.Points[j]
			if rank != nil && rank[a.HeadCommit] != rank[b.HeadCommit] {
				return rank[a.HeadCommit] < rank[b.HeadCommit]
			}
			if !a.FirstMeasured.Equal(b.FirstMeasured) {
				return a.FirstMeasured.Before(b.FirstMeasured)
			}
			return a.SourceStateID < b.SourceStateID
		})
		if err := changePoints(s, req.Threshold); err != nil {
			return nil, err
		}
		s.Total = len(s.Points)
		if len(s.Points) > limit {
			s.Points, s.Truncated = s.Points[len(s.Points)-limit:], true
		}
		for _, p := range s.Points {
			if p.Change != nil && p.Change.ChangePoint {
				h.ChangePoints++
			}
		}
		h.Series = append(h.Series, *s)
	}
	h.Total = len(h.Series)
	if len(h.Series) > MaxSeries {
		h.Series, h.Truncated = h.Series[:MaxSeries], true
	}
	for _, s := range h.Series {
		h.Truncated = h.Truncated || s.Truncated
	}
	h.Returned = len(h.Series)
	return h, nil
}

func benchSuffix(b string) string {
	if b == "" {
		return ""
	}
	return " and benchmark " + b
}

type seriesKey struct{ env, pkg, bench, unit string }

func (a seriesKey) less(b seriesKey) bool {
	if a.bench != b.bench {
		return a.bench < b.bench
	}
	if a.pkg != b.pkg {
		return a.pkg < b.pkg
	}
	if a.unit != b.unit {
		return a.unit < b.unit
	}
	return a.env < b.env
}

// alpha is benchstat's significance level.
const alpha = 0.05

// polarity: a benchmark unit's (compare.UnitPolarity), and lower is
// better for the process facts' durations and sizes.
func polarity(unit string) string {
	if p := compare.UnitPolarity(unit); p != "neutral" {
		return p
	}
	switch unit {
	case "ns", "bytes", "B":
		return "lower_is_better"
	}
	return "neutral"
}

// changePoints tests every point against the previous one with the
// benchstat view's statistics (compare.BuildBenchView on the two source
// states' values: Mann-Whitney U, the medians' intervals, the practical
// threshold's decision), then adjusts the series' p-values by
// Benjamini-Hochberg (stats.BenjaminiHochberg), since a long series runs
// many tests: a change point is a meaningful change whose adjusted p is
// below alpha.
func changePoints(s *Series, threshold float64) error {
	var ps []float64
	var at []int
	for i := range s.Points {
		p := &s.Points[i]
		p.Runs, p.N = len(p.runs), len(p.values)
		v, err := compare.BuildBenchView(compare.BenchRequest{Threshold: threshold, Limit: 1},
			benchValues(s, p.values), nil)
		if err != nil {
			return err
		}
		if len(v.Rows) > 0 && v.Rows[0].Old != nil {
			p.Median, p.Lo, p.Hi = v.Rows[0].Old.Center, v.Rows[0].Old.Lo, v.Rows[0].Old.Hi
		}
		if i == 0 {
			continue
		}
		prev := &s.Points[i-1]
		v, err = compare.BuildBenchView(compare.BenchRequest{Threshold: threshold, Limit: 1},
			benchValues(s, prev.values), benchValues(s, p.values))
		if err != nil {
			return err
		}
		if len(v.Rows) == 0 {
			continue
		}
		row := v.Rows[0]
		c := &Change{Ratio: row.Ratio, Delta: row.Delta, P: row.P, Decision: row.Decision, Warnings: row.Warnings}
		meaningful := row.Decision == "meaningful_regression" || row.Decision == "meaningful_improvement"
		if row.Polarity == "neutral" {
			// The process facts' units have no benchmark polarity: the
			// same rule, in either direction.
			meaningful = row.Significant && row.Ratio != nil && *row.Ratio != 1 &&
				prev.N >= stats.MinMedianN(1-alpha) && p.N >= stats.MinMedianN(1-alpha) && beyond(row, threshold)
		}
		switch {
		case row.Ratio == nil || *row.Ratio == 1:
		case (*row.Ratio > 1) == (s.Polarity == "lower_is_better") && s.Polarity != "neutral":
			c.Direction = "regression"
		case s.Polarity != "neutral":
			c.Direction = "improvement"
		case *row.Ratio > 1:
			c.Direction = "increase"
		default:
			c.Direction = "decrease"
		}
		p.Change = c
		if meaningful && row.P != nil {
			ps = append(ps, *row.P)
			at = append(at, i)
		} else if row.P != nil {
			// Untested for a change point, but part of the family the
			// correction counts.
			ps = append(ps, *row.P)
			at = append(at, -i-1)
		}
	}
	qs := stats.BenjaminiHochberg(ps)
	for j, i := range at {
		idx := i
		if idx < 0 {
			idx = -idx - 1
		}
		q := qs[j]
		s.Points[idx].Change.Q = &q
		if i >= 0 && q < alpha {
			s.Points[idx].Change.ChangePoint = true
		}
	}
	return nil
}

// beyond: with a threshold, the ratio's interval [new.lo/old.hi,
// new.hi/old.lo] lies wholly outside [1-t, 1+t] (the benchstat view's
// rule); at 0 every significant change is beyond it.
func beyond(row compare.BenchRow, t float64) bool {
	if t == 0 {
		return true
	}
	if row.Old == nil || row.New == nil || row.Old.Lo == nil || row.Old.Hi == nil || row.New.Lo == nil || row.New.Hi == nil || *row.Old.Lo <= 0 {
		return false
	}
	lo, hi := *row.New.Lo / *row.Old.Hi, *row.New.Hi / *row.Old.Lo
	return lo > 1+t || hi < 1-t
}

// benchValues presents one source state's values as one benchstat
// column's.
func benchValues(s *Series, vs []float64) []query.BenchValue {
	unit := s.Unit
	if s.Polarity != "neutral" && compare.UnitPolarity(unit) == "neutral" {
		unit = "sec" // ns and bytes: lower is better, as pyperf's sec
	}
	name := s.Benchmark
	if name == "" {
		name = "value"
	}
	out := make([]query.BenchValue, len(vs))
	for i, v := range vs {
		out[i] = query.BenchValue{Producer: "gobench", Subject: name, Unit: unit, Value: v}
	}
	return out
}

// maxGitOutput bounds git rev-list's output (about 40 bytes a commit).
const maxGitOutput = 64 << 20

// gitOrder ranks commits by the repository's history (git rev-list
// --topo-order: a commit after its ancestors), when repo is a git
// checkout that knows every one of them. Runs record the HEAD commit but
// not its date, so nothing in the corpus orders two commits; without
// the repository the caller falls back to when each was first measured.
func gitOrder(ctx context.Context, repo string, commits []string) (map[string]int, string) {
	if repo == "" || len(commits) == 0 {
		return nil, ""
	}
	for _, c := range commits {
		if len(c) < 7 || len(c) > 64 || strings.Trim(c, "0123456789abcdef") != "" {
			return nil, fmt.Sprintf("source states ordered by when they were first measured: %q is not a git commit", c)
		}
	}
	argv := append([]string{"git", "rev-list", "--topo-order"}, commits...)
	out, err := broker.Output(ctx, argv, repo, identity.GitEnv(repo), maxGitOutput, 60*time.Second)
	if err != nil {
		return nil, "source states ordered by when they were first measured: the repository at " + repo + " does not order every commit"
	}
	lines := bytes.Split(bytes.TrimSpace(out), []byte("\n"))
	rank := make(map[string]int, len(commits))
	want := map[string]bool{}
	for _, c := range commits {
		want[c] = true
	}
	for i, l := range lines {
		if c := string(l); want[c] {
			rank[c] = len(lines) - i // newest first: reverse
		}
	}
	if len(rank) != len(commits) {
		return nil, "source states ordered by when they were first measured: the repository at " + repo + " does not know every commit"
	}
	return rank, ""
}
