package heaptrack

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/flameox/flameox/pkg/adapter"
	"github.com/flameox/flameox/pkg/adapter/adaptertest"
	"github.com/flameox/flameox/pkg/config"
	"github.com/flameox/flameox/pkg/internal/testenv"
)

const largest = "heaptrack__heaptrack.heaptrack_gui.99454.zst"

// BenchmarkExtractLargest extracts the largest shared fixture (the
// heaptrack_gui capture) end to end: envelope, heaptrack_print's runs,
// parsing, measurements and stacks. docs/performance.md compares it with
// heaptrack_print alone.
func BenchmarkExtractLargest(b *testing.B) {
	path := largestFixture(b)
	for b.Loop() {
		extractOnce(b, path)
	}
}

// BenchmarkExtractVsPrint alternates heaptrack_print alone (the run that
// writes the report and the peak flame graph, PrintArgv) and the whole
// extraction on the largest fixture, so that both see the same load on a
// shared machine, and reports their ratio (x_print).
func BenchmarkExtractVsPrint(b *testing.B) {
	path := largestFixture(b)
	exe := testenv.LookPath(b, "heaptrack_print")
	named, cleanup, err := nameByContent(path)
	if err != nil {
		b.Fatal(err)
	}
	defer cleanup()
	argv := append(PrintArgv(exe, named), "--flamegraph-cost-type", "peak", "--print-flamegraph", filepath.Join(b.TempDir(), "peak.stacks"))
	var print, extract time.Duration
	for b.Loop() {
		t0 := time.Now()
		if err := exec.Command(argv[0], argv[1:]...).Run(); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		extractOnce(b, path)
		print, extract = print+t1.Sub(t0), extract+time.Since(t1)
	}
	b.ReportMetric(float64(print.Milliseconds())/float64(b.N), "print_ms/op")
	b.ReportMetric(float64(extract.Milliseconds())/float64(b.N), "extract_ms/op")
	b.ReportMetric(float64(extract)/float64(print), "x_print")
}

func largestFixture(b *testing.B) string {
	path := filepath.Join(sharedFixtures, largest)
	if _, err := os.Stat(path); err != nil {
		testenv.Unable(b, "shared fixtures", "not present", "%s", path)
	}
	testenv.LookPath(b, "heaptrack_print")
	return path
}

func extractOnce(b *testing.B, path string) {
	head, _ := readHead(path, 4096)
	in := adapter.ExtractInput{RunID: "run", ArtifactID: "art", Path: path, Head: head, Limits: config.DefaultLimits()}
	if _, err := New().Extract(context.Background(), in, adaptertest.NewSink(b, ExtractorName, ExtractorVersion)); err != nil {
		b.Fatal(err)
	}
}
