package gotest

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/flameox/flameox/pkg/adapter"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/internal/testenv"
)

func fixtures(t testing.TB) []string {
	paths, err := filepath.Glob("testdata/golang-perf__*")
	if err != nil || len(paths) != 5 {
		t.Fatalf("fixtures: %v %v", paths, err)
	}
	return paths
}

func input(t testing.TB, path string) adapter.ExtractInput {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return adapter.ExtractInput{RunID: "run-1", ArtifactID: "sha256:abc", Kind: KindBenchmark, Path: path, Head: b[:min(len(b), 4096)]}
}

// TestFixtures checks every real benchfmt file against an independent
// count of its result lines and of its malformed benchmark lines.
func TestFixtures(t *testing.T) {
	e := &BenchExtractor{}
	var paths []string
	for _, path := range fixtures(t) {
		raw, _ := os.ReadFile(path)
		bad := filepath.Join(t.TempDir(), filepath.Base(path)+".corrupted")
		os.WriteFile(bad, corrupt(raw), 0o644)
		paths = append(paths, path, bad)
	}
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			raw, _ := os.ReadFile(path)
			wantRes, wantVals, wantSyntax := independent(string(raw))
			if strings.HasSuffix(path, ".corrupted") && wantSyntax == 0 {
				t.Fatal("the corrupted copy has no bad line")
			}
			in := input(t, path)
			if !e.Accepts(in) {
				t.Fatal("a real go test -bench file is not accepted")
			}
			sink := newSink(t)
			tl, n, err := extract(context.Background(), in, sink)
			if err != nil {
				t.Fatal(err)
			}
			if tl.results != wantRes || tl.values != wantVals || tl.syntax != wantSyntax || n != int64(wantVals) {
				t.Fatalf("results %d values %d syntax %d rows %d; independent count: %d %d %d", tl.results, tl.values, tl.syntax, n, wantRes, wantVals, wantSyntax)
			}
			rows := sink.Rows(t, "measurements")
			if len(rows) != wantVals {
				t.Fatalf("%d rows read back, want %d", len(rows), wantVals)
			}
			ids := map[any]bool{}
			for _, r := range rows {
				ids[r["measurement_id"]] = true
				name, unit := r["name"].(string), r["unit"].(string)
				if name != "gobench."+unit || r["aggregation"] != "mean" || r["scope"] != "benchmark" || r["is_warmup"] != false ||
					r["evidence_level"] != "observed" || r["value_float"] == nil || r["value_int"] != nil || r["loop_count"].(uint64) < 1 {
					t.Fatalf("bad row %v", r)
				}
				if unit == "ns/op" || unit == "MB/s" {
					t.Fatalf("unit %s was not tidied", unit)
				}
				if s := r["subject"].(string); strings.HasPrefix(s, "Benchmark") {
					t.Fatalf("subject %q keeps the prefix", s)
				}
			}
			if len(ids) != len(rows) {
				t.Fatalf("%d measurement ids for %d rows", len(ids), len(rows))
			}
			t.Logf("%d results, %d rows, %d syntax errors", wantRes, wantVals, wantSyntax)
		})
	}
}

// corrupt breaks every fifth benchmark line in a different way (bad
// iteration count, missing unit, bad value, truncated line).
func corrupt(raw []byte) []byte {
	lines := strings.Split(string(raw), "\n")
	k := 0
	for i, l := range lines {
		f := strings.Fields(l)
		if !strings.HasPrefix(l, "Benchmark") || len(f) < 4 {
			continue
		}
		if k++; k%5 != 0 {
			continue
		}
		switch k / 5 % 4 {
		case 0:
			f[1] = f[1] + "x"
		case 1:
			f = f[:len(f)-1]
		case 2:
			f[2] = "1.2.3"
		case 3:
			f = f[:2]
		}
		lines[i] = strings.Join(f, "\t")
	}
	return []byte(strings.Join(lines, "\n"))
}

// TestCRCDetails pins the conventions on a known file: 36 benchmarks x 10
// runs, ns/op → sec/op and MB/s → B/s, GOMAXPROCS 8 in dimensions.
func TestCRCDetails(t *testing.T) {
	sink := newSink(t)
	if _, _, err := extract(context.Background(), input(t, "testdata/golang-perf__crc-old.txt"), sink); err != nil {
		t.Fatal(err)
	}
	rows := sink.Rows(t, "measurements")
	r := rows[0]
	d := r["dimensions"].(map[string]string)
	if r["subject"] != "CRC32/poly=IEEE/size=15/align=0" || r["unit"] != "sec/op" || r["value_float"].(float64) != 44.6e-9 ||
		r["loop_count"] != uint64(3000000) || r["value_index"] != int32(0) || r["worker_id"] != "hash/crc32" ||
		d["gomaxprocs"] != "8" || d["goos"] != "darwin" || d["note"] != "hw acceleration disabled" || d["name.poly"] != "IEEE" ||
		d["name.base"] != "CRC32" || d["orig_unit"] != "ns/op" {
		t.Fatalf("first row: %v", r)
	}
	if rows[1]["unit"] != "B/s" || rows[2]["value_index"] != int32(1) {
		t.Fatalf("second value or repetition: %v %v", rows[1], rows[2])
	}
	if rows[len(rows)-1]["value_index"] != int32(9) {
		t.Fatalf("last repetition index %v, want 9 (-count 10)", rows[len(rows)-1]["value_index"])
	}
}

// TestTest2JSON turns each fixture into a real test2json stream with `go
// tool test2json` and checks the stream gives the same benchmark rows.
func TestTest2JSON(t *testing.T) {
	testenv.Go(t)
	e := &BenchExtractor{}
	for _, path := range fixtures(t) {
		raw, _ := os.ReadFile(path)
		cmd := exec.Command("go", "tool", "test2json", "-p", "example.com/fixture")
		cmd.Stdin = bytes.NewReader(raw)
		stream, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		jp := filepath.Join(t.TempDir(), "stdout.txt")
		os.WriteFile(jp, stream, 0o644)
		in := adapter.ExtractInput{RunID: "r", ArtifactID: "sha256:j", Path: jp, Head: stream[:512]}
		if !e.Accepts(in) || !isStream(stream) {
			t.Fatalf("%s: the test2json stream is not accepted", path)
		}
		sink := newSink(t)
		tl, n, err := extract(context.Background(), in, sink)
		if err != nil {
			t.Fatal(err)
		}
		wantRes, wantVals, _ := independent(string(raw))
		if tl.results != wantRes || n != int64(wantVals)+3 || len(tl.suites) != 1 || tl.notEvents != 0 {
			t.Fatalf("%s: %d results, %d rows; want %d results, %d+3 rows", path, tl.results, n, wantRes, wantVals)
		}
		rows := sink.Rows(t, "measurements")
		last := rows[len(rows)-1]
		if last["name"] != "gotest.tests.skipped" || last["scope"] != "test_suite" || last["value_int"] != int64(0) || last["unit"] != "count" {
			t.Fatalf("test count row: %v", last)
		}
	}
}

func TestRefusesGarbage(t *testing.T) {
	e := &BenchExtractor{}
	dir := t.TempDir()
	for name, content := range map[string]string{
		"binary":   "\x00\x01not any profile format\xff\xfe",
		"empty":    "",
		"text":     "PASS\nok  \texample.com/x\t0.1s\n",
		"badlines": "BenchmarkX 12x 3 ns/op\nBenchmarkY 5\n",
		"json":     `{"not":"test2json"}` + "\n",
	} {
		path := filepath.Join(dir, name)
		os.WriteFile(path, []byte(content), 0o644)
		in := adapter.ExtractInput{RunID: "r", ArtifactID: "sha256:g", Path: path, Head: []byte(content)}
		if e.Accepts(in) {
			t.Errorf("%s: accepted", name)
		}
		sink := newSink(t)
		_, err := e.Extract(context.Background(), in, sink)
		if !fault.Is(err, fault.ArtifactParseFailed) {
			t.Errorf("%s: Extract = %v, want ARTIFACT_PARSE_FAILED", name, err)
		}
		if sink.Opened() != 0 {
			t.Errorf("%s: a table was opened for a refused input", name)
		}
	}
}

// FuzzExtract: arbitrary bytes never panic; either an error, or rows whose
// count matches what was parsed (and, for text, an independent count).
func FuzzExtract(f *testing.F) {
	for _, p := range fixtures(f) {
		b, _ := os.ReadFile(p)
		f.Add(b[:min(len(b), 2048)])
	}
	f.Add([]byte(`{"Action":"output","Package":"p","Output":"BenchmarkA-2 \t 10\t 5 ns/op\n"}` + "\n" + `{"Action":"pass","Package":"p","Test":"TestA"}`))
	f.Add([]byte("BenchmarkA 1 NaN ns/op 2 ns/op 3 sec/op\nBenchmark 0 1 x\nBenchmarkB 1 1e400 MB/s\n"))
	f.Fuzz(checkExtract)
}

func checkExtract(t *testing.T, data []byte) {
	path := filepath.Join(t.TempDir(), "in")
	os.WriteFile(path, data, 0o644)
	sink := newSink(t)
	tl, n, err := extract(context.Background(), adapter.ExtractInput{RunID: "r", ArtifactID: "a", Path: path, Head: data}, sink)
	if err != nil {
		if !fault.Is(err, fault.ArtifactParseFailed) || n != 0 {
			t.Fatalf("error %v after %d rows", err, n)
		}
		return
	}
	if want := int64(tl.values + 3*len(tl.suites) + tl.runTimes + tl.buildTimes); n != want || int64(len(sink.Rows(t, "measurements"))) != n {
		t.Fatalf("%d rows reported, %d parsed", n, want)
	}
	if !isStream(data) {
		if res, vals, _ := independent(string(data)); res != tl.results || vals != tl.values {
			t.Fatalf("results %d values %d, independent %d %d", tl.results, tl.values, res, vals)
		}
	}
}

// TestPhases: the test binary's run spans the package's start event to its
// own pass; the build spans the command's start to that start event, and
// is not recorded when the start is unknown (an import).
func TestPhases(t *testing.T) {
	stream := `{"Time":"2026-12-01T11:42:43.343652932Z","Action":"start","Package":"example.com/p"}
{"Time":"2026-12-01T11:42:43.348422378Z","Action":"run","Package":"example.com/p","Test":"TestX"}
{"Time":"2026-12-01T11:42:43.349000000Z","Action":"pass","Package":"example.com/p","Test":"TestX","Elapsed":0}
{"Time":"2026-12-01T11:42:43.388846706Z","Action":"pass","Package":"example.com/p","Elapsed":0.045}
`
	path := filepath.Join(t.TempDir(), "stdout.txt")
	os.WriteFile(path, []byte(stream), 0o644)
	started, _ := time.Parse(time.RFC3339Nano, "2026-12-01T11:42:42.343652932Z")
	for _, tt := range []struct {
		started time.Time
		want    map[string]int64
	}{
		{started, map[string]int64{"gotest.build_time": 1e9, "gotest.run_time": 45193774}},
		{time.Time{}, map[string]int64{"gotest.run_time": 45193774}},
	} {
		sink := newSink(t)
		in := adapter.ExtractInput{RunID: "r", ArtifactID: "a", Path: path, Head: []byte(stream), Started: tt.started}
		x, err := (&BenchExtractor{}).Extract(context.Background(), in, sink)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]int64{}
		for _, r := range sink.Rows(t, "measurements") {
			if strings.HasSuffix(r["name"].(string), "_time") {
				got[r["name"].(string)] = r["value_int"].(int64)
				if r["subject"] != "example.com/p" || r["unit"] != "ns" || r["outcome"] != "passed" {
					t.Errorf("row %v", r)
				}
			}
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("started %v: %v, want %v", tt.started, got, tt.want)
		}
		lim := strings.Join(x.Limitations, " ")
		if !strings.Contains(lim, "compilation included") || tt.started.IsZero() != strings.Contains(lim, "no gotest.build_time") {
			t.Errorf("started %v: limitations %q", tt.started, x.Limitations)
		}
	}
}
