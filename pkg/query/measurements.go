package query

import (
	"context"
	"database/sql"
	"slices"
	"strconv"
	"strings"

	"github.com/flameox/flameox/pkg/catalog"
	"github.com/flameox/flameox/pkg/cursor"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/workspace"
)

// Measurement is one measured value with its unit and its place in the raw
// hierarchy (worker, run index, value index, loops, warm-up).
type Measurement struct {
	MeasurementID  string   `json:"measurement_id"`
	RunID          string   `json:"run_id"`
	ArtifactID     string   `json:"artifact_id,omitempty"`
	Name           string   `json:"name"`
	ValueInt       *int64   `json:"value_int"`
	ValueFloat     *float64 `json:"value_float"`
	Unit           string   `json:"unit"`
	Aggregation    string   `json:"aggregation"`
	Scope          string   `json:"scope"`
	Subject        string   `json:"subject,omitempty"`
	WorkerID       string   `json:"worker_id,omitempty"`
	WorkerRunIndex *int32   `json:"worker_run_index"`
	ValueIndex     *int32   `json:"value_index"`
	LoopCount      *uint64  `json:"loop_count"`
	IsWarmup       bool     `json:"is_warmup"`
	Phase          string   `json:"phase,omitempty"`
	// TrialID, VariantID, BlockID and OrderInBlock place a value in an
	// experiment (the run was one of its trials).
	TrialID       string `json:"trial_id,omitempty"`
	VariantID     string `json:"variant_id,omitempty"`
	BlockID       string `json:"block_id,omitempty"`
	OrderInBlock  *int32 `json:"order_in_block,omitempty"`
	EvidenceLevel string `json:"evidence_level"`
}

// MeasurementList is the result of `flameox measurements query` and MCP
// query_measurements.
type MeasurementList struct {
	SchemaVersion  int    `json:"schema_version"`
	Query          string `json:"query"`
	CorpusCommitID string `json:"corpus_commit_id"`
	Page
	Measurements []Measurement `json:"measurements"`
}

// MeasurementsRequest filters and pages measurements.
type MeasurementsRequest struct {
	RunID      string `json:"run_id,omitempty" jsonschema:"only this run"`
	ArtifactID string `json:"artifact_id,omitempty" jsonschema:"only values extracted from this artifact"`
	NamePrefix string `json:"name_prefix,omitempty" jsonschema:"only metric names starting with this, e.g. process."`
	Workload   string `json:"workload,omitempty" jsonschema:"only runs of this declared workload"`
	// Parameters keeps runs whose workload had every one of these
	// parameter values (canonical text, as runs list shows them).
	Parameters     map[string]string `json:"parameters,omitempty" jsonschema:"workload parameter values, e.g. {\"n\": \"1024\"}"`
	Subject        string            `json:"subject,omitempty" jsonschema:"only this subject (exact): a benchmark, test or package"`
	IncludeWarmups bool              `json:"include_warmups,omitempty" jsonschema:"also return warm-up values"`
	Limit          int               `json:"limit,omitempty" jsonschema:"rows to return (default 50, max 1000)"`
	Cursor         string            `json:"cursor,omitempty" jsonschema:"cursor from a previous page"`
}

// ParseParameter splits a key=value filter (the CLI's --parameter).
func ParseParameter(kv string) (key, value string, err error) {
	k, v, ok := strings.Cut(kv, "=")
	if !ok || strings.TrimSpace(k) == "" {
		return "", "", fault.New(fault.InvalidArguments, "parameter filter %q is not KEY=VALUE", kv).With("flag", "parameter")
	}
	return strings.TrimSpace(k), v, nil
}

// parameterPairs renders a parameter filter as sorted key=value strings
// (a key is a declared parameter name, which never holds "=").
func parameterPairs(p map[string]string) []string {
	out := make([]string, 0, len(p))
	for k, v := range p {
		out = append(out, k+"="+v)
	}
	slices.Sort(out)
	return out
}

// checkParameterNames refuses a filter key that no parameter can have.
func checkParameterNames(p map[string]string) error {
	for k := range p {
		if k == "" || strings.Contains(k, "=") {
			return fault.New(fault.InvalidArguments, "parameter name %q is not a declared parameter name", k)
		}
	}
	return nil
}

// The workload and parameter filters keep the measurements of the runs
// whose latest published revision matches.
const measurementFilters = `($1 = '' OR m.run_id = $1) AND ($2 = '' OR m.artifact_id = $2)
  AND ($3 = '' OR starts_with(m.name, $3)) AND ($4 OR NOT m.is_warmup) AND ($5 = '' OR m.subject = $5)
  AND (($6 = '' AND len($7::VARCHAR[]) = 0) OR m.run_id IN (
        SELECT r.run_id FROM runs_current r WHERE ($6 = '' OR r.workload_name = $6)
          AND NOT EXISTS (SELECT 1 FROM (SELECT unnest($7::VARCHAR[]) AS kv) p
                WHERE r.workload_parameters[split_part(p.kv, '=', 1)] IS DISTINCT FROM substr(p.kv, strpos(p.kv, '=') + 1))))`

// unitRank orders units as `go test -bench` prints them: time,
// throughput, bytes, allocations, then the rest.
const unitRank = `CASE WHEN m.unit = 'sec' OR m.unit LIKE 'sec/%' OR m.unit IN ('ns', 'nanoseconds') THEN 0 WHEN m.unit LIKE 'B/s%' THEN 1
       WHEN m.unit = 'B/op' THEN 2 WHEN m.unit = 'allocs/op' THEN 3 ELSE 4 END`

// measurementOrder sorts by what was measured, then where it sits in the
// raw hierarchy; measurement_id makes the order total, so offsets page
// exactly at one commit (the cursor is bound to it). Within a subject,
// units come in `go test -bench` order (time, throughput, bytes, allocs),
// then by name.
const measurementOrder = `coalesce(m.subject, ''),
  ` + unitRank + `,
  m.name, m.run_id, coalesce(m.worker_id, ''), coalesce(m.worker_run_index, -1), coalesce(m.value_index, -1),
  m.is_warmup DESC, m.measurement_id`

var (
	qMeasurements = catalog.Query{Name: "measurements.query", Version: "4", SQL: `
SELECT m.measurement_id, m.run_id, coalesce(m.artifact_id, ''), m.name, m.value_int, m.value_float, m.unit, m.aggregation, m.scope,
       coalesce(m.subject, ''), coalesce(m.worker_id, ''), m.worker_run_index, m.value_index, m.loop_count, m.is_warmup,
       coalesce(m.phase, ''), m.evidence_level,
       coalesce(m.trial_id, ''), coalesce(m.variant_id, ''), coalesce(m.block_id, ''), m.order_in_block
FROM measurements_current m
WHERE ` + measurementFilters + `
ORDER BY ` + measurementOrder + `
LIMIT $8 OFFSET $9`}
	qMeasurementsCount = catalog.Query{Name: "measurements.count", Version: "2",
		SQL: `SELECT count(*) FROM measurements_current m WHERE ` + measurementFilters}
)

// QueryMeasurements lists measurements by subject (the benchmark, test or
// package), metric name, run, then their place in the raw hierarchy
// (worker, run index, value index).
func QueryMeasurements(ctx context.Context, ws *workspace.Workspace, req MeasurementsRequest) (*MeasurementList, error) {
	limit, err := Limit(req.Limit)
	if err != nil {
		return nil, err
	}
	if err := checkParameterNames(req.Parameters); err != nil {
		return nil, err
	}
	return with(ctx, ws, func(s *Session) (*MeasurementList, error) {
		filters := req
		filters.Limit, filters.Cursor = 0, ""
		want, key, err := s.resume(qMeasurements, filters, "subject, unit rank, name, run_id, worker_id, worker_run_index, value_index, measurement_id", req.Cursor)
		if err != nil {
			return nil, err
		}
		offset, err := offsetOf(key)
		if err != nil {
			return nil, err
		}
		fargs := []any{req.RunID, req.ArtifactID, req.NamePrefix, req.IncludeWarmups, req.Subject, req.Workload, parameterPairs(req.Parameters)}
		res := &MeasurementList{SchemaVersion: 1, Query: qMeasurements.ID(), CorpusCommitID: s.Commit(), Measurements: []Measurement{}}
		err = s.R.Scan(ctx, qMeasurements, append(fargs, limit+1, offset), func(rows *sql.Rows) error {
			for rows.Next() {
				var m Measurement
				var vi sql.NullInt64
				var vf sql.NullFloat64
				var wri, vix sql.NullInt32
				var loops *uint64
				var order sql.NullInt32
				if err := rows.Scan(&m.MeasurementID, &m.RunID, &m.ArtifactID, &m.Name, &vi, &vf, &m.Unit, &m.Aggregation, &m.Scope,
					&m.Subject, &m.WorkerID, &wri, &vix, &loops, &m.IsWarmup, &m.Phase, &m.EvidenceLevel,
					&m.TrialID, &m.VariantID, &m.BlockID, &order); err != nil {
					return err
				}
				if order.Valid {
					m.OrderInBlock = &order.Int32
				}
				if len(res.Measurements) == limit {
					res.Truncated = true
					break
				}
				if vi.Valid {
					m.ValueInt = &vi.Int64
				}
				if vf.Valid {
					m.ValueFloat = &vf.Float64
				}
				if wri.Valid {
					m.WorkerRunIndex = &wri.Int32
				}
				if vix.Valid {
					m.ValueIndex = &vix.Int32
				}
				m.LoopCount = loops
				res.Measurements = append(res.Measurements, m)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		res.Returned = len(res.Measurements)
		if res.Truncated {
			last := res.Measurements[len(res.Measurements)-1]
			want.Key = []string{strconv.FormatInt(offset+int64(limit), 10), last.MeasurementID}
			res.Cursor = cursor.Encode(want)
		}
		res.Total, err = count(ctx, s, qMeasurementsCount, fargs)
		return res, err
	})
}

// offsetOf is the row offset an offset-keyed cursor resumes at (0 for
// the first page).
func offsetOf(key []string) (int64, error) {
	if key == nil {
		return 0, nil
	}
	offset, err := strconv.ParseInt(key[0], 10, 64)
	if err != nil || offset < 0 {
		return 0, fault.New(fault.InvalidArguments, "the cursor is not valid (key)")
	}
	return offset, nil
}
