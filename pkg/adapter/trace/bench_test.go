package trace

import (
	"bytes"
	"context"
	"os"
	"testing"

	"github.com/flameox/flameox/pkg/config"
)

// BenchmarkRead reads and builds the largest fixture (the reader alone);
// BenchmarkExtract also writes its rows as Parquet. docs/traces.md
// compares them with Python's json.load of the same file.
func BenchmarkRead(b *testing.B) {
	data, err := os.ReadFile(shared(b, largest))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		x, err := read(bytes.NewReader(data), config.Limits{})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := x.finish(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkExtract(b *testing.B) {
	in := inputOf(b, shared(b, largest))
	for b.Loop() {
		if _, err := NewExtractor().Extract(context.Background(), in, newSink(b)); err != nil {
			b.Fatal(err)
		}
	}
}
