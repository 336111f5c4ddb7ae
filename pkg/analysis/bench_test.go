package analysis

import (
	"context"
	"testing"
)

// BenchmarkHotspotsLarge is a hotspots answer on the published largest
// pprof fixture, in process: a fresh DuckDB reader, its views and the
// queries, without the process start-up a CLI call adds
// (scripts/bench/hotspots.sh measures that; docs/performance.md). The
// profile has one thread, so hotspots read by rank; "aggregate" forces
// the query that sums several threads or reads an older extraction.
func BenchmarkHotspotsLarge(b *testing.B) {
	t := &testing.T{}
	ws, ids := importProfiles(t, "../profile/testdata/google-pprof__large.cpu.pb.gz")
	if t.Failed() {
		b.Fatal("import failed")
	}
	for _, agg := range []bool{false, true} {
		name := "rank"
		if agg {
			name = "aggregate"
		}
		b.Run(name, func(b *testing.B) {
			forceAggregate = agg
			defer func() { forceAggregate = false }()
			for b.Loop() {
				if _, err := Hotspots(context.Background(), ws, HotspotsRequest{Input: ids[0], Limit: 10}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
