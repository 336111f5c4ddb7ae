package massif

import (
	"context"
	"os"
	"testing"

	"github.com/flameox/flameox/pkg/adapter"
	"github.com/flameox/flameox/pkg/adapter/adaptertest"
	"github.com/flameox/flameox/pkg/config"
)

// BenchmarkExtract extracts the largest fixture (kate2): the parse, the
// measurements and the peak tree's frames and stacks (docs/performance.md
// compares it with ms_print on the same file).
func BenchmarkExtract(b *testing.B) {
	path := "testdata/massif-visualizer__massif.out.kate2"
	head, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	in := adapter.ExtractInput{RunID: "r1", ArtifactID: "a1", Kind: KindMemory, Path: path, Head: head[:4096], Limits: config.DefaultLimits()}
	e := NewExtractor()
	for b.Loop() {
		if _, err := e.Extract(context.Background(), in, adaptertest.NewSink(b, e.Name(), e.Version())); err != nil {
			b.Fatal(err)
		}
	}
}
