package massif

import (
	"bytes"
	"compress/bzip2"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/flameox/flameox/pkg/adapter"
	"github.com/flameox/flameox/pkg/adapter/adaptertest"
	"github.com/flameox/flameox/pkg/config"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/internal/testenv"
)

func fixtures(t testing.TB) []string {
	files, err := filepath.Glob("testdata/massif-visualizer__*")
	if err != nil || len(files) != 4 {
		t.Fatalf("fixtures: %v %v", files, err)
	}
	return files
}

// plain returns a fixture's massif.out text (bzip2 undone).
func plain(t testing.TB, path string) []byte {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if IsBzip2(b) {
		if b, err = io.ReadAll(bzip2.NewReader(bytes.NewReader(b))); err != nil {
			t.Fatal(err)
		}
	}
	return b
}

func parseFile(t testing.TB, path string) *File {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := Parse(f, config.DefaultLimits())
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return m
}

// TestFixtures: each fixture's counts, as SOURCES.md describes them.
func TestFixtures(t *testing.T) {
	for _, c := range []struct {
		file            string
		snapshots, peak int
		unit            string
	}{
		{"massif.out.stack", 72, 61, "i"},
		{"massif.out.kate2", 51, 48, "i"},
		{"massif.out.ktorrent", 88, 85, "i"},
		{"massif.out.duchainify.bz2", 78, 67, "i"},
	} {
		t.Run(c.file, func(t *testing.T) {
			m := parseFile(t, "testdata/massif-visualizer__"+c.file)
			if len(m.Snapshots) != c.snapshots || m.Peak != c.peak || m.TimeUnit != c.unit || m.TreeOf != m.Peak {
				t.Fatalf("snapshots %d peak %d tree of %d unit %q", len(m.Snapshots), m.Peak, m.TreeOf, m.TimeUnit)
			}
			if m.Tree[0].Bytes != m.Snapshots[m.Peak].Heap {
				t.Fatalf("tree root %d, heap %d", m.Tree[0].Bytes, m.Snapshots[m.Peak].Heap)
			}
			var sum int64
			for _, s := range Profile(m).Sample {
				sum += s.Value[0]
			}
			if sum != m.Snapshots[m.Peak].Heap {
				t.Fatalf("the profile's samples sum to %d, the peak heap is %d", sum, m.Snapshots[m.Peak].Heap)
			}
		})
	}
}

var (
	msPeakRe = regexp.MustCompile(`(\d+) \(peak\)`)
	msRowRe  = regexp.MustCompile(`(?m)^\s+(\d+)\s+([\d,]+)\s+([\d,]+)\s+([\d,]+)\s+([\d,]+)\s+([\d,]+)\s*$`)
)

// TestAgainstMsPrint runs Valgrind's ms_print on every fixture and
// compares the peak snapshot's number and total(B), useful-heap(B),
// extra-heap(B) and stacks(B) with the parse.
func TestAgainstMsPrint(t *testing.T) {
	ms := testenv.LookPath(t, "ms_print")
	for _, path := range fixtures(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			m := parseFile(t, path)
			in := filepath.Join(t.TempDir(), "massif.out") // ms_print reads no bzip2
			if err := os.WriteFile(in, plain(t, path), 0o644); err != nil {
				t.Fatal(err)
			}
			out, err := exec.Command(ms, in).Output()
			if err != nil {
				t.Fatalf("ms_print: %v", err)
			}
			pm := msPeakRe.FindSubmatch(out)
			if pm == nil {
				t.Fatalf("ms_print names no peak:\n%.2000s", out)
			}
			peak, _ := strconv.Atoi(string(pm[1]))
			if peak != m.Snapshots[m.Peak].Num {
				t.Fatalf("ms_print's peak is snapshot %d, ours %d", peak, m.Snapshots[m.Peak].Num)
			}
			rows := map[int][4]int64{}
			for _, r := range msRowRe.FindAllSubmatch(out, -1) {
				n, _ := strconv.Atoi(string(r[1]))
				var v [4]int64
				for i := range v {
					v[i], _ = strconv.ParseInt(strings.ReplaceAll(string(r[3+i]), ",", ""), 10, 64)
				}
				rows[n] = v
			}
			if len(rows) != len(m.Snapshots) {
				t.Fatalf("ms_print shows %d snapshot rows, we parsed %d", len(rows), len(m.Snapshots))
			}
			for _, s := range m.Snapshots {
				if got, want := [4]int64{s.Total(), s.Heap, s.HeapExtra, s.Stacks}, rows[s.Num]; got != want {
					t.Errorf("snapshot %d: ours %v, ms_print %v", s.Num, got, want)
				}
			}
			t.Logf("peak snapshot %d, total %d B", peak, rows[peak][0])
		})
	}
}

const tiny = "desc: (none)\ncmd: ./a.out\ntime_unit: i\n#-----------\nsnapshot=0\n#-----------\ntime=0\nmem_heap_B=0\nmem_heap_extra_B=0\nmem_stacks_B=0\nheap_tree=empty\n" +
	"#-----------\nsnapshot=1\n#-----------\ntime=100\nmem_heap_B=300\nmem_heap_extra_B=20\nmem_stacks_B=0\nheap_tree=peak\n" +
	"n2: 300 (heap allocation functions) malloc/new/new[], --alloc-fns, etc.\n" +
	" n1: 200 0x400: grow (grow.c:7)\n  n0: 200 0x500: main (grow.c:20)\n" +
	" n0: 100 in 3 places, all below massif's threshold (1.00%)\n"

// TestRefused: empty, truncated and mislabelled input is
// ARTIFACT_PARSE_FAILED with a reason; over a limit ARTIFACT_TOO_LARGE.
func TestRefused(t *testing.T) {
	kate := plain(t, "testdata/massif-visualizer__massif.out.kate2")
	bz, err := os.ReadFile("testdata/massif-visualizer__massif.out.duchainify.bz2")
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string][]byte{
		"empty":              nil,
		"header only":        []byte("desc: x\ncmd: y\ntime_unit: i\n"),
		"not massif":         []byte("\x1f\x8b\x08\x00 a gzipped pprof, say"),
		"pprof text":         []byte("main;f 10\nmain;g 5\n"),
		"cut mid tree":       []byte(tiny[:strings.Index(tiny, "  n0: 200")]),
		"cut mid line":       []byte(tiny[:len(tiny)-10]),
		"cut mid snapshot":   []byte(tiny[:strings.Index(tiny, "mem_stacks_B=0\nheap_tree=peak")]),
		"kate2 cut in half":  kate[:len(kate)/2],
		"bzip2 cut in half":  bz[:len(bz)/2],
		"bad unit":           []byte(strings.Replace(tiny, "time_unit: i", "time_unit: s", 1)),
		"children too big":   []byte(strings.Replace(tiny, "  n0: 200", "  n0: 900", 1)),
		"root not the heap":  []byte(strings.Replace(tiny, "mem_heap_B=300", "mem_heap_B=301", 1)),
		"wrong depth":        []byte(strings.Replace(tiny, "  n0: 200", "   n0: 200", 1)),
		"snapshot numbering": []byte(strings.Replace(tiny, "snapshot=1", "snapshot=7", 1)),
	}
	for name, b := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := Parse(bytes.NewReader(b), config.DefaultLimits())
			var pe *ParseError
			if !errors.As(err, &pe) || pe.Limit != "" || pe.Reason == "" {
				t.Fatalf("Parse = %v, want a ParseError with a reason", err)
			}
			if fe := parseFault(err, "a1"); fe.Code != fault.ArtifactParseFailed {
				t.Fatalf("code %s", fe.Code)
			}
		})
	}
	if _, err := Parse(strings.NewReader(tiny), config.DefaultLimits()); err != nil {
		t.Fatalf("the untouched input fails: %v", err)
	}
	for _, c := range []struct {
		key string
		lim config.Limits
	}{{"max_decompressed_bytes", config.Limits{MaxDecompressedBytes: 100}}, {"max_samples", config.Limits{MaxSamples: 1}},
		{"max_locations", config.Limits{MaxLocations: 2}}, {"max_stack_depth", config.Limits{MaxStackDepth: 2}},
		{"max_string_bytes", config.Limits{MaxStringBytes: 5}}} {
		_, err := Parse(strings.NewReader(tiny), c.lim)
		var pe *ParseError
		if !errors.As(err, &pe) || pe.Limit != c.key {
			t.Errorf("%s: Parse = %v", c.key, err)
		} else if fe := parseFault(err, "a1"); fe.Code != fault.ArtifactTooLarge {
			t.Errorf("%s: code %s", c.key, fe.Code)
		}
	}
}

// TestFrames: nodes' functions, files, lines and modules.
func TestFrames(t *testing.T) {
	m, err := Parse(strings.NewReader(tiny), config.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	want := []Node{{Parent: -1, Bytes: 300, Children: 2, Function: "(heap allocation functions) malloc/new/new[], --alloc-fns, etc."},
		{Parent: 0, Bytes: 200, Children: 1, Addr: "0x400", Function: "grow", File: "grow.c", Line: 7},
		{Parent: 1, Bytes: 200, Addr: "0x500", Function: "main", File: "grow.c", Line: 20},
		{Parent: 0, Bytes: 100, Function: "(allocators below massif's threshold)"}}
	if len(m.Tree) != len(want) {
		t.Fatalf("tree %+v", m.Tree)
	}
	for i := range want {
		if m.Tree[i] != want[i] {
			t.Errorf("node %d: %+v, want %+v", i, m.Tree[i], want[i])
		}
	}
	k := parseFile(t, "testdata/massif-visualizer__massif.out.kate2")
	var mod bool
	for _, n := range k.Tree {
		if n.Function == "???" && n.Module == "/usr/lib/libkateinterfaces.so.4.4.0" {
			mod = true
		}
		if strings.HasSuffix(n.Function, ")") && strings.Contains(n.Function, "(in ") {
			t.Errorf("location left in the function: %q", n.Function)
		}
	}
	if !mod {
		t.Error("no ??? frame with its module")
	}
}

// TestExtract: the rows an import publishes, from a real fixture.
func TestExtract(t *testing.T) {
	path := "testdata/massif-visualizer__massif.out.duchainify.bz2"
	m := parseFile(t, path)
	e := NewExtractor()
	head, _ := os.ReadFile(path)
	in := adapter.ExtractInput{RunID: "r1", ArtifactID: "a1", Kind: KindMemory, Path: path, Head: head[:512], Limits: config.DefaultLimits()}
	if !e.Accepts(in) {
		t.Fatal("the bzip2 massif file is not accepted")
	}
	sink := adaptertest.NewSink(t, e.Name(), e.Version())
	res, err := e.Extract(context.Background(), in, sink)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	snaps := 0
	for _, r := range sink.Rows(t, "measurements") {
		name := r["name"].(string)
		if strings.HasPrefix(name, "memory.snapshot.") {
			snaps++
			continue
		}
		if v, ok := r["value_int"].(int64); ok {
			got[name] = v
		}
	}
	p, last := m.Snapshots[m.Peak], m.Snapshots[len(m.Snapshots)-1]
	for name, want := range map[string]int64{"memory.peak_heap": p.Heap + p.HeapExtra, "memory.peak_heap.useful": p.Heap,
		"memory.peak_heap.extra": p.HeapExtra, "memory.peak_stacks": p.Stacks, "memory.peak_total": p.Total(),
		"memory.retained_end": last.Heap, "profile.total": p.Heap} {
		if got[name] != want {
			t.Errorf("%s = %d, want %d", name, got[name], want)
		}
	}
	if snaps != 3*len(m.Snapshots) {
		t.Errorf("%d snapshot rows for %d snapshots", snaps, len(m.Snapshots))
	}
	if res.Rows["frames"] == 0 || res.Rows["stacks"] == 0 {
		t.Errorf("rows %v", res.Rows)
	}
	for _, probe := range [][]byte{[]byte("main;f 1\n"), []byte("desc: x\n")} {
		if probe[0] == 'm' && e.Accepts(adapter.ExtractInput{Head: probe}) {
			t.Error("collapsed stacks accepted as massif")
		}
		if probe[0] == 'd' && !e.Accepts(adapter.ExtractInput{Head: probe}) {
			t.Error("a massif head is refused")
		}
	}
}

func TestContract(t *testing.T) {
	var fx []adaptertest.Fixture
	for _, p := range fixtures(t) {
		fx = append(fx, adaptertest.Fixture{Path: p, Decl: adapter.ArtifactDecl{RelPath: filepath.Base(p), Kind: KindMemory}})
	}
	adaptertest.Run(t, New(), fx...)
}

// TestViewer: ms_print for plain files, massif-visualizer for bzip2 ones
// (ms_print reads no bzip2).
func TestViewer(t *testing.T) {
	for path, tool := range map[string]string{"testdata/massif-visualizer__massif.out.kate2": "ms_print",
		"testdata/massif-visualizer__massif.out.duchainify.bz2": "massif-visualizer"} {
		v, err := New().Viewer(path, KindMemory)
		if err != nil || v.Tool != tool || v.Argv[len(v.Argv)-1] != path {
			t.Errorf("%s: %+v %v", path, v, err)
		}
	}
}
