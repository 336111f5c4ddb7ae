package stacks

import (
	"context"
	"io"
	"os"
	"testing"
	"time"

	"github.com/flameox/flameox/pkg/adapter"
	"github.com/flameox/flameox/pkg/evidence/schema"
	"github.com/flameox/flameox/pkg/profile/bombtest"
)

// discardSink writes every table through the real schema writer into
// io.Discard: extraction and Parquet encoding, without the file system.
type discardSink struct{ ws []*schema.Writer }

func (s *discardSink) Table(t *schema.Table) (*schema.Writer, error) {
	for _, w := range s.ws {
		if w.Table() == t {
			return w, nil
		}
	}
	w, err := schema.NewWriter(t, io.Discard, schema.Options{Common: schema.Common{GenerationID: "g", PublishedAt: time.Unix(1, 0),
		ExtractorName: ExtractorName, ExtractorVersion: ExtractorVersion}})
	s.ws = append(s.ws, w)
	return w, err
}

func (s *discardSink) close() error {
	for _, w := range s.ws {
		if _, err := w.Close(); err != nil {
			return err
		}
	}
	return nil
}

// BenchmarkExtractLarge is the import's extraction of the largest pprof
// fixture (23,038 frames, 92,068 call-edge rows, 10,000 stacks): parse,
// aggregate and write every table (docs/performance.md).
func BenchmarkExtractLarge(b *testing.B) {
	benchExtract(b, "../../profile/testdata/google-pprof__large.cpu.pb.gz")
}

// BenchmarkExtractMillion is the extraction of the bomb corpus's
// 10^6-location profile (bombtest; 250,000 samples 33 to 64 frames deep):
// parse, aggregate and write every table (docs/performance.md, "Bomb
// corpus").
func BenchmarkExtractMillion(b *testing.B) { benchBomb(b, "pprof-1e6-locations.pb.gz") }

// BenchmarkExtractFile extracts the profile FLAMEOX_BENCH_PROFILE names,
// e.g. scripts/bench/bigprofile's 10^6-location shapes
// (docs/performance.md, "Profiles with 10^6 locations"); it is skipped
// when the variable is unset.
func BenchmarkExtractFile(b *testing.B) {
	path := os.Getenv("FLAMEOX_BENCH_PROFILE")
	if path == "" {
		b.Skip("FLAMEOX_BENCH_PROFILE names no profile")
	}
	benchExtract(b, path)
}

// BenchmarkExtractHugeName is the extraction of the bomb corpus's profile
// with one 64 MiB function name (docs/performance.md, "Bomb corpus").
func BenchmarkExtractHugeName(b *testing.B) { benchBomb(b, "pprof-huge-name.pb.gz") }

func benchBomb(b *testing.B, name string) {
	dir := b.TempDir()
	cases, err := bombtest.Write(dir, false)
	if err != nil {
		b.Fatal(err)
	}
	var path string
	for _, c := range cases {
		if c.Name == name {
			path = c.File
		}
	}
	benchExtract(b, path)
}

// benchExtract extracts path into a sink that writes and discards every
// table, once per iteration.
func benchExtract(b *testing.B, path string) {
	in := adapter.ExtractInput{RunID: "run", ArtifactID: "sha256:0123", Path: path}
	b.ReportAllocs()
	for b.Loop() {
		s := &discardSink{}
		if _, err := (&Extractor{}).Extract(context.Background(), in, s); err != nil {
			b.Fatal(err)
		}
		if err := s.close(); err != nil {
			b.Fatal(err)
		}
	}
}
