package profile

import (
	"bufio"
	"bytes"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// perfChunkCases are inputs whose chunk boundaries are worth crossing:
// comments inside a sample, a callchain longer than a chunk, frames on the
// header line, version comments before and after the first sample, no
// blank line at the end, CRLF, and failures past the first chunk.
var perfChunkCases = map[string]string{
	"comment in a sample": "# perf version : 6.1\nx 1/1 1.0: 5 c:\n\t1 f (m)\n# note\n\t2 g (m)\n\nx 1/1 2.0: 5 c:\n\t1 f (m)\n\t2 g (m)\n\n" +
		strings.Repeat("y 2/3 3.0: 7 c:\n\t3 h (n)\n\t2 g (m)\n\n", 40),
	"deep":          "z 9 c:\n" + strings.Repeat("\t1 f (m)\n\t2 g (m)\n", 200) + "\n" + strings.Repeat("z 9 c:\n\t1 f (m)\n\n", 30),
	"header frames": strings.Repeat("x 1 [001] 1.5: 10 cpu-clock: \t ffff f+0x1 (/m)\n\tfffe g (/m)\n\n", 50),
	"versions":      "# perf version : 1\n\n# perf version : 2\n" + strings.Repeat("a 1 e:\n\t1 f (m)\n\n# perf version : 3\n", 30),
	"unterminated":  strings.Repeat("a 1/2 e:\n\t1 f (m)\n\t2 g (m)\n\n", 30) + "a 1/2 e:\n\t1 f (m)",
	"crlf":          strings.Repeat("a 1/2 e:\r\n\t1 f (m)\r\n\r\n", 40),
	"two events":    strings.Repeat("a 1/2 1.0: 3 e:\n\t1 f (m)\n\nb 3/4 2.0: 4 d:\n\t5 _ZN3foo3barEv (m)\n\n", 30),
	"period later":  strings.Repeat("a 1/2 1.0: 3 e:\n\t1 f (m)\n\n", 30) + strings.Repeat("a 1/2 1.0: e:\n\t1 f (m)\n\n", 30),
	"bad frame":     strings.Repeat("a 1/2 e:\n\t1 f (m)\n\n", 30) + "a 1/2 e:\n\tzz f (m)\n\n" + strings.Repeat("a 1/2 e:\n\t1 f (m)\n\n", 30),
	"orphan frame":  strings.Repeat("a 1/2 e:\n\t1 f (m)\n\n", 30) + "\n\t1 f (m)\n" + strings.Repeat("a 1/2 e:\n\t1 f (m)\n\n", 30),
	"no pid":        strings.Repeat("a 1 e:\n\n", 20) + strings.Repeat("b 2/3 e:\n\t[unknown] ([unknown])\n\n", 20),
}

// checkChunked parses data both ways and fails t unless they agree: the
// same profile, or the same failure (a limit failure may differ in which
// limit and where, but both must fail).
func checkChunked(t *testing.T, data []byte, opts Options, workers, chunk int) {
	t.Helper()
	want, werr := parsePerfStream(bufio.NewReaderSize(bytes.NewReader(data), 64<<10), opts)
	got, gerr := parsePerfChunked(bytes.NewReader(data), opts, workers, chunk)
	if errors.Is(werr, ErrTooLarge) || errors.Is(gerr, ErrTooLarge) {
		if werr == nil || gerr == nil {
			t.Fatalf("workers %d chunk %d: stream error %v, chunked error %v", workers, chunk, werr, gerr)
		}
		return
	}
	if (werr == nil) != (gerr == nil) || werr != nil && werr.Error() != gerr.Error() {
		t.Fatalf("workers %d chunk %d: stream error %v, chunked error %v", workers, chunk, werr, gerr)
	}
	if werr == nil && !reflect.DeepEqual(want, got) {
		t.Fatalf("workers %d chunk %d: chunked parse differs:\nstream  %v %v %q\n%v\nchunked %v %v %q\n%v", workers, chunk,
			want.Events, want.Counts, want.Limitations, want.P, got.Events, got.Counts, got.Limitations, got.P)
	}
}

func TestPerfChunkedMatchesStream(t *testing.T) {
	inputs := map[string][]byte{}
	for name, s := range perfChunkCases {
		inputs[name] = []byte(s)
	}
	files, _ := filepath.Glob(filepath.Join(sharedFixtures, "perf-script", "*"))
	local, _ := filepath.Glob("testdata/*.linux-perf.txt")
	for _, f := range append(files, local...) {
		inputs[filepath.Base(f)] = readPlain(t, f)
	}
	if len(files) == 0 {
		t.Fatalf("no perf script fixtures under %s", sharedFixtures)
	}
	for name, data := range inputs {
		t.Run(name, func(t *testing.T) {
			for _, workers := range []int{1, 2, 3} {
				for _, chunk := range []int{16, 100, 1000, 64 << 10, perfChunkBytes} {
					if len(data)/chunk > 20000 {
						continue // a large fixture in tiny chunks: slow, and no more boundaries than 1000 bytes cross
					}
					checkChunked(t, data, Options{}, workers, chunk)
				}
			}
		})
	}
}

// A large recording takes the chunked path through Parse itself.
func TestPerfChunkedThroughParse(t *testing.T) {
	data := readPlain(t, shared(t, "perf-script/flamegraph__example-perf-stacks.txt.gz"))
	for len(data) < 3*perfChunkBytes {
		data = append(data, data...)
	}
	want, err := parsePerfStream(bufio.NewReader(bytes.NewReader(data)), Options{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := Parse(bytes.NewReader(data), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(want, got) {
		t.Fatalf("Parse of %d bytes differs from the stream parse", len(data))
	}
}

func TestPerfChunkedLimits(t *testing.T) {
	data := []byte(strings.Repeat("a 1/2 e:\n\t1 f (m)\n\n", 40) + strings.Repeat("a 1/2 e:\n\t2 g (m)\n\n", 40))
	// Each worker sees one or two distinct lines; only the merge sees three.
	_, err := parsePerfChunked(bytes.NewReader(data), Options{Limits: Limits{MaxLocations: 1}}, 2, 64)
	var le *LimitError
	if !errors.Is(err, ErrTooLarge) || !errors.As(err, &le) || le.Limit != LimitLocations {
		t.Fatalf("two distinct lines under max_locations = 1: %v", err)
	}
	long := []byte("a 1/2 e:\n\t1 " + strings.Repeat("f", perfLineBuffer+10) + " (m)\n\n")
	_, err = parsePerfChunked(bytes.NewReader(long), Options{Limits: Limits{MaxStringBytes: perfLineBuffer}}, 2, 64)
	if !errors.As(err, &le) || le.Limit != LimitStringBytes {
		t.Fatalf("a line over max_string_bytes: %v", err)
	}
}

func FuzzPerfChunked(f *testing.F) {
	seedDecoded(f, "testdata/*.linux-perf.txt", filepath.Join(sharedFixtures, "perf-script", "*"))
	for _, s := range perfChunkCases {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		chunk := max(8+len(data)%61, len(data)/100) // at most ~100 chunks
		checkChunked(t, data, Options{Limits: fuzzLimits}, 2+len(data)%2, chunk)
	})
}
