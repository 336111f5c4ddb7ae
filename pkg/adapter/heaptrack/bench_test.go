package heaptrack

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/flameox/flameox/pkg/adapter"
	"github.com/flameox/flameox/pkg/adapter/adaptertest"
	"github.com/flameox/flameox/pkg/config"
	"github.com/flameox/flameox/pkg/internal/testenv"
)

// BenchmarkExtractLargest extracts the largest shared fixture (the
// heaptrack_gui capture) end to end: envelope, heaptrack_print, parsing,
// measurements and stacks. docs/performance.md compares it with
// heaptrack_print alone.
func BenchmarkExtractLargest(b *testing.B) {
	path := filepath.Join(sharedFixtures, "heaptrack__heaptrack.heaptrack_gui.99454.zst")
	if _, err := os.Stat(path); err != nil {
		testenv.Unable(b, "shared fixtures", "not present", "%s", path)
	}
	testenv.LookPath(b, "heaptrack_print")
	head, _ := readHead(path, 4096)
	a := New()
	for b.Loop() {
		in := adapter.ExtractInput{RunID: "run", ArtifactID: "art", Path: path, Head: head, Limits: config.DefaultLimits()}
		if _, err := a.Extract(context.Background(), in, adaptertest.NewSink(b, ExtractorName, ExtractorVersion)); err != nil {
			b.Fatal(err)
		}
	}
}
