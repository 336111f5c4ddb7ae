package catalog

import (
	"context"
	"database/sql"
	"fmt"
	"testing"

	"github.com/flameox/flameox/pkg/corpus"
	"github.com/flameox/flameox/pkg/evidence/schema"
)

// benchCorpus publishes n runs (every fourth with two revisions) in files of
// 10K rows.
func benchCorpus(b *testing.B, n int) *fixture {
	f := newFixture(b)
	statuses := []string{"registered", "registered", "failed", "pending"}
	var files []corpus.GenerationFile
	var rows [][]any
	flush := func() {
		files = append(files, f.file("g1", schema.Runs, len(files), rows))
		rows = rows[:0]
	}
	for i := range n {
		id := fmt.Sprintf("run-%07d", i)
		rows = append(rows, runRow(id, 0, "pending"))
		if i%4 == 0 {
			rows = append(rows, runRow(id, 1, statuses[(i/4)%len(statuses)]))
		}
		if len(rows) >= 10000 {
			flush()
		}
	}
	if len(rows) > 0 {
		flush()
	}
	f.publish("g1", files, nil)
	return f
}

func BenchmarkOpenAndCount(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("runs=%d", n), func(b *testing.B) {
			f := benchCorpus(b, n)
			ctx := context.Background()
			countQ := Query{Name: "bench.count", Version: "1", SQL: "SELECT count(*) FROM runs_current WHERE capture_status = $1"}
			groupQ := Query{Name: "bench.group", Version: "1", SQL: "SELECT capture_status, count(*), sum(wall_time_ns) FROM runs_current GROUP BY ALL ORDER BY 1"}
			b.ResetTimer()
			for b.Loop() {
				r, err := OpenHead(ctx, f.root, Options{})
				if err != nil {
					b.Fatal(err)
				}
				var c int64
				if err := r.Scan(ctx, countQ, []any{"registered"}, func(rows *sql.Rows) error {
					rows.Next()
					return rows.Scan(&c)
				}); err != nil {
					b.Fatal(err)
				}
				groups := 0
				if err := r.Scan(ctx, groupQ, nil, func(rows *sql.Rows) error {
					for rows.Next() {
						groups++
					}
					return nil
				}); err != nil {
					b.Fatal(err)
				}
				r.Close()
				if c != int64(n/8) || groups != 3 {
					b.Fatalf("count = %d, groups = %d", c, groups)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/op")
		})
	}
}
