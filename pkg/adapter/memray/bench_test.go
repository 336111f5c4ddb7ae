package memray

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flameox/flameox/pkg/adapter"
	"github.com/flameox/flameox/pkg/adapter/adaptertest"
	"github.com/flameox/flameox/pkg/config"
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
