package pyperf

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/flameox/flameox/pkg/adapter"
	"github.com/flameox/flameox/pkg/adapter/adaptertest"
	"github.com/flameox/flameox/pkg/config"
	"github.com/flameox/flameox/pkg/fault"
)

func newSink(t testing.TB) *adaptertest.Sink {
	return adaptertest.NewSink(t, ExtractorName, ExtractorVersion)
}

// fileJSON reads a fixture into generic maps with encoding/json, gunzipped
// when its name says .gz: an independent reading of the file.
func fileJSON(t testing.TB, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasSuffix(path, ".gz") {
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		if b, err = io.ReadAll(zr); err != nil {
			t.Fatal(err)
		}
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// want is what a file holds per benchmark, counted from the generic maps.
type want struct {
	values, warmups, calibration, runs int
	sum                                float64 // of the values (not warm-ups)
}

func count(t testing.TB, path string) (map[string]*want, int) {
	doc := fileJSON(t, path)
	meta := func(m any) map[string]any {
		mm, _ := m.(map[string]any)
		if mm == nil {
			mm = map[string]any{}
		}
		return mm
	}
	suite := meta(doc["metadata"])
	nmeta := len(suite)
	out := map[string]*want{}
	for _, b := range doc["benchmarks"].([]any) {
		bench := b.(map[string]any)
		bm := meta(bench["metadata"])
		nmeta += len(bm)
		var name string
		w := &want{}
		for i, r := range bench["runs"].([]any) {
			run := r.(map[string]any)
			rm := meta(run["metadata"])
			nmeta += len(rm)
			if i == 0 {
				for _, m := range []map[string]any{rm, bm, suite} {
					if n, ok := m["name"].(string); ok && name == "" {
						name = n
					}
				}
			}
			vals, _ := run["values"].([]any)
			warm, _ := run["warmups"].([]any)
			w.runs++
			w.values += len(vals)
			w.warmups += len(warm)
			if len(vals) == 0 {
				w.calibration++
			}
			for _, v := range vals {
				w.sum += v.(float64)
			}
		}
		out[name] = w
	}
	return out, nmeta
}

func extractFile(t testing.TB, path string, lim config.Limits) (*adaptertest.Sink, *adapter.Extraction, error) {
	t.Helper()
	head, _ := os.ReadFile(path)
	in := adapter.ExtractInput{RunID: "run", ArtifactID: "art", Path: path, Head: head[:min(len(head), 64<<10)], Limits: lim}
	sink := newSink(t)
	x, err := (&Extractor{}).Extract(context.Background(), in, sink)
	return sink, x, err
}

// TestFixtures: every fixture is accepted and imports with, per benchmark,
// as many values, warm-ups and calibration runs as the file holds
// (counted above with encoding/json alone), the same values, and one
// observation per metadata entry.
func TestFixtures(t *testing.T) {
	files, _ := filepath.Glob("testdata/pyperf__*")
	if len(files) < 5 {
		t.Fatalf("fixtures missing: %v", files)
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			head, _ := os.ReadFile(path)
			if !(&Extractor{}).Accepts(adapter.ExtractInput{Path: path, Head: head[:min(len(head), 4096)]}) {
				t.Fatal("not accepted")
			}
			wants, nmeta := count(t, path)
			sink, x, err := extractFile(t, path, config.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]*want{}
			calRuns := map[string]map[int32]bool{}
			rows := sink.Rows(t, "measurements")
			for _, r := range rows {
				name := r["subject"].(string)
				g := got[name]
				if g == nil {
					g, calRuns[name] = &want{}, map[int32]bool{}
					got[name] = g
				}
				dims, _ := r["dimensions"].(map[string]string)
				if r["is_warmup"].(bool) {
					g.warmups++
				} else {
					g.values++
					g.sum += r["value_float"].(float64)
				}
				if dims["calibration"] != "" {
					calRuns[name][r["worker_run_index"].(int32)] = true
					if !r["is_warmup"].(bool) {
						t.Errorf("a calibration run's value is not a warm-up: %v", r)
					}
				}
				if r["scope"] != "benchmark" || r["worker_id"] != fmt.Sprintf("worker-%d", r["worker_run_index"]) ||
					r["name"] != "pyperf."+r["unit"].(string) || r["loop_count"] == nil {
					t.Errorf("row %v", r)
				}
				loops, _ := strconv.ParseUint(dims["loops"], 10, 64)
				inner, _ := strconv.ParseUint(dims["inner_loops"], 10, 64)
				if loops*inner != r["loop_count"].(uint64) || loops == 0 {
					t.Errorf("loop_count %v, dims %v", r["loop_count"], dims)
				}
			}
			for name, g := range got {
				g.calibration = len(calRuns[name])
			}
			if len(got) != len(wants) {
				t.Fatalf("benchmarks %d, the file has %d", len(got), len(wants))
			}
			total := 0
			for name, w := range wants {
				g := got[name]
				if g == nil {
					t.Fatalf("benchmark %q missing", name)
				}
				total += w.values + w.warmups
				if g.values != w.values || g.warmups != w.warmups || g.calibration != w.calibration {
					t.Errorf("%s: %d values %d warm-ups %d calibration runs, the file has %d %d %d",
						name, g.values, g.warmups, g.calibration, w.values, w.warmups, w.calibration)
				}
				if d := g.sum - w.sum; d > 1e-12*w.sum || d < -1e-12*w.sum {
					t.Errorf("%s: values sum to %v, the file's to %v", name, g.sum, w.sum)
				}
			}
			if x.Rows["measurements"] != int64(total) || len(rows) != total {
				t.Errorf("rows %v (%d read back), want %d", x.Rows, len(rows), total)
			}
			obs := sink.Rows(t, "observations")
			if x.Rows["observations"] != int64(nmeta) || len(obs) != nmeta {
				t.Errorf("observations %v (%d read back), the file has %d metadata entries", x.Rows, len(obs), nmeta)
			}
		})
	}
}

// TestUnits: a file without "unit" is in seconds; track_memory's in bytes.
func TestUnits(t *testing.T) {
	for file, unit := range map[string]string{"pyperf__telco.json": "sec", "pyperf__track_memory.json": "bytes",
		"pyperf__py3.json.gz": "sec"} {
		sink, _, err := extractFile(t, filepath.Join("testdata", file), config.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range sink.Rows(t, "measurements") {
			if r["unit"] != unit {
				t.Fatalf("%s: unit %v, want %s", file, r["unit"], unit)
			}
		}
	}
}

// TestHierarchy: the first runs of telco, row by row: a calibration run of
// four warm-ups (loops doubling), then runs of one warm-up and three values.
func TestHierarchy(t *testing.T) {
	sink, _, err := extractFile(t, "testdata/pyperf__telco.json", config.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	rows := sink.Rows(t, "measurements")
	type key struct {
		run, idx int32
		warm     bool
		loops    uint64
		cal      string
	}
	var got []key
	for _, r := range rows[:9] {
		got = append(got, key{r["worker_run_index"].(int32), r["value_index"].(int32), r["is_warmup"].(bool), r["loop_count"].(uint64),
			r["dimensions"].(map[string]string)["calibration"]})
	}
	wantRows := []key{{0, 0, true, 1, "loops"}, {0, 1, true, 2, "loops"}, {0, 2, true, 4, "loops"}, {0, 3, true, 8, "loops"},
		{1, 0, true, 8, ""}, {1, 1, false, 8, ""}, {1, 2, false, 8, ""}, {1, 3, false, 8, ""}, {2, 0, true, 8, ""}}
	if fmt.Sprint(got) != fmt.Sprint(wantRows) {
		t.Fatalf("rows\n%v\nwant\n%v", got, wantRows)
	}
	if v := rows[5]["value_float"].(float64); v != 0.022752201875846367 {
		t.Fatalf("first value %v", v)
	}
}

const good = `{"version": "1.0", "metadata": {"name": "b", "unit": "second"}, "benchmarks": [{"runs": [{"values": [1.5, 2.5], "warmups": [[1, 0.5]]}]}]}`

func gz(s string) []byte {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write([]byte(s))
	zw.Close()
	return b.Bytes()
}

// manyValues is a valid file of n values.
func manyValues(n int) string {
	var b strings.Builder
	b.WriteString(`{"version": "1.0", "metadata": {"name": "b"}, "benchmarks": [{"runs": [{"values": [`)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString("1.0")
	}
	b.WriteString("]}]}]}")
	return b.String()
}

// TestHostile: each broken or oversized file fails with a structured fault
// naming the problem and writes no row.
func TestHostile(t *testing.T) {
	bomb := gz(`{"version": "1.0", "benchmarks": [` + strings.Repeat(" ", 8<<20) + `]}`)
	full := gz(good)
	tests := []struct {
		name string
		data []byte
		lim  config.Limits
		code fault.Code
		msg  string
	}{
		{"NaN", []byte(strings.Replace(good, "1.5", "NaN", 1)), config.Limits{}, fault.ArtifactParseFailed, "NaN"},
		{"Infinity", []byte(strings.Replace(good, "1.5", "Infinity", 1)), config.Limits{}, fault.ArtifactParseFailed, "Infinity"},
		{"overflow", []byte(strings.Replace(good, "1.5", "1e400", 1)), config.Limits{}, fault.ArtifactParseFailed, "not a finite number"},
		{"negative", []byte(strings.Replace(good, "1.5", "-1.5", 1)), config.Limits{}, fault.ArtifactParseFailed, "is not > 0"},
		{"zero", []byte(strings.Replace(good, "1.5", "0", 1)), config.Limits{}, fault.ArtifactParseFailed, "is not > 0"},
		{"negative warm-up", []byte(strings.Replace(good, "0.5", "-0.5", 1)), config.Limits{}, fault.ArtifactParseFailed, "is not >= 0"},
		{"warm-up loops 0", []byte(strings.Replace(good, "[1, 0.5]", "[0, 0.5]", 1)), config.Limits{}, fault.ArtifactParseFailed, "integer >= 1"},
		{"warm-up triple", []byte(strings.Replace(good, "[1, 0.5]", "[1, 0.5, 3]", 1)), config.Limits{}, fault.ArtifactParseFailed, "pair"},
		{"string value", []byte(strings.Replace(good, "1.5", `"1.5"`, 1)), config.Limits{}, fault.ArtifactParseFailed, "want a number"},
		{"duplicate benchmark", []byte(strings.Replace(good, `[{"runs": [{"values": [1.5, 2.5], "warmups": [[1, 0.5]]}]}]`,
			`[{"runs": [{"values": [1.5]}]}, {"runs": [{"values": [2.5]}]}]`, 1)), config.Limits{}, fault.ArtifactParseFailed, "already has a benchmark called"},
		{"duplicate values key", []byte(strings.Replace(good, `"values": [1.5, 2.5]`, `"values": [1.5], "values": [2.5]`, 1)), config.Limits{}, fault.ArtifactParseFailed, "given twice"},
		{"duplicate metadata key", []byte(strings.Replace(good, `"unit": "second"`, `"name": "c"`, 1)), config.Limits{}, fault.ArtifactParseFailed, "given twice"},
		{"duplicate run", []byte(`{"version": "1.0", "metadata": {"name": "a"}, "benchmarks": [{"runs": [{"metadata": {"date": "2020-10-13 10:12:21.135682"}, "values": [1, 2]}, {"metadata": {"date": "2020-10-13 10:12:22.000001"}, "values": [1, 2]}, {"metadata": {"date": "2020-10-13 10:12:21.135682"}, "values": [1, 2]}]}]}`),
			config.Limits{}, fault.ArtifactParseFailed, "the same run as runs[0]"},
		{"duplicate run, date shared", []byte(`{"version": "1.0", "metadata": {"name": "a"}, "benchmarks": [{"metadata": {"date": "2020-10-13 10:12:21.135682"}, "runs": [{"values": [1, 2]}, {"values": [1, 2]}]}]}`),
			config.Limits{}, fault.ArtifactParseFailed, "recorded twice"},
		{"incompatible runs", []byte(`{"version": "1.0", "benchmarks": [{"runs": [{"metadata": {"name": "a", "unit": "second"}, "values": [1]}, {"metadata": {"name": "a", "unit": "byte"}, "values": [2]}]}]}`),
			config.Limits{}, fault.ArtifactParseFailed, "metadata unit is different"},
		{"no name", []byte(`{"version": "1.0", "benchmarks": [{"runs": [{"values": [1]}]}]}`), config.Limits{}, fault.ArtifactParseFailed, "must have a name"},
		{"empty run", []byte(strings.Replace(good, `{"values": [1.5, 2.5], "warmups": [[1, 0.5]]}`, `{"values": []}`, 1)), config.Limits{}, fault.ArtifactParseFailed, "empty"},
		{"many empty runs", []byte(`{"version": "1.0", "benchmarks": [{"runs": [` + strings.Repeat(`{"metadata": {}},`, 1000) + `{}]}]}`), config.Limits{}, fault.ArtifactParseFailed, "runs[0]: values and warmups are empty"},
		{"no runs", []byte(`{"version": "1.0", "benchmarks": [{"runs": []}]}`), config.Limits{}, fault.ArtifactParseFailed, "non-empty"},
		{"no benchmark", []byte(`{"version": "1.0", "benchmarks": []}`), config.Limits{}, fault.ArtifactParseFailed, "any benchmark"},
		{"bad version", []byte(strings.Replace(good, `"1.0"`, `"2.0"`, 1)), config.Limits{}, fault.ArtifactParseFailed, "not one pyperf reads"},
		{"bad unit", []byte(strings.Replace(good, `"second"`, `"parsec"`, 1)), config.Limits{}, fault.ArtifactParseFailed, "not one of pyperf's"},
		{"bad loops", []byte(strings.Replace(good, `"name": "b"`, `"name": "b", "loops": 0`, 1)), config.Limits{}, fault.ArtifactParseFailed, "integer >= 1"},
		{"newline in metadata", []byte(strings.Replace(good, `"name": "b"`, `"name": "b", "x": "a\nb"`, 1)), config.Limits{}, fault.ArtifactParseFailed, "newline"},
		{"trailing data", []byte(good + ` {}`), config.Limits{}, fault.ArtifactParseFailed, "after the top-level object"},
		{"truncated json", []byte(good[:len(good)-20]), config.Limits{}, fault.ArtifactParseFailed, "truncated"},
		{"truncated gzip", full[:len(full)-12], config.Limits{}, fault.ArtifactParseFailed, "truncated gzip"},
		{"corrupt gzip", append(append([]byte{}, full[:len(full)-8]...), 1, 2, 3, 4, 5, 6, 7, 8), config.Limits{}, fault.ArtifactParseFailed, "gzip"},
		{"gzip bomb", bomb, config.Limits{MaxDecompressedBytes: 1 << 20}, fault.ArtifactTooLarge, "max_decompressed_bytes"},
		{"10^6 values", []byte(manyValues(1000000)), config.Limits{}, fault.ArtifactTooLarge, "values and warm-ups"},
		{"values over max_samples", []byte(manyValues(100)), config.Limits{MaxSamples: 50}, fault.ArtifactTooLarge, "max_samples"},
		{"deep unknown key", []byte(strings.Replace(good, `"metadata"`, `"x": `+strings.Repeat("[", 100)+strings.Repeat("]", 100)+`, "metadata"`, 1)),
			config.Limits{}, fault.ArtifactTooLarge, "max_json_depth"},
		{"unknown keys over max_strings", []byte(strings.Replace(good, `"values"`, `"x1": 1, "x2": 2, "x3": 3, "values"`, 1)), config.Limits{MaxStrings: 4}, fault.ArtifactTooLarge, "max_strings"},
		{"metadata strings over max_string_bytes", []byte(good), config.Limits{MaxStringBytes: 10}, fault.ArtifactTooLarge, "max_string_bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "bench.json")
			os.WriteFile(path, tt.data, 0o644)
			sink, x, err := extractFile(t, path, tt.lim)
			if err == nil {
				t.Fatalf("extracted %v", x.Rows)
			}
			fe := fault.As(err)
			if fe.Code != tt.code || !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("%s %v, want %s saying %q", fe.Code, err, tt.code, tt.msg)
			}
			if len(fe.Remediation) == 0 {
				t.Errorf("no remediation: %v", err)
			}
			if sink.Opened() != 0 {
				t.Fatalf("a refused file opened %d tables", sink.Opened())
			}
		})
	}
}

// TestOldVersions: format versions 6 and 5, as pyperf reads them: version
// 5 names values "samples" and benchmark metadata "common_metadata", and
// both store a warm-up's raw timing, divided here by loops × inner_loops.
func TestOldVersions(t *testing.T) {
	for _, tt := range []struct{ name, doc string }{
		{"6", `{"version": 6, "metadata": {"name": "b", "inner_loops": 2}, "benchmarks": [{"runs": [{"warmups": [[4, 16.0]], "values": [3.0]}]}]}`},
		{"5", `{"version": 5, "benchmarks": [{"common_metadata": {"name": "b", "inner_loops": 2}, "runs": [{"warmups": [[4, 16.0]], "samples": [3.0]}]}]}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Decode(strings.NewReader(tt.doc), config.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			r := s.Benchmarks[0].Runs[0]
			if s.Benchmarks[0].Name != "b" || r.Warmups[0].Value != 2 || len(r.Values) != 1 || r.Values[0] != 3 || r.InnerLoops != 2 {
				t.Fatalf("%+v", s.Benchmarks[0])
			}
		})
	}
	if _, err := Decode(strings.NewReader(`{"version": 5, "benchmarks": [{"common_metadata": {"name": "b"}, "runs": [{"values": [3.0]}]}]}`), config.Limits{}); err == nil {
		t.Fatal("a version 5 run without samples was read")
	}
}

// TestAcceptsByContent: pyperf's shapes are accepted whatever the name;
// other JSON (speedscope, hyperfine, a Chrome trace) and text are not.
func TestAcceptsByContent(t *testing.T) {
	for _, tt := range []struct {
		name string
		data []byte
		want bool
	}{
		{"sorted keys", []byte(`{"benchmarks":[{"metadata":{"name":"x"},"runs":[{"values":[1]}]}],"version":"1.0"}`), true},
		{"version first", []byte(good), true},
		{"gzipped", gz(good), true},
		{"broken but pyperf", []byte(`{"version": "1.0", "benchmarks": [{"runs": [{"values": [NaN]}]}]}`), true},
		{"hyperfine", []byte(`{"results": [{"command": "x", "times": [1]}]}`), false},
		{"speedscope", []byte(`{"$schema": "https://www.speedscope.app/file-format-schema.json", "shared": {"frames": []}}`), false},
		{"trace", []byte(`{"traceEvents": []}`), false},
		{"unknown version", []byte(`{"version": "9", "benchmarks": []}`), false},
		{"text", []byte("BenchmarkX 10 5 ns/op\n"), false},
	} {
		path := filepath.Join(t.TempDir(), "f")
		os.WriteFile(path, tt.data, 0o644)
		if got := (&Extractor{}).Accepts(adapter.ExtractInput{Path: path, Head: tt.data}); got != tt.want {
			t.Errorf("%s: accepted %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestCapsBeforeAllocating: a file over the value cap fails at the first
// value past it, with the count reached.
func TestCapsBeforeAllocating(t *testing.T) {
	_, err := Decode(strings.NewReader(manyValues(MaxValues+5)), config.Limits{})
	var tl *tooLarge
	if !errors.As(err, &tl) || tl.n != MaxValues+1 || tl.max != MaxValues {
		t.Fatalf("%v", err)
	}
}
