package profile

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// googlePprofFiles are the profile inputs of google/pprof's
// profile/testdata and internal/driver/testdata (testdata/google-pprof,
// see its README): every one that `go tool pprof -top` reads.
func googlePprofFiles(t *testing.T) []string {
	files, _ := filepath.Glob("testdata/google-pprof/*__*")
	if len(files) != 18 {
		t.Fatalf("want the 18 google/pprof testdata profiles, found %d", len(files))
	}
	return files
}

// TestEveryPprofFileMatchesGoToolPprof is the rule for files pprof reads:
// each one either imports with pprof's flat and cum on every row of every
// sample type, or is refused with a reason; it is never taken for another
// format, and never unknown. No file of google/pprof's testdata is
// refused today (refused lists the expected exceptions, with their
// reason).
func TestEveryPprofFileMatchesGoToolPprof(t *testing.T) {
	files := googlePprofFiles(t)
	if m, _ := filepath.Glob(filepath.Join(sharedFixtures, "pprof", "*")); len(m) > 0 {
		files = append(files, m...)
	}
	refused := map[string]string{} // file base name -> reason substring
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			t.Parallel()
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			p, err := Parse(bytes.NewReader(b), Options{})
			if want, ok := refused[filepath.Base(file)]; ok {
				var pe *ParseError
				if !errors.As(err, &pe) || pe.Format == FormatUnknown || !strings.Contains(pe.Reason, want) {
					t.Fatalf("want a refusal naming its format and %q, got %v", want, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("go tool pprof reads this file; flameox refused it: %v", err)
			}
			if p.Format != FormatPprof && p.Format != FormatPprofLegacy {
				t.Fatalf("read as %s, want pprof or pprof-legacy", p.Format)
			}
			if d := Detect(b); d != p.Format {
				t.Fatalf("Detect says %s, Parse read %s", d, p.Format)
			}
			compareWithPprof(t, file, p)
		})
	}
}

// TestDetectLegacy: each legacy variant is recognised by its header and
// nothing else, and the text shapes of legacy profiles are not perf
// script even when their header is missing.
func TestDetectLegacy(t *testing.T) {
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join("testdata/google-pprof", name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	heap := read("profile__gobench.heap")
	_, headless := firstLine(heap)
	tests := []struct {
		name    string
		in      []byte
		want    Format
		variant string
	}{
		{"go heap", heap, FormatPprofLegacy, "heap profile"},
		{"cpp heap", read("profile__cppbench.heap"), FormatPprofLegacy, "heap profile"},
		{"growth", read("profile__cppbench.growth"), FormatPprofLegacy, "growth profile"},
		{"cpp contention", read("profile__cppbench.contention"), FormatPprofLegacy, "contention profile"},
		{"java contention", read("profile__java.contention"), FormatPprofLegacy, "Java contention profile"},
		{"java heap", read("profile__java.heap"), FormatPprofLegacy, "Java heap profile"},
		{"java cpu", read("profile__java.cpu"), FormatPprofLegacy, "Java CPU profile"},
		{"gperftools cpu", read("profile__cppbench.cpu"), FormatPprofLegacy, "gperftools CPU profile"},
		{"go cpu", read("profile__gobench.cpu"), FormatPprofLegacy, "gperftools CPU profile"},
		{"threadz", read("profile__cppbench.thread"), FormatPprofLegacy, "thread profile"},
		{"threadcreate", read("profile__go.godoc.thread"), FormatPprofLegacy, "threadcreate profile"},
		{"goroutine after comments", []byte("# c\n\ngoroutine profile: total 1\n1 @ 0x1 0x2\n"), FormatPprofLegacy, "goroutine profile"},
		{"mutex", []byte("--- mutex:\ncycles/second=1\nsampling period=1\n1 2 @ 0x1\n"), FormatPprofLegacy, "contention profile"},
		{"protobuf stays protobuf", read("driver__go.nomappings.crash"), FormatPprof, ""},
		// Without its header, a heap profile is no format at all: not
		// perf script (its lines would read as headers of event "[3"),
		// not collapsed stacks.
		{"heap without header", headless, FormatUnknown, ""},
		{"a legacy line in perf-like text", []byte("x 1 c:\n\t1 f (m)\n\n1: 2 [3: 4] @ 0x1 0x2\n"), FormatUnknown, ""},
		{"perf report rows", []byte("x 1 c:\n\t1 f (m)\n  45.00%  x  libc.so  [.] memcpy\n"), FormatUnknown, ""},
		{"section header in perf-like text", []byte("x 1 c:\n\t1 f (m)\n--- contention:\n"), FormatUnknown, ""},
		{"header words in a collapsed stack", []byte("heap;profile 1\n"), FormatCollapsed, ""},
		{"binary header too short", []byte{0, 0, 0, 0, 3, 0, 0, 0}, FormatUnknown, ""},
		{"binary header with period 0", words32(0, 3, 0, 0, 0), FormatUnknown, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Detect(tt.in); got != tt.want {
				t.Errorf("Detect = %s, want %s", got, tt.want)
			}
			if got := legacyVariant(tt.in); got != tt.variant {
				t.Errorf("variant %q, want %q", got, tt.variant)
			}
		})
	}
}

// TestLegacyGzipped: a gzipped legacy profile is detected and read through
// the gzip, as pprof reads it.
func TestLegacyGzipped(t *testing.T) {
	raw, err := os.ReadFile("testdata/google-pprof/profile__cppbench.heap")
	if err != nil {
		t.Fatal(err)
	}
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write(raw)
	zw.Close()
	if f := Detect(z.Bytes()); f != FormatPprofLegacy {
		t.Fatalf("Detect = %s", f)
	}
	p, err := Parse(bytes.NewReader(z.Bytes()), Options{})
	if err != nil || p.Format != FormatPprofLegacy || len(p.P.Sample) == 0 {
		t.Fatalf("Parse: %v", err)
	}
}

// TestLegacyHeapValues pins a few numbers of gobench.heap that were wrong
// before (sample types "[1", "[2" and no rows, as perf script).
func TestLegacyHeapValues(t *testing.T) {
	p := parseFile(t, "testdata/google-pprof/profile__gobench.heap")
	var types []string
	for _, st := range p.P.SampleType {
		types = append(types, st.Type+"/"+st.Unit)
	}
	if got := strings.Join(types, ","); got != "alloc_objects/count,alloc_space/bytes,inuse_objects/count,inuse_space/bytes" {
		t.Fatalf("sample types %s", got)
	}
	if len(p.P.Sample) == 0 || len(Top(p.P, mustIndex(t, p, "inuse_space"), nil)) == 0 {
		t.Fatal("no samples or no rows")
	}
	if !strings.Contains(strings.Join(p.Limitations, "\n"), "Legacy pprof format (heap profile)") {
		t.Errorf("limitations %v do not name the legacy format", p.Limitations)
	}
}

// TestLegacyRefusals: a file that starts like a legacy profile but does
// not parse fails with pprof's reason, under the legacy format's name.
func TestLegacyRefusals(t *testing.T) {
	for name, in := range map[string]string{
		"bad heap sample":    "heap profile: 1: 1 [1: 1] @ heap_v2/1\nnot a sample\n",
		"unknown heap kind":  "heap profile: 1: 1 [1: 1] @ heap_v9/1\n",
		"contention garbage": "--- contentionz 1 ---\nformat = cobol\n",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Parse(strings.NewReader(in), Options{})
			var pe *ParseError
			if !errors.As(err, &pe) || pe.Format != FormatPprofLegacy || !strings.Contains(pe.Reason, "not a valid legacy pprof profile") {
				t.Fatalf("want a pprof-legacy refusal, got %v", err)
			}
		})
	}
}

// TestLegacyLimits: the legacy pre-pass stops at the first count over a
// limit, naming it, before profile.Parse allocates, and passes the same
// input when the limit is raised.
func TestLegacyLimits(t *testing.T) {
	const heap = "heap profile: 3: 3 [3: 3] @ heap_v2/1\n"
	cpu := func(records ...[]uint64) []byte {
		w := []uint64{0, 3, 0, 10000, 0}
		for _, r := range records {
			w = append(w, r...)
		}
		return words64(append(w, 0, 1, 0)...)
	}
	tests := []struct {
		name  string
		input []byte
		lim   Limits
		limit string
	}{
		{"text samples", []byte(heap + "1: 1 [1: 1] @ 0x1\n1: 1 [1: 1] @ 0x2\n1: 1 [1: 1] @\n"), Limits{MaxSamples: 2}, LimitSamples},
		{"text depth", []byte(heap + "1: 1 [1: 1] @ 0x1 0x2 0x3\n"), Limits{MaxStackDepth: 2}, LimitStackDepth},
		{"text frames", []byte(heap + "1: 1 [1: 1] @ 0x1 0x2\n1: 1 [1: 1] @ 0x1 0x2\n"), Limits{MaxStackFrames: 3}, LimitStackFrames},
		{"text locations", []byte(heap + "1: 1 [1: 1] @ 0x1 0x2 0x3\n"), Limits{MaxLocations: 2}, LimitLocations},
		{"text mappings", []byte(heap + "1: 1 [1: 1] @ 0x1\nMAPPED_LIBRARIES:\n0-1000 r-xp 0 00:00 0 /a\n1000-2000 r-xp 0 00:00 0 /b\n"), Limits{MaxMappings: 1}, LimitMappings},
		{"thread depth", []byte("--- threadz 1 ---\n\n--- Thread 1 (name: m/1) stack: ---\n  PC: 0x1: f\n  0x2: g\n  0x3: h\n--- Memory map: ---\n"), Limits{MaxStackDepth: 2}, LimitStackDepth},
		{"java functions", []byte("--- heapz 1 ---\nformat = java\nresolution = bytes\n 1 1 @ 0x1 0x2\n\n 0x1 a.b (A.java:1)\n 0x2 a.c (A.java:2)\n"), Limits{MaxFunctions: 1}, LimitFunctions},
		{"binary samples", cpu([]uint64{1, 1, 0x10}, []uint64{1, 1, 0x20}), Limits{MaxSamples: 1}, LimitSamples},
		{"binary depth", cpu([]uint64{1, 3, 0x10, 0x20, 0x30}), Limits{MaxStackDepth: 2}, LimitStackDepth},
		{"binary locations", cpu([]uint64{1, 2, 0x10, 0x20}, []uint64{1, 1, 0x30}), Limits{MaxLocations: 2}, LimitLocations},
		{"binary mappings", append(cpu([]uint64{1, 1, 0x10}), "0-1000 r-xp 0 00:00 0 /a\n1000-2000 r-xp 0 00:00 0 /b\n"...), Limits{MaxMappings: 1}, LimitMappings},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if f := Detect(tt.input); f != FormatPprofLegacy {
				t.Fatalf("detected as %s", f)
			}
			_, err := Parse(bytes.NewReader(tt.input), Options{Limits: tt.lim})
			le, ok := AsLimit(err)
			if !ok || le.Limit != tt.limit || le.Observed <= le.Max {
				t.Fatalf("want limit %s, got %v (%+v)", tt.limit, err, le)
			}
			if _, err := Parse(bytes.NewReader(tt.input), Options{Limits: raise(tt.lim, le.Observed)}); err != nil {
				t.Fatalf("limit %s raised: %v", tt.limit, err)
			}
		})
	}
}

// TestLegacyQuadraticBounds: the two steps of profile.Parse whose time
// grows faster than the input (every address matched against every
// mapping; a replacer rebuilt at each name=value line of the memory map)
// are refused by the pre-pass, naming max_mappings, before Parse runs.
func TestLegacyQuadraticBounds(t *testing.T) {
	var addrs, maps, attrs strings.Builder
	addrs.WriteString("heap profile: 1: 1 [1: 1] @ heap_v2/1\n")
	for line := 0; line < 2; line++ {
		addrs.WriteString("1: 1 [1: 1] @")
		for i := 0; i < 1<<14; i++ {
			fmt.Fprintf(&addrs, " 0x%x", line<<14|i)
		}
		addrs.WriteString("\n")
	}
	maps.WriteString("MAPPED_LIBRARIES:\n")
	attrs.WriteString("MAPPED_LIBRARIES:\n")
	for i := 0; i < 1<<15; i++ {
		fmt.Fprintf(&maps, "%x-%x /m\n", i+1<<20, i+1<<20+1)
		if i <= legacyMaxMapAttrs {
			fmt.Fprintf(&attrs, "a%d=b\n", i)
		}
	}
	for name, in := range map[string]string{
		"addresses x mappings": addrs.String() + maps.String(),
		"map attributes":       "heap profile: 1: 1 [1: 1] @ heap_v2/1\n1: 1 [1: 1] @ 0x1\n" + attrs.String(),
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Parse(strings.NewReader(in), Options{})
			if le, ok := AsLimit(err); !ok || le.Limit != LimitMappings || le.Observed <= le.Max {
				t.Fatalf("want a max_mappings refusal, got %v", err)
			}
		})
	}
}

func words32(w ...uint32) []byte {
	b := make([]byte, 4*len(w))
	for i, v := range w {
		binary.LittleEndian.PutUint32(b[4*i:], v)
	}
	return b
}

func words64(w ...uint64) []byte {
	b := make([]byte, 8*len(w))
	for i, v := range w {
		binary.LittleEndian.PutUint64(b[8*i:], v)
	}
	return b
}

// FuzzLegacyDecoded feeds the legacy pre-pass and parser any bytes under
// small limits: each input fails with a *ParseError or gives a valid
// profile within the limits.
func FuzzLegacyDecoded(f *testing.F) {
	seedDecoded(f, "testdata/google-pprof/*")
	f.Add([]byte("heap profile: 1: 1 [1: 1] @ heap_v2/1\n1: 1 [1: 1] @ 0x1 0x2\n"))
	f.Add(words64(0, 3, 0, 10000, 0, 1, 2, 0x10, 0x20, 0, 1, 0))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		p, err := parseLegacy(data, fuzzLimits.withDefaults())
		checkDecoded(t, p, err)
	})
}

// FuzzDetect: Detect never panics, and whatever it names, Parse either
// reads as that format or refuses with a *ParseError (it never reads a
// different format than the one detected).
func FuzzDetect(f *testing.F) {
	seedDecoded(f, "testdata/google-pprof/*", "testdata/*.pb.gz", "testdata/*.txt", "testdata/*.json")
	f.Add([]byte("x 1 c:\n\t1 f (m)\n\n"))
	f.Add([]byte("a;b 1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		d := Detect(data)
		p, err := Parse(bytes.NewReader(data), Options{Limits: fuzzLimits})
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) || pe.Reason == "" {
				t.Fatalf("not a *ParseError with a reason: %T %v", err, err)
			}
			return
		}
		if p.Format != d {
			t.Fatalf("Detect says %s, Parse read %s", d, p.Format)
		}
	})
}
