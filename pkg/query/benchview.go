package query

import (
	"context"
	"database/sql"
	"strings"

	"github.com/flameox/flameox/pkg/catalog"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/run"
	"github.com/flameox/flameox/pkg/workspace"
)

// MaxBenchValues bounds how many benchmark values one run may bring into
// a benchstat-style comparison: the values are held in memory, as
// benchstat holds its files.
const MaxBenchValues = 1 << 20

// BenchValue is one published benchmark value as benchstat reads a line
// of a results file: where it ran (the go test package; empty for pyperf),
// the configuration keys in force (benchstat's .config), the benchmark
// name without the GOMAXPROCS suffix, that suffix, the unit and the value.
type BenchValue struct {
	Producer string // "gobench" or "pyperf"
	Worker   string
	Config   map[string]string
	Subject  string
	Procs    string
	Unit     string
	Value    float64
}

// BenchRun is one run's benchmark values and its manifest at the
// published revision (what a comparison's validity looks at).
type BenchRun struct {
	RunID    string
	Manifest *run.Manifest
	Values   []BenchValue
}

// BenchRuns is what a benchstat-style comparison of two runs reads, from
// one pinned commit.
type BenchRuns struct {
	CorpusCommitID string
	Runs           []BenchRun
}

// qBenchValues reads a run's go test and pyperf values (warm-ups left
// out, as summaries and benchstat leave them out), in file order.
var qBenchValues = catalog.Query{Name: "measurements.bench_values", Version: "1", SQL: `
SELECT CASE WHEN starts_with(m.name, 'pyperf.') THEN 'pyperf' ELSE 'gobench' END,
       ` + summaryWorker + `, ` + summaryConfig + `, coalesce(m.subject, ''), m.unit,
       coalesce(m.value_float, m.value_int::DOUBLE)
FROM measurements_current m
WHERE m.run_id = $1 AND m.scope = 'benchmark' AND NOT m.is_warmup
  AND (starts_with(m.name, 'gobench.') OR starts_with(m.name, 'pyperf.'))
  AND coalesce(m.value_float, m.value_int::DOUBLE) IS NOT NULL
ORDER BY 2, 4, coalesce(m.value_index, 0), ` + unitRank + `, 5
LIMIT $2`}

// ReadBenchRuns reads the published benchmark values of each run, with
// its manifest, from one snapshot. A run that is not published, or has
// more than MaxBenchValues values, is an error.
func ReadBenchRuns(ctx context.Context, ws *workspace.Workspace, ids ...string) (*BenchRuns, error) {
	for _, id := range ids {
		if !run.ValidID(strings.TrimSpace(id)) {
			return nil, fault.New(fault.InvalidArguments, "%q is not a run id", id).With("field", "run_id")
		}
	}
	return with(ctx, ws, func(s *Session) (*BenchRuns, error) {
		res := &BenchRuns{CorpusCommitID: s.Commit()}
		for _, id := range ids {
			id = strings.TrimSpace(id)
			d, err := s.showRun(ctx, id)
			if err != nil {
				return nil, err
			}
			if !d.Published {
				return nil, fault.New(fault.NotFound, "run %s is not published yet", id).With("run_id", id).
					Fix("`flameox recover` publishes runs that finished")
			}
			br := BenchRun{RunID: id, Manifest: d.Run}
			err = s.R.Scan(ctx, qBenchValues, []any{id, MaxBenchValues + 1}, func(rows *sql.Rows) error {
				for rows.Next() {
					var v BenchValue
					var config string
					if err := rows.Scan(&v.Producer, &v.Worker, &config, &v.Subject, &v.Unit, &v.Value); err != nil {
						return err
					}
					v.Config = configOf(config)
					if p, ok := v.Config["gomaxprocs"]; ok {
						v.Procs = p
						delete(v.Config, "gomaxprocs")
					}
					br.Values = append(br.Values, v)
				}
				return nil
			})
			if err != nil {
				return nil, err
			}
			if len(br.Values) > MaxBenchValues {
				return nil, fault.New(fault.QueryBudgetExceeded, "run %s has more than %d benchmark values", id, MaxBenchValues).
					With("run_id", id).With("max_values", "1048576").Fix("split the benchmarks over smaller runs")
			}
			res.Runs = append(res.Runs, br)
		}
		return res, nil
	})
}
