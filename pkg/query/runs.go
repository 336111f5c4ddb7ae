package query

import (
	"context"
	"database/sql"
	"strconv"
	"strings"
	"time"

	"github.com/flameox/flameox/pkg/catalog"
	"github.com/flameox/flameox/pkg/cursor"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/run"
	"github.com/flameox/flameox/pkg/workspace"
)

// RunSummary is one row of a run list.
type RunSummary struct {
	RunID            string    `json:"run_id"`
	Revision         int       `json:"revision"`
	RunType          string    `json:"run_type"`
	CreatedAt        time.Time `json:"created_at"`
	ExecutionStatus  string    `json:"execution_status"`
	CaptureStatus    string    `json:"capture_status"`
	ValidationStatus string    `json:"validation_status"`
	WorkloadName     string    `json:"workload_name,omitempty"`
	ArtifactCount    int       `json:"artifact_count"`
	EnvironmentID    string    `json:"environment_id"`
	SourceStateID    string    `json:"source_state_id"`
	// Reason says why the run's latest published revision was written
	// (registered, succeeded, crash_recovery, ...) and ErrorCode is the
	// error of a run that did not succeed; `runs show` has the message.
	Reason    string `json:"reason,omitempty"`
	ErrorCode string `json:"error_code,omitempty"`
	// What tells runs apart: the workload's parameter values and the
	// adapter (an execution run), the imported file's name (an import),
	// the process outcome and resources, and how many benchmarks the
	// run measured (distinct package and benchmark name).
	Parameters     map[string]string `json:"parameters,omitempty"`
	Adapter        string            `json:"adapter,omitempty"`
	SourceName     string            `json:"source_name,omitempty"`
	ExitCode       *int32            `json:"exit_code,omitempty"`
	Signal         string            `json:"signal,omitempty"`
	WallTimeNs     *int64            `json:"wall_time_ns,omitempty"`
	PeakRSSBytes   *int64            `json:"peak_rss_bytes,omitempty"`
	BenchmarkCount int               `json:"benchmark_count"`
}

// RunList is the result of `flameox runs list` and MCP list_runs.
type RunList struct {
	SchemaVersion  int    `json:"schema_version"`
	Query          string `json:"query"`
	CorpusCommitID string `json:"corpus_commit_id"`
	Page
	Runs []RunSummary `json:"runs"`
}

// ListRunsRequest filters and pages a run list. Empty filters match all.
type ListRunsRequest struct {
	RunType          string `json:"run_type,omitempty" jsonschema:"import or execution"`
	ExecutionStatus  string `json:"execution_status,omitempty" jsonschema:"e.g. succeeded, failed, timed_out"`
	CaptureStatus    string `json:"capture_status,omitempty" jsonschema:"e.g. registered, failed"`
	ValidationStatus string `json:"validation_status,omitempty" jsonschema:"e.g. passed, failed, not_requested"`
	Workload         string `json:"workload,omitempty" jsonschema:"declared workload name"`
	// Parameters keeps runs whose workload had every one of these
	// parameter values (canonical text, as the list shows them).
	Parameters    map[string]string `json:"parameters,omitempty" jsonschema:"workload parameter values, e.g. {\"n\": \"1024\"}"`
	CreatedAfter  time.Time         `json:"created_after,omitzero" jsonschema:"only runs created at or after this time (RFC 3339)"`
	CreatedBefore time.Time         `json:"created_before,omitzero" jsonschema:"only runs created before this time (RFC 3339)"`
	Limit         int               `json:"limit,omitempty" jsonschema:"rows to return (default 50, max 1000)"`
	Cursor        string            `json:"cursor,omitempty" jsonschema:"cursor from a previous page"`
}

const runFilters = `
	($1 = '' OR r.run_type = $1) AND ($2 = '' OR r.execution_status = $2) AND ($3 = '' OR r.capture_status = $3)
	AND ($4 = '' OR r.validation_status = $4) AND ($5 = '' OR r.workload_name = $5)
	AND ($6::TIMESTAMPTZ IS NULL OR r.created_at >= $6) AND ($7::TIMESTAMPTZ IS NULL OR r.created_at < $7)
	AND (len($8::VARCHAR[]) = 0 OR NOT EXISTS (SELECT 1 FROM (SELECT unnest($8::VARCHAR[]) AS kv) p
	      WHERE r.workload_parameters[split_part(p.kv, '=', 1)] IS DISTINCT FROM substr(p.kv, strpos(p.kv, '=') + 1)))`

var (
	// The page is chosen first; the artifact and benchmark counts are then
	// computed for its runs only.
	qRunsList = catalog.Query{Name: "runs.list", Version: "2", SQL: `
WITH page AS (
SELECT r.run_id, r.revision, r.run_type, r.created_at, r.execution_status, r.capture_status, r.validation_status,
       coalesce(r.workload_name, '') AS workload_name, r.environment_id, coalesce(r.source_state_id, '') AS source_state_id,
       epoch_us(r.created_at) AS created_us, coalesce(r.reason, '') AS reason, coalesce(r.error_code, '') AS error_code,
       r.workload_parameters, coalesce(r.adapter, '') AS adapter, r.exit_code, coalesce(r.signal, '') AS signal,
       r.wall_time_ns, r.peak_rss_bytes
FROM runs_current r
WHERE ` + runFilters + `
  AND ($9::BIGINT IS NULL OR epoch_us(r.created_at) < $9 OR (epoch_us(r.created_at) = $9 AND r.run_id < $10))
ORDER BY r.created_at DESC, r.run_id DESC
LIMIT $11)
SELECT p.run_id, p.revision, p.run_type, p.created_at, p.execution_status, p.capture_status, p.validation_status,
       p.workload_name, p.environment_id, p.source_state_id,
       (SELECT count(*) FROM artifacts_current a WHERE a.run_id = p.run_id), p.created_us, p.reason, p.error_code,
       coalesce(map_keys(p.workload_parameters), []::VARCHAR[]), coalesce(map_values(p.workload_parameters), []::VARCHAR[]), p.adapter, p.exit_code, p.signal,
       p.wall_time_ns, p.peak_rss_bytes,
       CASE WHEN p.run_type = 'import' THEN coalesce((SELECT arg_min(a.display_name, a.registered_at) FROM artifacts_current a
            WHERE a.run_id = p.run_id), '') ELSE '' END,
       (SELECT count(DISTINCT (coalesce(m.worker_id, ''), m.subject)) FROM measurements_current m
            WHERE m.run_id = p.run_id AND m.scope = 'benchmark' AND m.subject IS NOT NULL)
FROM page p
ORDER BY p.created_at DESC, p.run_id DESC`}
	qRunsCount = catalog.Query{Name: "runs.count", Version: "2", SQL: `SELECT count(*) FROM runs_current r WHERE ` + runFilters}
)

func (req ListRunsRequest) filterArgs() []any {
	return []any{req.RunType, req.ExecutionStatus, req.CaptureStatus, req.ValidationStatus, req.Workload,
		timeArg(req.CreatedAfter), timeArg(req.CreatedBefore), parameterPairs(req.Parameters)}
}

func timeArg(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC()
}

// ListRuns lists published runs (their latest published revision), newest
// first.
func ListRuns(ctx context.Context, ws *workspace.Workspace, req ListRunsRequest) (*RunList, error) {
	limit, err := Limit(req.Limit)
	if err != nil {
		return nil, err
	}
	if err := checkParameterNames(req.Parameters); err != nil {
		return nil, err
	}
	return with(ctx, ws, func(s *Session) (*RunList, error) {
		filters := req
		filters.Limit, filters.Cursor = 0, ""
		want, key, err := s.resume(qRunsList, filters, "created_at desc, run_id desc", req.Cursor)
		if err != nil {
			return nil, err
		}
		afterUS, afterID, err := timeKey(key)
		if err != nil {
			return nil, err
		}
		res := &RunList{SchemaVersion: 1, Query: qRunsList.ID(), CorpusCommitID: s.Commit(), Runs: []RunSummary{}}
		var lastUS int64
		args := append(req.filterArgs(), afterUS, afterID, limit+1)
		err = s.R.Scan(ctx, qRunsList, args, func(rows *sql.Rows) error {
			for rows.Next() {
				var r RunSummary
				var rev int32
				var us int64
				var keys, values []any
				var exit sql.NullInt32
				var wall, rss sql.NullInt64
				if err := rows.Scan(&r.RunID, &rev, &r.RunType, &r.CreatedAt, &r.ExecutionStatus, &r.CaptureStatus,
					&r.ValidationStatus, &r.WorkloadName, &r.EnvironmentID, &r.SourceStateID, &r.ArtifactCount, &us, &r.Reason, &r.ErrorCode,
					&keys, &values, &r.Adapter, &exit, &r.Signal, &wall, &rss, &r.SourceName, &r.BenchmarkCount); err != nil {
					return err
				}
				r.Parameters = stringMap(keys, values)
				if exit.Valid {
					r.ExitCode = &exit.Int32
				}
				if wall.Valid {
					r.WallTimeNs = &wall.Int64
				}
				if rss.Valid {
					r.PeakRSSBytes = &rss.Int64
				}
				if len(res.Runs) == limit {
					res.Truncated = true
					break
				}
				r.Revision = int(rev)
				r.CreatedAt = r.CreatedAt.UTC()
				res.Runs = append(res.Runs, r)
				lastUS = us
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		res.Returned = len(res.Runs)
		if res.Truncated {
			want.Key = []string{strconv.FormatInt(lastUS, 10), res.Runs[len(res.Runs)-1].RunID}
			res.Cursor = cursor.Encode(want)
		}
		res.Total, err = count(ctx, s, qRunsCount, req.filterArgs())
		return res, err
	})
}

// stringMap pairs the keys and values of a scanned map<string,string>
// (read as two lists); nil when there are none.
func stringMap(keys, values []any) map[string]string {
	if len(keys) == 0 || len(keys) != len(values) {
		return nil
	}
	m := make(map[string]string, len(keys))
	for i, k := range keys {
		ks, _ := k.(string)
		vs, _ := values[i].(string)
		m[ks] = vs
	}
	return m
}

func count(ctx context.Context, s *Session, q catalog.Query, args []any) (int64, error) {
	var n int64
	err := s.R.Scan(ctx, q, args, func(rows *sql.Rows) error {
		for rows.Next() {
			if err := rows.Scan(&n); err != nil {
				return err
			}
		}
		return nil
	})
	return n, err
}

// RunDetail is the result of `flameox runs show` and MCP get_run: the
// run's manifest at its latest published revision (or, for a run not yet
// published, its current manifest, marked so).
type RunDetail struct {
	SchemaVersion     int           `json:"schema_version"`
	CorpusCommitID    string        `json:"corpus_commit_id"`
	Published         bool          `json:"published"`
	PublishedRevision int           `json:"published_revision"`
	CurrentRevision   int           `json:"current_revision"`
	Run               *run.Manifest `json:"run"`
	// BenchmarkCount is how many benchmarks (distinct package and name)
	// the published run measured; 0 for a run not published.
	BenchmarkCount int `json:"benchmark_count"`
}

var (
	qRunRevision = catalog.Query{Name: "runs.revision", Version: "1",
		SQL: `SELECT revision FROM runs_current WHERE run_id = $1`}
	qRunBenchmarks = catalog.Query{Name: "runs.benchmarks", Version: "1",
		SQL: `SELECT count(DISTINCT (coalesce(worker_id, ''), subject)) FROM measurements_current
WHERE run_id = $1 AND scope = 'benchmark' AND subject IS NOT NULL`}
)

// ShowRun describes one run.
func ShowRun(ctx context.Context, ws *workspace.Workspace, id string) (*RunDetail, error) {
	id = strings.TrimSpace(id)
	if !run.ValidID(id) {
		return nil, fault.New(fault.InvalidArguments, "%q is not a run id", id)
	}
	return with(ctx, ws, func(s *Session) (*RunDetail, error) { return s.showRun(ctx, id) })
}

func (s *Session) showRun(ctx context.Context, id string) (*RunDetail, error) {
	rev := -1
	err := s.R.Scan(ctx, qRunRevision, []any{id}, func(rows *sql.Rows) error {
		for rows.Next() {
			var r int32
			if err := rows.Scan(&r); err != nil {
				return err
			}
			rev = int(r)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	store := &run.Store{Root: s.WS.Root}
	cur, err := store.Get(id)
	if err != nil {
		return nil, err
	}
	d := &RunDetail{SchemaVersion: 1, CorpusCommitID: s.Commit(), CurrentRevision: cur.Revision, PublishedRevision: rev, Run: cur}
	if rev >= 0 {
		d.Published = true
		if rev != cur.Revision {
			if d.Run, err = store.Revision(id, rev); err != nil {
				return nil, err
			}
		}
		n, err := count(ctx, s, qRunBenchmarks, []any{id})
		if err != nil {
			return nil, err
		}
		d.BenchmarkCount = int(n)
	}
	return d, nil
}
