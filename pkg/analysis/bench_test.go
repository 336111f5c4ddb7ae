package analysis

import (
	"context"
	"path/filepath"
	"testing"
)

// BenchmarkHotspots is a hotspots answer (limit 10) on published
// fixtures, in process, without the process start-up a CLI call adds
// (scripts/bench/hotspots.sh and hotspots-small.sh measure that;
// docs/performance.md): "direct" is the reader without DuckDB
// (hotspots_direct.go), "duckdb" a fresh DuckDB reader with its views and
// queries (by rank where the profile allows), "duckdb-aggregate" the
// query that sums several threads or reads an older extraction. The
// speedscope profile has several threads, so its default page is summed.
func BenchmarkHotspots(b *testing.B) {
	files := []string{"../profile/testdata/parca__alloc_objects.pb.gz", "../profile/testdata/google-pprof__large.cpu.pb.gz",
		"../profile/testdata/self-driving-sim__py-spy-0.4.1.speedscope.json"}
	t := &testing.T{}
	ws, ids := importProfiles(t, files...)
	if t.Failed() {
		b.Fatal("import failed")
	}
	for i, f := range files {
		for _, mode := range []string{"direct", "duckdb", "duckdb-aggregate"} {
			b.Run(filepath.Base(f)+"/"+mode, func(b *testing.B) {
				forceDuckDB, forceAggregate = mode != "direct", mode == "duckdb-aggregate"
				defer func() { forceDuckDB, forceAggregate = false, false }()
				for b.Loop() {
					if _, err := Hotspots(context.Background(), ws, HotspotsRequest{Input: ids[i], Limit: 10}); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
