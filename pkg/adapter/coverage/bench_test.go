package coverage

import (
	"bytes"
	"context"
	"os"
	"testing"

	"github.com/flameox/flameox/pkg/adapter/adaptertest"
	"github.com/flameox/flameox/pkg/config"
)

// largest is the largest coverage fixture (docs/coverage.md, Performance).
const largest = "testdata/oig-cloud__coverage.json"

// BenchmarkDecode reads the largest fixture into a Report.
func BenchmarkDecode(b *testing.B) {
	data, err := os.ReadFile(largest)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := Decode(bytes.NewReader(data), config.DefaultLimits()); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkExtract decodes the largest fixture and writes its rows
// through the real schema writers into Parquet files.
func BenchmarkExtract(b *testing.B) {
	data, err := os.ReadFile(largest)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	in := input(nil, largest, config.DefaultLimits())
	for b.Loop() {
		sink := adaptertest.NewSink(b, ExtractorName, ExtractorVersion)
		if _, err := NewExtractor().Extract(context.Background(), in, sink); err != nil {
			b.Fatal(err)
		}
	}
}
