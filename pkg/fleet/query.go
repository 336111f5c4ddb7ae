package fleet

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/flameox/flameox/pkg/catalog"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/query"
	"github.com/flameox/flameox/pkg/workspace"
)

// Param is one named input of a fleet query. Every parameter is optional
// unless Required; an empty value means no filter.
type Param struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Required    bool   `json:"required,omitempty"`
}

// Named is one named, versioned fleet question: curated SQL over the
// exported tables of every corpus read (catalog.OpenDatasets's views, rows
// tagged with corpus_workspace_id), never SQL from a user or agent.
type Named struct {
	Name        string   `json:"name"`
	Version     string   `json:"version"`
	Description string   `json:"description"`
	Params      []Param  `json:"params"`
	Tables      []string `json:"tables"`
	Columns     []string `json:"columns"`
	q           catalog.Query
	history     bool // answered by MetricHistory, flattened
}

// ID is name@version.
func (n Named) ID() string { return n.Name + "@" + n.Version }

// failed is a run that did not succeed: the process, the capture or the
// validation failed.
const failed = `(r.execution_status IN ('failed', 'timed_out', 'cancelled') OR r.capture_status IN ('failed', 'quarantined')
  OR r.validation_status IN ('failed', 'error'))`

// named are the fleet questions. Every SQL takes its parameters in the
// order of Params, then the row limit (limit+1, to see truncation); its
// last column is the total row count before the limit.
var named = []Named{
	{
		Name: "metric_history", Version: "1",
		Description: "a metric's values per workload, benchmark, environment and source state (git commit), oldest first",
		Params: []Param{
			{"metric", "measurement name, e.g. gobench.sec/op or process.wall_time", true},
			{"workload", "workload name", false},
			{"benchmark", "benchmark or test (the measurement's subject)", false},
			{"environment", "environment id", false},
		},
		Tables:  []string{"measurements", "runs", "source_states"},
		Columns: []string{"workload", "benchmark", "unit", "environment_id", "head_commit", "source_states", "runs", "n", "median", "min", "max", "first_measured", "workspaces"},
		q: catalog.Query{Name: "fleet.metric_history", Version: "1", SQL: `
WITH v AS (
  SELECT m.corpus_workspace_id AS ws, r.environment_id, coalesce(r.workload_name, '') AS workload,
         coalesce(m.subject, '') AS benchmark, m.unit, coalesce(s.head_commit, r.source_state_id, '') AS head_commit,
         r.source_state_id, r.run_id, r.created_at, coalesce(m.value_float, m.value_int::DOUBLE) AS value
  FROM measurements_current m
  JOIN runs_current r ON r.corpus_workspace_id = m.corpus_workspace_id AND r.run_id = m.run_id
  LEFT JOIN source_states_current s ON s.corpus_workspace_id = r.corpus_workspace_id AND s.source_state_id = r.source_state_id
  WHERE m.name = $1 AND NOT m.is_warmup AND ($2 = '' OR r.workload_name = $2) AND ($3 = '' OR m.subject = $3)
    AND ($4 = '' OR r.environment_id = $4) AND coalesce(m.value_float, m.value_int::DOUBLE) IS NOT NULL
), g AS (
  SELECT workload, benchmark, unit, environment_id, head_commit, count(DISTINCT source_state_id) AS source_states,
         count(DISTINCT run_id) AS runs, count(*) AS n, median(value) AS median, min(value) AS min, max(value) AS max,
         min(created_at) AS first_measured, array_to_string(list(DISTINCT ws ORDER BY ws), ',') AS workspaces
  FROM v GROUP BY workload, benchmark, unit, environment_id, head_commit
)
SELECT *, count(*) OVER () FROM g
ORDER BY workload, benchmark, unit, environment_id, first_measured, head_commit
LIMIT $5`},
	},
	{
		Name: "metric_changes", Version: "1",
		Description: "flameox history as rows: a metric's points by source state in commit order, with the change points; without from, the workspace",
		Params: []Param{
			{"metric", "measurement name, e.g. gobench.sec/op", true},
			{"workload", "workload name", true},
			{"benchmark", "benchmark or test (the measurement's subject)", false},
			{"environment", "environment id", false},
			{"threshold", "practical threshold, a fraction (default 0)", false},
		},
		Tables:  []string{"measurements", "runs", "source_states"},
		Columns: []string{"benchmark", "package", "unit", "environment_id", "head_commit", "clean", "first_measured", "runs", "n", "median", "lo", "hi", "delta", "p", "q", "change_point", "direction"},
		history: true,
	},
	{
		Name: "runs_per_environment", Version: "1",
		Description: "runs per environment (OS, architecture, CPU) across the corpora, most runs first",
		Params:      []Param{{"workload", "workload name", false}},
		Tables:      []string{"runs", "environments"},
		Columns:     []string{"environment_id", "os", "arch", "cpu_model", "cpu_count", "runs", "failed_runs", "workspaces", "first_run", "last_run"},
		q: catalog.Query{Name: "fleet.runs_per_environment", Version: "1", SQL: `
WITH e AS (SELECT environment_id, any_value(os) AS os, any_value(arch) AS arch, any_value(cpu_model) AS cpu_model,
                  any_value(cpu_count) AS cpu_count FROM environments_current GROUP BY environment_id),
g AS (
  SELECT r.environment_id, count(*) AS runs, count(*) FILTER (WHERE ` + failed + `) AS failed_runs,
         count(DISTINCT r.corpus_workspace_id) AS workspaces, min(r.created_at) AS first_run, max(r.created_at) AS last_run
  FROM runs_current r WHERE ($1 = '' OR r.workload_name = $1) GROUP BY r.environment_id
)
SELECT g.environment_id, e.os, e.arch, e.cpu_model, e.cpu_count, g.runs, g.failed_runs, g.workspaces, g.first_run, g.last_run,
       count(*) OVER ()
FROM g LEFT JOIN e USING (environment_id)
ORDER BY g.runs DESC, g.environment_id
LIMIT $2`},
	},
	{
		Name: "failures_by_environment", Version: "1",
		Description: "failed, timed-out, cancelled and quarantined runs per environment, workload and error code, most first",
		Params:      []Param{{"workload", "workload name", false}, {"environment", "environment id", false}},
		Tables:      []string{"runs"},
		Columns:     []string{"environment_id", "workload", "execution_status", "capture_status", "validation_status", "error_code", "runs", "workspaces", "last_run", "last_run_id"},
		q: catalog.Query{Name: "fleet.failures_by_environment", Version: "1", SQL: `
SELECT r.environment_id, coalesce(r.workload_name, '') AS workload, r.execution_status, r.capture_status, r.validation_status,
       coalesce(r.error_code, '') AS error_code, count(*) AS runs, count(DISTINCT r.corpus_workspace_id) AS workspaces,
       max(r.created_at) AS last_run, arg_max(r.run_id, r.created_at) AS last_run_id, count(*) OVER ()
FROM runs_current r
WHERE ` + failed + ` AND ($1 = '' OR r.workload_name = $1) AND ($2 = '' OR r.environment_id = $2)
GROUP BY ALL
ORDER BY runs DESC, r.environment_id, workload, r.execution_status, r.capture_status, r.validation_status, error_code
LIMIT $3`},
	},
	{
		Name: "newest_comparisons", Version: "1",
		Description: "the newest recorded comparison decisions across the corpora, newest first",
		Params:      []Param{{"metric", "metric compared", false}, {"decision", "e.g. meaningful_regression", false}},
		Tables:      []string{"comparisons"},
		Columns:     []string{"workspace_id", "comparison_id", "metric", "unit", "decision", "validity", "relative_change", "confidence_low", "confidence_high", "baseline_run_set_id", "candidate_run_set_id", "published_at"},
		q: catalog.Query{Name: "fleet.newest_comparisons", Version: "1", SQL: `
WITH c AS (
  SELECT * FROM comparisons
  QUALIFY row_number() OVER (PARTITION BY corpus_workspace_id, comparison_id ORDER BY published_at DESC) = 1
)
SELECT c.corpus_workspace_id, c.comparison_id, c.metric, c.unit, c.decision, c.validity, c.relative_change,
       c.confidence_low, c.confidence_high, c.baseline_run_set_id, c.candidate_run_set_id, c.published_at, count(*) OVER ()
FROM c WHERE ($1 = '' OR c.metric = $1) AND ($2 = '' OR c.decision = $2)
ORDER BY c.published_at DESC, c.comparison_id, c.corpus_workspace_id
LIMIT $3`},
	},
}

// Queries lists the fleet questions (`flameox fleet query --list`).
func Queries() []Named { return slices.Clone(named) }

func lookup(name string) (Named, bool) {
	name, version, _ := strings.Cut(strings.TrimSpace(name), "@")
	for _, n := range named {
		if n.Name == name && (version == "" || version == n.Version) {
			return n, true
		}
	}
	return Named{}, false
}

// QueryRequest asks one fleet question over export directories.
type QueryRequest struct {
	Name   string            `json:"name" jsonschema:"flameox fleet query --list"`
	From   []string          `json:"from,omitempty" jsonschema:"export directories, only read (metric_changes: default the workspace)"`
	Params map[string]string `json:"params,omitempty"`
	Limit  int               `json:"limit,omitempty" jsonschema:"rows (default 50, max 1000)"`
	// Workspace answers metric_changes when From is empty.
	Workspace *workspace.Workspace `json:"-"`
	// Repo orders metric_changes' commits (HistoryRequest.Repo).
	Repo string `json:"-"`
}

// QueryResult is a fleet answer: the rows, which corpora (workspace ids)
// and commits were read, and how many rows there were before the limit.
type QueryResult struct {
	SchemaVersion int               `json:"schema_version"`
	Query         string            `json:"query"`
	Version       string            `json:"version"`
	Params        map[string]string `json:"params"`
	Corpora       []CorpusRef       `json:"corpora"`
	Columns       []string          `json:"columns"`
	Rows          [][]any           `json:"rows"`
	Total         int               `json:"total"`
	Returned      int               `json:"returned"`
	Truncated     bool              `json:"truncated"`
	Warnings      []string          `json:"warnings"`
}

// maxParamBytes bounds one parameter value.
const maxParamBytes = 1024

// Query answers a named fleet question over every corpus the export
// directories hold, with one locked-down DuckDB instance that can read
// exactly their listed files.
func Query(ctx context.Context, req QueryRequest) (*QueryResult, error) {
	n, ok := lookup(req.Name)
	if !ok {
		names := make([]string, len(named))
		for i, q := range named {
			names[i] = q.ID()
		}
		return nil, fault.New(fault.InvalidArguments, "no fleet query %q", req.Name).With("field", "name").
			Fix("One of: " + strings.Join(names, ", ") + " (flameox fleet query --list).")
	}
	limit, err := query.Limit(req.Limit)
	if err != nil {
		return nil, err
	}
	args, params, err := bind(n, req.Params)
	if err != nil {
		return nil, err
	}
	if n.history {
		return changesQuery(ctx, n, req, params, limit)
	}
	cs, warnings, err := readExports(req.From)
	if err != nil {
		return nil, err
	}
	res := &QueryResult{SchemaVersion: 1, Query: n.Name, Version: n.Version, Params: params, Corpora: refs(cs),
		Columns: slices.Clone(n.Columns), Rows: [][]any{}, Warnings: append([]string{}, warnings...)}
	r, err := catalog.OpenDatasets(ctx, datasets(cs), catalog.Options{MaxRows: query.MaxLimit})
	if err != nil {
		return nil, err
	}
	defer r.Close()
	for _, t := range n.Tables {
		if !r.HasTable(t) {
			res.Warnings = append(res.Warnings, fmt.Sprintf("no corpus read has table %s: nothing to answer from", t))
		}
	}
	if len(res.Warnings) > len(warnings) {
		return res, nil
	}
	args = append(args, limit+1)
	err = r.Scan(ctx, n.q, args, func(rows *sql.Rows) error {
		width := len(n.Columns) + 1
		for rows.Next() {
			cells := make([]any, width)
			ptrs := make([]any, width)
			for i := range cells {
				ptrs[i] = &cells[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				return err
			}
			if total, ok := cells[width-1].(int64); ok {
				res.Total = int(total)
			}
			if len(res.Rows) == limit {
				res.Truncated = true
				continue
			}
			row := cells[:width-1]
			for i, c := range row {
				row[i] = cell(r, c)
			}
			res.Rows = append(res.Rows, row)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	res.Returned = len(res.Rows)
	return res, nil
}

// bind checks the parameters against the query's and returns them in
// its order.
func bind(n Named, in map[string]string) ([]any, map[string]string, error) {
	known := map[string]bool{}
	for _, p := range n.Params {
		known[p.Name] = true
	}
	keys := make([]string, 0, len(in))
	for k := range in {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !known[k] {
			names := make([]string, len(n.Params))
			for i, p := range n.Params {
				names[i] = p.Name
			}
			return nil, nil, fault.New(fault.InvalidArguments, "%s takes no parameter %q", n.ID(), k).With("field", "params").
				Fix("Its parameters: " + strings.Join(names, ", ") + ".")
		}
		if len(in[k]) > maxParamBytes {
			return nil, nil, fault.New(fault.InvalidArguments, "parameter %s is longer than %d bytes", k, maxParamBytes).With("field", "params")
		}
	}
	args := make([]any, 0, len(n.Params)+1)
	params := map[string]string{}
	for _, p := range n.Params {
		v := strings.TrimSpace(in[p.Name])
		if p.Required && v == "" {
			return nil, nil, fault.New(fault.InvalidArguments, "%s needs the parameter %s (%s)", n.ID(), p.Name, p.Description).With("field", "params").
				Fix(fmt.Sprintf("Pass --param %s=VALUE.", p.Name))
		}
		if v != "" {
			params[p.Name] = v
		}
		args = append(args, v)
	}
	return args, params, nil
}

// cell makes a scanned value JSON-safe: times in RFC 3339 UTC, text
// clipped, non-finite floats null.
func cell(r *catalog.Reader, v any) any {
	switch x := v.(type) {
	case time.Time:
		return x.UTC().Format(time.RFC3339Nano)
	case string:
		s, _ := r.ClipText(x)
		return s
	case []byte:
		s, _ := r.ClipText(string(x))
		return s
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil
		}
		return x
	case float32:
		return cell(r, float64(x))
	case int32:
		return int64(x)
	}
	return v
}

// changesQuery answers metric_changes: MetricHistory, one row per point.
func changesQuery(ctx context.Context, n Named, req QueryRequest, params map[string]string, limit int) (*QueryResult, error) {
	hr := HistoryRequest{Metric: params["metric"], Workload: params["workload"], Benchmark: params["benchmark"],
		Environment: params["environment"], From: req.From, Limit: query.MaxLimit, Repo: req.Repo}
	if t := params["threshold"]; t != "" {
		v, err := strconv.ParseFloat(t, 64)
		if err != nil {
			return nil, fault.New(fault.InvalidArguments, "threshold %q is not a number", t).With("field", "params")
		}
		hr.Threshold = v
	}
	h, err := MetricHistory(ctx, req.Workspace, hr)
	if err != nil {
		return nil, err
	}
	res := &QueryResult{SchemaVersion: 1, Query: n.Name, Version: n.Version, Params: params, Corpora: h.Corpora,
		Columns: slices.Clone(n.Columns), Rows: [][]any{}, Warnings: h.Warnings}
	for _, s := range h.Series {
		res.Total += s.Total
		if s.Truncated {
			res.Warnings = append(res.Warnings, fmt.Sprintf("%s %s: only the newest %d of %d source states", s.Benchmark, s.Unit, len(s.Points), s.Total))
		}
		for _, p := range s.Points {
			if len(res.Rows) == limit {
				res.Truncated = true
				continue
			}
			row := []any{s.Benchmark, s.Package, s.Unit, s.EnvironmentID, p.HeadCommit, p.Clean, p.FirstMeasured.UTC().Format(time.RFC3339Nano),
				int64(p.Runs), int64(p.N), num(p.Median), num(p.Lo), num(p.Hi), nil, nil, nil, false, nil}
			if c := p.Change; c != nil {
				row[12], row[13], row[14], row[15] = c.Delta, num(c.P), num(c.Q), c.ChangePoint
				if c.Direction != "" {
					row[16] = c.Direction
				}
			}
			res.Rows = append(res.Rows, row)
		}
	}
	if h.Truncated && h.Returned < h.Total {
		res.Warnings = append(res.Warnings, fmt.Sprintf("only the first %d of %d series", h.Returned, h.Total))
	}
	res.Truncated = res.Truncated || h.Truncated
	res.Returned = len(res.Rows)
	return res, nil
}

func num(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}
