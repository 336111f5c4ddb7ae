package gotest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"

	"github.com/flameox/flameox/pkg/adapter"
	"github.com/flameox/flameox/pkg/fault"
)

// Extractor identity.
const (
	ExtractorName = "gobench"
	// ExtractorVersion 2: value_index counts the repetitions of a series
	// (package, full name, configuration in force), and the measurement id
	// includes the configuration, so a benchmark under two configurations
	// in one file is two series.
	ExtractorVersion = "2"
)

// sniffBytes bounds what Accepts reads to decide.
const sniffBytes = 1 << 20

// BenchExtractor reads `go test` output — a test2json stream (go test
// -json, the stdout of a gotest capture) or plain `go test -bench` text —
// into measurements: one row per benchmark value and unit, and, for a
// test2json stream, the tests passed, failed and skipped per package.
//
// Values follow benchstat's conventions (golang.org/x/perf/benchfmt):
// units are tidied (ns/op becomes sec/op, MB/s becomes B/s) and values are
// float64 in the tidied unit; the original unit is kept in the dimension
// orig_unit. Each row is a mean over loop_count iterations.
type BenchExtractor struct{}

func (*BenchExtractor) Name() string    { return ExtractorName }
func (*BenchExtractor) Version() string { return ExtractorVersion }

// Accepts decides by content: a test2json event stream, or text in which
// benchfmt finds at least one valid benchmark result within the first MiB.
func (*BenchExtractor) Accepts(in adapter.ExtractInput) bool {
	head := in.Head
	if t := bytes.TrimLeft(head, " \t\r\n\ufeff"); bytes.IndexByte(head, 0) >= 0 && len(t) > 0 && t[0] != '{' && t[0] != 0xef {
		return false // binary, and not a test2json stream: the whole head would be refused below
	}
	if f, err := os.Open(in.Path); err == nil {
		b, err := io.ReadAll(io.LimitReader(f, sniffBytes))
		f.Close()
		if err == nil && len(b) >= len(head) {
			head = b
		}
	}
	if isStream(head) {
		return true
	}
	if bytes.IndexByte(head, 0) >= 0 {
		return false
	}
	if len(head) == sniffBytes { // only complete lines count
		head = head[:bytes.LastIndexByte(head, '\n')+1]
	}
	found := false
	p := newParser(context.Background(), func(result) error { found = true; return io.EOF })
	p.text(bytes.NewReader(head), "head", "")
	return found
}

// Extract parses the whole payload and writes measurements rows. Lines
// benchfmt cannot parse become limitations; input with neither a benchmark
// result nor a test2json event is refused with ARTIFACT_PARSE_FAILED.
func (*BenchExtractor) Extract(ctx context.Context, in adapter.ExtractInput, sink adapter.Sink) (*adapter.Extraction, error) {
	t, n, err := extract(ctx, in, sink)
	if err != nil {
		return nil, err
	}
	return &adapter.Extraction{Extractor: ExtractorName, Version: ExtractorVersion,
		Rows: map[string]int64{"measurements": n}, Limitations: limitations(t)}, nil
}

// extract is Extract returning the tally, for tests.
func extract(ctx context.Context, in adapter.ExtractInput, sink adapter.Sink) (*tally, int64, error) {
	f, err := os.Open(in.Path)
	if err != nil {
		return nil, 0, fault.Wrap(fault.ArtifactParseFailed, err, "open the go test output")
	}
	defer f.Close()
	head := make([]byte, 64<<10)
	k, _ := io.ReadFull(f, head)
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, 0, fault.Wrap(fault.ArtifactParseFailed, err, "read the go test output")
	}
	w := &rows{adapter.Measurements{Sink: sink, RunID: in.RunID, ArtifactID: in.ArtifactID}}
	p := newParser(ctx, w.bench)
	stream := isStream(head[:k])
	if stream {
		err = p.stream(f)
	} else {
		err = p.text(f, "input", "")
	}
	if err != nil {
		if ctx.Err() != nil {
			return &p.t, w.N, ctx.Err()
		}
		return &p.t, w.N, fault.Wrap(fault.ArtifactParseFailed, err, "read the go test output")
	}
	if p.t.results == 0 && len(p.t.suites) == 0 {
		return &p.t, w.N, fault.New(fault.ArtifactParseFailed,
			"no Go benchmark result or test2json event found (%d unparsable benchmark lines)", p.t.syntax).
			With("syntax_errors", fmt.Sprint(p.t.syntax)).
			Fix("Extract the stdout of `go test -bench …` or `go test -json …`.")
	}
	for _, s := range p.t.suites {
		if err := w.tests(s); err != nil {
			return &p.t, w.N, err
		}
		run, build, err := w.phases(s, in.Started)
		if err != nil {
			return &p.t, w.N, err
		}
		p.t.runTimes, p.t.buildTimes = p.t.runTimes+b2i(run), p.t.buildTimes+b2i(build)
	}
	return &p.t, w.N, nil
}

func limitations(t *tally) []string {
	lim := []string{
		"benchmark values are go test's per-iteration means (loop_count iterations each), in benchstat's tidied units (sec/op, B/op, B/s, custom units unchanged); individual iterations are not observed",
		"value_index is the repetition of a benchmark (its package, full name and the configuration lines in force) in file order (-count); GOMAXPROCS is in dimensions.gomaxprocs, every configuration key (goos, goarch, pkg, cpu and any user key) in dimensions",
	}
	add := func(n int, format string) {
		if n > 0 {
			lim = append(lim, fmt.Sprintf(format, n))
		}
	}
	if t.syntax > 0 {
		lim = append(lim, fmt.Sprintf("%d benchmark lines could not be parsed and were skipped (first: %s)", t.syntax, t.firstErr))
	}
	add(t.badIters, "%d benchmark results with an iteration count below 1 were skipped")
	add(t.nonFinite, "%d non-finite (NaN or infinite) benchmark values were skipped")
	add(t.dupUnits, "%d values repeating a unit already reported on the same line were skipped")
	add(t.longLines, "%d lines longer than 60 KiB were skipped")
	add(t.notEvents, "%d lines of the test2json stream were not test events and were skipped")
	for _, s := range t.suites {
		if s.outcome == "failed" {
			lim = append(lim, "package "+clean(s.pkg)+" failed: its benchmark results may be incomplete")
		}
	}
	if len(t.suites) > 0 {
		lim = append(lim, "test counts include subtests; benchmarks report no pass events and are not counted as tests")
	}
	if t.runTimes > 0 {
		lim = append(lim, "gotest.run_time is each package's test binary run (from go test's start event to the package's pass or fail); process.wall_time is the whole go test command, compilation included")
	}
	if t.buildTimes > 0 {
		lim = append(lim, "gotest.build_time runs from the command's start to the package's start event: building, vetting and linking the test binary (or finding it in go's build cache) and, with several packages, waiting for others")
	} else if t.runTimes > 0 {
		lim = append(lim, "the command's start is unknown (an imported stream), so no gotest.build_time was recorded")
	}
	return lim
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

var _ adapter.Extractor = (*BenchExtractor)(nil)
