package memray

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flameox/flameox/pkg/adapter"
	"github.com/flameox/flameox/pkg/adapter/adaptertest"
	"github.com/flameox/flameox/pkg/config"
	"github.com/flameox/flameox/pkg/internal/testenv"
	"os"
	"time"
)

// BenchmarkExtract is an extraction of retain.bin (three reporters run at
// once), to compare with BenchmarkStatsAlone, memray stats by itself
// (docs/performance.md).
func BenchmarkExtract(b *testing.B) {
	c := New().Probe(context.Background())
	if c.Status != "available" {
		b.Skip("memray is not installed")
	}
	for b.Loop() {
		sink := newBenchSink(b)
		if _, err := New().Extractors()[0].Extract(context.Background(), benchInput(b), sink); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStatsAlone runs `memray stats --json` on retain.bin, the
// reporter alone.
func BenchmarkStatsAlone(b *testing.B) {
	c := New().Probe(context.Background())
	if c.Status != "available" {
		b.Skip("memray is not installed")
	}
	py, _ := RealSystem().LookPath("python3")
	out := filepath.Join(b.TempDir(), "stats.json")
	for b.Loop() {
		if _, err := RealSystem().Output(context.Background(), []string{py, "-m", "memray", "stats", "--json", "-o", out, "-f", "testdata/retain.bin"}, time.Minute); err != nil {
			b.Fatal(err)
		}
	}
}

func newBenchSink(b *testing.B) *adaptertest.Sink {
	return adaptertest.NewSink(b, ExtractorName, ExtractorVersion)
}

func benchInput(b *testing.B) adapter.ExtractInput {
	return adapter.ExtractInput{RunID: "run", ArtifactID: "art", Kind: Kind, Path: "testdata/retain.bin", Limits: config.DefaultLimits()}
}

// BenchmarkParseSnapshots reads a snapshot file of an hour's capture at
// memray run's default tick (360,000 snapshots) and keeps MaxSnapshots.
func BenchmarkParseSnapshots(b *testing.B) {
	r := strings.NewReader(snapshotFile(360000, 250000))
	b.SetBytes(r.Size())
	b.ReportAllocs()
	for b.Loop() {
		r.Seek(0, 0)
		s, err := ParseSnapshots(r, config.DefaultLimits(), MaxSnapshots)
		if err != nil || len(s.Kept) != MaxSnapshots {
			b.Fatal(err)
		}
	}
}

// largest is the largest shared memray fixture (header version 12).
const largest = "linear-hashing__memray.bin"

// BenchmarkLargestFixture alternates `memray stats --json` alone and an
// extraction of the largest shared fixture, both with the memray release
// that reads it, and reports each and their ratio (docs/performance.md).
func BenchmarkLargestFixture(b *testing.B) {
	path := filepath.Join(sharedFixtures, largest)
	if _, err := os.Stat(path); err != nil {
		testenv.Unable(b, "shared fixtures", "not present", "%s", path)
	}
	h, err := HeaderVersion(path)
	if err != nil {
		b.Fatal(err)
	}
	rd, ok, err := FindReader(RealSystem(), h)
	if err != nil || !ok {
		testenv.Unable(b, "memray "+ExtraRelease, "not installed", "%v", err)
	}
	in := adapter.ExtractInput{RunID: "run", ArtifactID: "art", Kind: Kind, Path: path, Limits: config.DefaultLimits()}
	var stats, extract time.Duration
	for b.Loop() {
		t0 := time.Now()
		statsOf(b, rd, path)
		t1 := time.Now()
		if _, err := New().Extractors()[0].Extract(context.Background(), in, newBenchSink(b)); err != nil {
			b.Fatal(err)
		}
		stats, extract = stats+t1.Sub(t0), extract+time.Since(t1)
	}
	b.ReportMetric(float64(stats.Milliseconds())/float64(b.N), "stats_ms/op")
	b.ReportMetric(float64(extract.Milliseconds())/float64(b.N), "extract_ms/op")
	b.ReportMetric(float64(extract)/float64(stats), "x_stats")
}
