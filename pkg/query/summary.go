package query

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/flameox/flameox/pkg/catalog"
	"github.com/flameox/flameox/pkg/cursor"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/workspace"
	"golang.org/x/perf/benchmath"
	"gonum.org/v1/gonum/stat"
)

// SummaryConfidence is the confidence level of a summary's interval,
// benchstat's default.
const SummaryConfidence = 0.95

// wideSpread is the half-width of the interval, relative to the median,
// past which a summary warns that the values vary too much to show a small
// change (pyperf warns at a standard deviation of 10% of the mean).
const wideSpread = 0.10

// SummaryRequest names the run (and optionally the benchmark or metric)
// whose benchmark values are summarised.
type SummaryRequest struct {
	RunID          string `json:"run_id" jsonschema:"run id (list_runs)"`
	Subject        string `json:"subject,omitempty" jsonschema:"only this benchmark (exact), e.g. BenchmarkSum/n=1024"`
	NamePrefix     string `json:"name_prefix,omitempty" jsonschema:"only metric names starting with this, e.g. gobench.sec"`
	IncludeWarmups bool   `json:"include_warmups,omitempty" jsonschema:"count warm-up values too"`
	Limit          int    `json:"limit,omitempty" jsonschema:"rows to return (default 50, max 1000)"`
	Cursor         string `json:"cursor,omitempty" jsonschema:"cursor from a previous page"`
}

// SummaryRow describes the values of one benchmark and metric the way
// benchstat does: the median with a distribution-free confidence interval
// for it (benchmath.AssumeNothing), and their spread.
type SummaryRow struct {
	// Worker is where the benchmark ran: the package for go test; empty
	// for pyperf, whose values are pooled over its worker processes.
	Worker string `json:"worker,omitempty"`
	// Config is the rest of a go test benchmark's identity: the
	// configuration keys in force at its lines and gomaxprocs
	// (benchstat's .config); empty for other producers.
	Config  map[string]string `json:"config,omitempty"`
	Subject string            `json:"subject"`
	Name    string            `json:"name"`
	Unit    string            `json:"unit"`
	N       int               `json:"n"`
	Median  float64           `json:"median"`
	Min     float64           `json:"min"`
	Max     float64           `json:"max"`
	// IQR is the interquartile range (empirical quantiles, gonum).
	IQR float64 `json:"iqr"`
	// CILow and CIHigh bound the median at Confidence; null when there are
	// too few values for an interval at that level (benchstat's "need >= 6
	// samples").
	CILow      *float64 `json:"ci_low"`
	CIHigh     *float64 `json:"ci_high"`
	Confidence float64  `json:"confidence"`
	// Range is benchstat's "± N%": the interval's larger half-width
	// relative to the median ("∞" without an interval, "?" across zero).
	Range    string   `json:"range"`
	Warnings []string `json:"warnings"`
}

// MeasurementSummary is the result of `flameox measurements summary` and
// MCP summarize_measurements.
type MeasurementSummary struct {
	SchemaVersion  int    `json:"schema_version"`
	Query          string `json:"query"`
	CorpusCommitID string `json:"corpus_commit_id"`
	RunID          string `json:"run_id"`
	Page
	Rows []SummaryRow `json:"rows"`
}

const summaryFilters = `m.run_id = $1 AND m.scope = 'benchmark' AND ($2 = '' OR m.subject = $2)
  AND ($3 = '' OR starts_with(m.name, $3)) AND ($4 OR NOT m.is_warmup)
  AND coalesce(m.value_float, m.value_int::DOUBLE) IS NOT NULL`

// summaryWorker is the worker a benchmark's values are grouped under. For
// go test it is worker_id, the package: part of a benchmark's identity,
// as benchstat groups by pkg. pyperf runs each run of a benchmark in its
// own worker process (worker_id worker-N), and pyperf's median is over
// the values of all of them: its rows are pooled across workers.
const summaryWorker = `CASE WHEN starts_with(m.name, 'pyperf.') THEN '' ELSE coalesce(m.worker_id, '') END`

// summaryConfig is the rest of a go test benchmark's identity, as
// benchstat keys its tables by .config: every configuration key in force
// at the result's line (goos, goarch, pkg, cpu, user keys) and the
// GOMAXPROCS suffix, as sorted key=value lines (a configuration value
// holds no newline; a key no '='); the name parts and the original unit
// are not configuration. The same benchmark under two toolchains in one
// file is two rows. Other producers have none.
const summaryConfig = `CASE WHEN starts_with(m.name, 'gobench.') THEN coalesce(array_to_string(list_sort(list_transform(
  list_filter(map_entries(m.dimensions), lambda e: NOT starts_with(e.key, 'name.') AND e.key <> 'orig_unit'),
  lambda e: e.key || '=' || e.value)), chr(10)), '') ELSE '' END`

var (
	// One row per benchmark, metric and unit, its values as a sorted list:
	// the statistics are benchstat's own (benchmath), computed in Go.
	qSummary = catalog.Query{Name: "measurements.summary", Version: "3", SQL: `
SELECT ` + summaryWorker + `, ` + summaryConfig + `, coalesce(m.subject, ''), m.name, m.unit,
       list(coalesce(m.value_float, m.value_int::DOUBLE) ORDER BY coalesce(m.value_float, m.value_int::DOUBLE))
FROM measurements_current m
WHERE ` + summaryFilters + `
GROUP BY 1, 2, 3, 4, 5
ORDER BY 1, 2, 3, ` + unitRank + `, 4, 5
LIMIT $5 OFFSET $6`}
	qSummaryCount = catalog.Query{Name: "measurements.summary_count", Version: "3", SQL: `
SELECT count(*) FROM (SELECT 1 FROM measurements_current m WHERE ` + summaryFilters + ` GROUP BY ` + summaryWorker + `, ` + summaryConfig + `, coalesce(m.subject, ''), m.name, m.unit)`}
)

// SummarizeMeasurements summarises a run's benchmark values per benchmark
// and metric: n, median with benchstat's confidence interval, min, max,
// interquartile range, and the warnings benchstat and pyperf would give.
func SummarizeMeasurements(ctx context.Context, ws *workspace.Workspace, req SummaryRequest) (*MeasurementSummary, error) {
	if req.RunID == "" {
		return nil, fault.New(fault.InvalidArguments, "a summary needs the run id").With("field", "run_id")
	}
	limit, err := Limit(req.Limit)
	if err != nil {
		return nil, err
	}
	return with(ctx, ws, func(s *Session) (*MeasurementSummary, error) {
		filters := req
		filters.Limit, filters.Cursor = 0, ""
		want, key, err := s.resume(qSummary, filters, "worker, config, subject, unit rank, name, unit", req.Cursor)
		if err != nil {
			return nil, err
		}
		offset, err := offsetOf(key)
		if err != nil {
			return nil, err
		}
		fargs := []any{req.RunID, req.Subject, req.NamePrefix, req.IncludeWarmups}
		res := &MeasurementSummary{SchemaVersion: 1, Query: qSummary.ID(), CorpusCommitID: s.Commit(), RunID: req.RunID, Rows: []SummaryRow{}}
		err = s.R.Scan(ctx, qSummary, append(fargs, limit+1, offset), func(rows *sql.Rows) error {
			for rows.Next() {
				var r SummaryRow
				var values []any
				var config string
				if err := rows.Scan(&r.Worker, &config, &r.Subject, &r.Name, &r.Unit, &values); err != nil {
					return err
				}
				r.Config = configOf(config)
				if len(res.Rows) == limit {
					res.Truncated = true
					break
				}
				xs := make([]float64, 0, len(values))
				for _, v := range values {
					if f, ok := v.(float64); ok {
						xs = append(xs, f)
					}
				}
				res.Rows = append(res.Rows, summarize(r, xs))
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		res.Returned = len(res.Rows)
		if res.Truncated {
			last := res.Rows[len(res.Rows)-1]
			want.Key = []string{strconv.FormatInt(offset+int64(limit), 10), last.Subject + " " + last.Name}
			res.Cursor = cursor.Encode(want)
		}
		res.Total, err = count(ctx, s, qSummaryCount, fargs)
		return res, err
	})
}

// summarize fills r from xs, sorted ascending.
func summarize(r SummaryRow, xs []float64) SummaryRow {
	r.N, r.Confidence, r.Warnings = len(xs), SummaryConfidence, []string{}
	if len(xs) == 0 {
		r.Range = "∞"
		r.Warnings = append(r.Warnings, "no values")
		return r
	}
	if !slices.IsSorted(xs) {
		slices.Sort(xs)
	}
	sample := benchmath.NewSample(xs, &benchmath.DefaultThresholds)
	sum := benchmath.AssumeNothing.Summary(sample, SummaryConfidence)
	r.Median, r.Min, r.Max = sum.Center, xs[0], xs[len(xs)-1]
	r.IQR = stat.Quantile(0.75, stat.Empirical, xs, nil) - stat.Quantile(0.25, stat.Empirical, xs, nil)
	r.Range = sum.PctRangeString()
	if !math.IsInf(sum.Lo, 0) && !math.IsInf(sum.Hi, 0) {
		lo, hi := sum.Lo, sum.Hi
		r.CILow, r.CIHigh = &lo, &hi
	}
	for _, w := range sum.Warnings {
		r.Warnings = append(r.Warnings, w.Error())
	}
	if r.CILow != nil && r.Median != 0 {
		if v := math.Max(*r.CIHigh/r.Median-1, 1-*r.CILow/r.Median); v > wideSpread {
			r.Warnings = append(r.Warnings, fmt.Sprintf("the %.0f%% interval is wider than ±%.0f%% of the median: the values vary too much to show a small change",
				SummaryConfidence*100, wideSpread*100))
		}
	}
	return r
}

// configOf reads summaryConfig's key=value lines; nil for none.
func configOf(text string) map[string]string {
	if text == "" {
		return nil
	}
	c := map[string]string{}
	for _, line := range strings.Split(text, "\n") {
		k, v, _ := strings.Cut(line, "=")
		c[k] = v
	}
	return c
}
