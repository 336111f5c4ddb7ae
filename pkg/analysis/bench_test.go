package analysis

import (
	"context"
	"testing"
)

// BenchmarkHotspotsLarge is a hotspots answer on the published largest
// pprof fixture, in process: a fresh DuckDB reader, its views and the
// queries, without the process start-up a CLI call adds
// (scripts/bench/hotspots.sh measures that; docs/performance.md).
func BenchmarkHotspotsLarge(b *testing.B) {
	t := &testing.T{}
	ws, ids := importProfiles(t, "../profile/testdata/google-pprof__large.cpu.pb.gz")
	if t.Failed() {
		b.Fatal("import failed")
	}
	for b.Loop() {
		if _, err := Hotspots(context.Background(), ws, HotspotsRequest{Input: ids[0], Limit: 10}); err != nil {
			b.Fatal(err)
		}
	}
}
