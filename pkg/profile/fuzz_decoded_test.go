package profile

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// The Fuzz*Decoded targets feed each parser the decompressed form
// directly, past gzip and format detection, so that mutations reach the
// decoders' allocation paths instead of dying on a gzip checksum or on
// Detect. Each runs under small limits and checks that every input fails
// with a *ParseError or gives a valid profile whose counts are within the
// limits: the bound holds for what was built, not only for what was read.

// fuzzLimits are small, so that each input is fast and the limits are
// reached often.
var fuzzLimits = Limits{MaxDecompressedBytes: 1 << 20, MaxStrings: 64, MaxStringBytes: 4 << 10,
	MaxLocations: 64, MaxFunctions: 32, MaxMappings: 8, MaxSamples: 64, MaxSampleTypes: 4, MaxLabels: 32,
	MaxStackDepth: 16, MaxStackFrames: 256, MaxEvents: 128, MaxJSONDepth: 8}

// seedDecoded adds the files matching pattern, gunzipped, first 16 KB.
func seedDecoded(f *testing.F, patterns ...string) {
	for _, pattern := range patterns {
		m, _ := filepath.Glob(pattern)
		for _, file := range m {
			b, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			if isGzip(b) {
				if b, err = io.ReadAll(io.LimitReader(gzipReader(b), 16<<10)); err != nil {
					continue
				}
			}
			f.Add(b[:min(len(b), 16<<10)])
		}
	}
}

// checkDecoded is the invariant of every Fuzz*Decoded target.
func checkDecoded(t *testing.T, p *Profile, err error) {
	t.Helper()
	if err != nil {
		var pe *ParseError
		if !errors.As(err, &pe) || pe.Reason == "" {
			t.Fatalf("not a *ParseError with a reason: %T %v", err, err)
		}
		return
	}
	if err := p.P.CheckValid(); err != nil {
		t.Fatalf("%s profile fails CheckValid: %v", p.Format, err)
	}
	l := fuzzLimits
	if int64(len(p.P.Location)) > l.MaxLocations || int64(len(p.P.Function)) > l.MaxFunctions ||
		int64(len(p.P.Mapping)) > l.MaxMappings || int64(len(p.P.Sample)) > l.MaxSamples {
		t.Fatalf("%s profile over the limits: %d locations, %d functions, %d mappings, %d samples",
			p.Format, len(p.P.Location), len(p.P.Function), len(p.P.Mapping), len(p.P.Sample))
	}
	frames := 0
	for _, s := range p.P.Sample {
		if int64(len(s.Location)) > l.MaxStackDepth {
			t.Fatalf("%s sample %d frames deep", p.Format, len(s.Location))
		}
		frames += len(s.Location)
	}
	if int64(frames) > l.MaxStackFrames {
		t.Fatalf("%s profile holds %d frames", p.Format, frames)
	}
}

func FuzzPprofDecoded(f *testing.F) {
	seedDecoded(f, "testdata/*.pb.gz")
	f.Add([]byte("\x32\x00\x32\x00\x22\x00\x12\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := readPprof(bytes.NewReader(data), fuzzLimits, 0)
		checkDecoded(t, p, err)
	})
}

func FuzzSpeedscopeDecoded(f *testing.F) {
	seedDecoded(f, "testdata/*.speedscope.json", filepath.Join(sharedFixtures, "speedscope", "*"))
	f.Add([]byte(`{"$schema":"https://www.speedscope.app/file-format-schema.json","shared":{"frames":[{"name":"a"}]},"profiles":[{"type":"evented","name":"t","unit":"none","endValue":2,"events":[{"type":"O","frame":0,"at":0},{"type":"C","frame":0,"at":1}]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := parseSpeedscope(data, fuzzLimits)
		checkDecoded(t, p, err)
	})
}

func FuzzCollapsedDecoded(f *testing.F) {
	seedDecoded(f, filepath.Join(sharedFixtures, "collapsed", "*"))
	f.Add([]byte("a;b;c 1\na;b 2\n 3\na;;b 1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := parseCollapsedReader(bufio.NewReaderSize(bytes.NewReader(data), 16), fuzzLimits)
		checkDecoded(t, p, err)
	})
}

func FuzzPerfDecoded(f *testing.F) {
	seedDecoded(f, "testdata/*.linux-perf.txt", filepath.Join(sharedFixtures, "perf-script", "*"))
	f.Add([]byte("comm 1/2 [000] 1.5: 100 cycles:\n\t1 f+0x1 (/x)\n\t2 [unknown] ([unknown])\n\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := parsePerf(bufio.NewReaderSize(bytes.NewReader(data), 16), Options{Limits: fuzzLimits})
		checkDecoded(t, p, err)
	})
}
