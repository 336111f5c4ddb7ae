package profile

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestDetectFixtures(t *testing.T) {
	for file, want := range map[string]Format{
		"testdata/google-pprof__large.cpu.pb.gz":                      FormatPprof,
		"testdata/google-pprof__sample.cpu.pb.gz":                     FormatPprof,
		"testdata/parca__profile-with-labels.pb.gz":                   FormatPprof,
		"testdata/speedscope__rust-mangled.linux-perf.txt":            FormatPerfScript,
		"testdata/cs336-basics__py-spy-0.4.2.speedscope.json":         FormatSpeedscope,
		"testdata/hta__cpu_only_rank-34.pt.trace.json.gz":             FormatUnknown,
		"testdata/pyperf__track_memory.json":                          FormatUnknown,
		"perf-script/flamegraph__example-perf-stacks.txt.gz":          FormatPerfScript,
		"perf-script/flamegraph__perf-js-stacks-01.txt":               FormatPerfScript,
		"collapsed/flamegraph__perf-numa-stacks-01-collapsed-pid.txt": FormatCollapsed,
		"speedscope/calmcode__pyinstrument.speedscope.json":           FormatSpeedscope,
		"gobench/golang-perf__crc-old.txt":                            FormatUnknown,
		"massif/massif-visualizer__massif.out.stack":                  FormatUnknown,
		"memray/pathology-multitask__memray.bin":                      FormatUnknown,
	} {
		t.Run(file, func(t *testing.T) {
			path := file
			if !strings.HasPrefix(file, "testdata/") {
				path = shared(t, file)
			}
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if got := Detect(b[:min(len(b), 64<<10)]); got != want {
				t.Errorf("Detect = %s, want %s", got, want)
			}
		})
	}
}

// mustFail parses input and requires a *ParseError of the given format.
func mustFail(t *testing.T, input []byte, format Format, reason string) *ParseError {
	t.Helper()
	p, err := Parse(bytes.NewReader(input), Options{})
	var pe *ParseError
	if !errors.As(err, &pe) {
		t.Fatalf("want *ParseError, got profile=%v err=%v", p != nil, err)
	}
	if pe.Format != format || !strings.Contains(pe.Error(), reason) {
		t.Fatalf("got %q (format %s), want format %s and reason containing %q", pe.Error(), pe.Format, format, reason)
	}
	return pe
}

func TestParseErrors(t *testing.T) {
	read := func(p string) []byte {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	gz := func(b []byte) []byte {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		zw.Write(b)
		zw.Close()
		return buf.Bytes()
	}
	pprofGz := read("testdata/google-pprof__sample.cpu.pb.gz")
	ss := read("testdata/self-driving-sim__py-spy-0.4.1.speedscope.json")
	perf := read("testdata/speedscope__rust-mangled.linux-perf.txt")
	cutHeader := bytes.Index(perf[1000:], []byte("\ntrace ")) + 1000 + 12 // inside a sample header

	mustFail(t, nil, FormatUnknown, "empty input")
	mustFail(t, []byte("   \n\n"), FormatUnknown, "not pprof")
	mustFail(t, gz(nil), FormatUnknown, "empty input inside gzip")
	mustFail(t, pprofGz[:len(pprofGz)/2], FormatPprof, "truncated")
	mustFail(t, ss[:len(ss)/2], FormatSpeedscope, "invalid JSON")
	mustFail(t, gz(ss)[:len(ss)/40], FormatSpeedscope, "truncated")
	mustFail(t, perf[:cutHeader], FormatPerfScript, "not a perf script sample header")
	mustFail(t, read("testdata/hta__cpu_only_rank-34.pt.trace.json.gz"), FormatUnknown, "not pprof")
	pe := mustFail(t, read("testdata/pyperf__track_memory.json"), FormatUnknown, "not pprof")
	if !errors.Is(pe, ErrUnknownFormat) {
		t.Error("unknown format does not wrap ErrUnknownFormat")
	}
	mustFail(t, []byte(`{"profiles": [], "shared": {"x": 1}, "frames": 2}`), FormatUnknown, "not speedscope")
	mustFail(t, []byte(`{"traceEvents": [{"ph": "X"}]}`), FormatUnknown, "not pprof")
	mustFail(t, []byte("int x = 5;\nreturn x;\n"), FormatUnknown, "not pprof")
	mustFail(t, []byte("a;b 3\nplain text line\n"), FormatUnknown, "not pprof")
	mustFail(t, []byte("version 2\n"), FormatUnknown, "not pprof")
	mustFail(t, []byte{0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x01}, FormatPprof, "not a valid pprof")
	mustFail(t, []byte{0x00, 0x01, 0x02}, FormatUnknown, "not pprof")

	// Malformed content of a recognised format.
	mustFail(t, []byte("foo 12 cycles:\n\t 4a1234 main (/bin/x)\nnot a header at all\n"), FormatPerfScript, "line 3")
	mustFail(t, []byte("foo 12 cycles:\n\t zzzz main (/bin/x)\n"), FormatPerfScript, "bad frame address")
	mustFail(t, []byte("# only comments\n# ========\nfoo 1 cycles:\n"[:30]), FormatUnknown, "not pprof")
	bad := func(profile string) []byte {
		return []byte(`{"$schema":"` + speedscopeSchema + `","shared":{"frames":[{"name":"a"}]},"profiles":[` + profile + `]}`)
	}
	mustFail(t, bad(`{"type":"sampled","name":"t","unit":"seconds","samples":[[0,1]],"weights":[1]}`), FormatSpeedscope, "out of range")
	mustFail(t, bad(`{"type":"sampled","name":"t","unit":"seconds","samples":[[0]],"weights":[]}`), FormatSpeedscope, "1 samples but 0 weights")
	mustFail(t, bad(`{"type":"sampled","name":"t","unit":"parsecs","samples":[],"weights":[]}`), FormatSpeedscope, "unknown unit")
	mustFail(t, bad(`{"type":"evented","name":"t","unit":"seconds","events":[{"type":"C","at":0,"frame":0}]}`), FormatSpeedscope, "not the innermost open frame")
	mustFail(t, bad(`{"type":"evented","name":"t","unit":"seconds","events":[{"type":"O","at":2,"frame":0},{"type":"C","at":1,"frame":0}]}`), FormatSpeedscope, "back in time")

	big, err := Parse(bytes.NewReader(perf), Options{MaxBytes: 100})
	if !errors.Is(err, ErrTooLarge) || big != nil {
		t.Errorf("MaxBytes: got %v", err)
	}
	// perf script streams: the cap holds after decompression, deep in the
	// text, and a truncated gzip still names the format it was reading.
	big, err = Parse(bytes.NewReader(gz(perf)), Options{MaxBytes: int64(len(perf)) - 10})
	if !errors.Is(err, ErrTooLarge) || big != nil {
		t.Errorf("MaxBytes inside gzip: got %v", err)
	}
	long := bytes.Repeat(perf, 1+(3*detectPrefix)/len(perf))
	zl := gz(long)
	mustFail(t, zl[:len(zl)*3/4], FormatPerfScript, "gzip stream is truncated")
	if _, err := Parse(bytes.NewReader(long), Options{MaxBytes: int64(len(long))}); err != nil {
		t.Errorf("input of exactly MaxBytes: %v", err)
	}
}

// Samples that share event, thread and callchain merge into one record
// whose count is kept; CRLF line ends and lines longer than the read
// buffer parse.
func TestPerfMergesEqualSamples(t *testing.T) {
	sym := strings.Repeat("x", 300<<10)
	in := "comm 1/2 [000] 1.5: 100 cycles:\r\n\t1 f+0x1 (/x)\r\n\t2 main (/x)\r\n\r\n" +
		"comm 1/2 [000] 1.6: 50 cycles:\n\t1 f+0x1 (/x)\n\t2 main (/x)\n\n" +
		"comm 1/3 [000] 1.7: 7 cycles:\n\t1 f+0x1 (/x)\n\t2 main (/x)\n\n" +
		"comm 1/2 [000] 1.8: 1 cycles:\n\t3 " + sym + " (/x)\n\n"
	p, err := Parse(strings.NewReader(in), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.P.Sample) != 3 || !reflect.DeepEqual(p.Counts, []int64{2, 1, 1}) {
		t.Fatalf("records %d, counts %v", len(p.P.Sample), p.Counts)
	}
	if v := p.P.Sample[0].Value[0]; v != 150 {
		t.Errorf("merged value %d", v)
	}
	if tot, n := p.Totals(0); tot != 158 || n != 4 {
		t.Errorf("totals %d over %d samples", tot, n)
	}
	for i, want := range []string{"f;main", "f;main", sym} {
		var got []string
		for _, l := range p.P.Sample[i].Location {
			got = append(got, l.Line[0].Function.Name)
		}
		if strings.Join(got, ";") != want && i < 2 {
			t.Errorf("record %d: frames %v, want %s", i, got, want)
		}
	}
	if name := p.P.Sample[2].Location[0].Line[0].Function.Name; name != sym {
		t.Errorf("long symbol cut to %d bytes", len(name))
	}
}

// FuzzParse: any bytes either fail with a *ParseError or give a profile that
// pprof's own CheckValid accepts and that Top and Totals can walk. Seeds are
// every fixture (testdata and, when present, the shared folder), whole when
// at most 64 KB (plus the decompressed content of small gzip files), else
// their first 16 KB, which also seeds truncation. Small seeds keep the
// fuzzer's minimisation fast.
func FuzzParse(f *testing.F) {
	var files []string
	for _, pattern := range []string{
		"testdata/*",
		filepath.Join(sharedFixtures, "perf-script", "*"),
		filepath.Join(sharedFixtures, "collapsed", "*"),
		filepath.Join(sharedFixtures, "speedscope", "*"),
		filepath.Join(sharedFixtures, "chrome-trace", "hta__cpu_only*"),
	} {
		m, _ := filepath.Glob(pattern)
		files = append(files, m...)
	}
	for _, file := range files {
		if st, err := os.Stat(file); filepath.Ext(file) == ".md" || err == nil && st.IsDir() {
			continue // README and the fuzz corpus folder
		}
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		if len(b) > 64<<10 {
			b = b[:16<<10]
		} else if isGzip(b) { // also seed the raw content, friendlier to mutate
			if raw, err := io.ReadAll(io.LimitReader(gzipReader(b), 64<<10)); err == nil {
				f.Add(raw)
			}
		}
		f.Add(b)
	}
	f.Add([]byte("a;b;c 1\na;b 2\n"))
	f.Add([]byte("comm 1/2 [000] 1.5: 100 cycles:\n\t1 f+0x1 (/x)\n\t2 [unknown] ([unknown])\n\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		_ = Detect(data)
		p, err := Parse(bytes.NewReader(data), Options{MaxBytes: 8 << 20})
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error is not a *ParseError: %T %v", err, err)
			}
			if pe.Reason == "" {
				t.Fatal("ParseError without a reason")
			}
			return
		}
		if err := p.P.CheckValid(); err != nil {
			t.Fatalf("%s profile fails CheckValid: %v", p.Format, err)
		}
		if p.Format == FormatUnknown || len(p.P.SampleType) == 0 {
			t.Fatalf("profile with format %s and %d sample types", p.Format, len(p.P.SampleType))
		}
		if p.Counts != nil && len(p.Counts) != len(p.P.Sample) {
			t.Fatalf("%d counts for %d records", len(p.Counts), len(p.P.Sample))
		}
		for i := range p.P.SampleType {
			_ = Top(p.P, i, nil)
			_, recs := Totals(p.P, i)
			if _, n := p.Totals(i); n < recs {
				t.Fatalf("%d samples but %d records", n, recs)
			}
		}
	})
}
