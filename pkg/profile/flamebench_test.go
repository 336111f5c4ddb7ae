package profile

import (
	"io"
	"os"
	"testing"

	"github.com/google/pprof/profile"
)

func BenchmarkFlameGraph(b *testing.B) {
	f, err := os.Open("testdata/google-pprof__large.cpu.pb.gz")
	if err != nil {
		b.Fatal(err)
	}
	p, err := profile.Parse(f)
	f.Close()
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		root, _ := FlameTree(p, len(p.SampleType)-1)
		if _, err := WriteFlameGraph(io.Discard, root, FlameOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}
