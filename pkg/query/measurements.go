package query

import (
	"context"
	"database/sql"

	"github.com/flameox/flameox/pkg/catalog"
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
	EvidenceLevel  string   `json:"evidence_level"`
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
	RunID          string `json:"run_id,omitempty" jsonschema:"only this run"`
	ArtifactID     string `json:"artifact_id,omitempty" jsonschema:"only values extracted from this artifact"`
	NamePrefix     string `json:"name_prefix,omitempty" jsonschema:"only metric names starting with this, e.g. process."`
	IncludeWarmups bool   `json:"include_warmups,omitempty" jsonschema:"also return warm-up values"`
	Limit          int    `json:"limit,omitempty" jsonschema:"rows to return (default 50, max 1000)"`
	Cursor         string `json:"cursor,omitempty" jsonschema:"cursor from a previous page"`
}

const measurementFilters = `($1 = '' OR run_id = $1) AND ($2 = '' OR artifact_id = $2)
  AND ($3 = '' OR starts_with(name, $3)) AND ($4 OR NOT is_warmup)`

var (
	qMeasurements = catalog.Query{Name: "measurements.query", Version: "1", SQL: `
SELECT measurement_id, run_id, coalesce(artifact_id, ''), name, value_int, value_float, unit, aggregation, scope,
       coalesce(subject, ''), coalesce(worker_id, ''), worker_run_index, value_index, loop_count, is_warmup,
       coalesce(phase, ''), evidence_level
FROM measurements_current
WHERE ` + measurementFilters + `
  AND ($5::VARCHAR IS NULL OR run_id > $5 OR (run_id = $5 AND measurement_id > $6))
ORDER BY run_id, measurement_id
LIMIT $7`}
	qMeasurementsCount = catalog.Query{Name: "measurements.count", Version: "1",
		SQL: `SELECT count(*) FROM measurements_current WHERE ` + measurementFilters}
)

// QueryMeasurements lists measurements in (run, measurement id) order.
func QueryMeasurements(ctx context.Context, ws *workspace.Workspace, req MeasurementsRequest) (*MeasurementList, error) {
	limit, err := Limit(req.Limit)
	if err != nil {
		return nil, err
	}
	return with(ctx, ws, func(s *Session) (*MeasurementList, error) {
		filters := req
		filters.Limit, filters.Cursor = 0, ""
		want, key, err := s.resume(qMeasurements, filters, "run_id, measurement_id", req.Cursor)
		if err != nil {
			return nil, err
		}
		var afterRun, afterID any
		if key != nil {
			afterRun, afterID = key[0], key[1]
		}
		fargs := []any{req.RunID, req.ArtifactID, req.NamePrefix, req.IncludeWarmups}
		res := &MeasurementList{SchemaVersion: 1, Query: qMeasurements.ID(), CorpusCommitID: s.Commit(), Measurements: []Measurement{}}
		err = s.R.Scan(ctx, qMeasurements, append(fargs, afterRun, afterID, limit+1), func(rows *sql.Rows) error {
			for rows.Next() {
				var m Measurement
				var vi sql.NullInt64
				var vf sql.NullFloat64
				var wri, vix sql.NullInt32
				var loops *uint64
				if err := rows.Scan(&m.MeasurementID, &m.RunID, &m.ArtifactID, &m.Name, &vi, &vf, &m.Unit, &m.Aggregation, &m.Scope,
					&m.Subject, &m.WorkerID, &wri, &vix, &loops, &m.IsWarmup, &m.Phase, &m.EvidenceLevel); err != nil {
					return err
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
			want.Key = []string{last.RunID, last.MeasurementID}
			res.Cursor = catalog.EncodeCursor(want)
		}
		res.Total, err = count(ctx, s, qMeasurementsCount, fargs)
		return res, err
	})
}
