package gotest

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/flameox/flameox/pkg/adapter"
	"github.com/flameox/flameox/pkg/internal/testenv"
	"golang.org/x/perf/benchunit"
)

// sharedGobench holds the gobench fixtures as collected; testdata/ has
// byte-identical copies (README.md there).
const sharedGobench = "../../../../shared/fixtures/gobench"

// wantRow is one measurement a benchmark line should give, read from the
// text without benchfmt's reader.
type wantRow struct {
	line   int
	name   string // full name after "Benchmark", GOMAXPROCS suffix included
	config map[string]string
	iters  uint64
	unit   string
	orig   string // the unit as written, when tidying changed it
	value  float64
	index  int32
}

// expected reads benchmark text the way the Go benchmark format
// (golang.org/design/14313-benchmark-format) defines it: a configuration
// line "key: value" (key starting with a lower-case letter, without
// spaces or upper-case letters) sets key for every later result, an empty
// value deletes it; a result line "Benchmark<name> <iters> (<value>
// <unit>)+" gives one row per unit (units tidied by benchunit, as
// benchstat shows them), repeated units and non-finite values dropped.
// Each row's index counts the earlier results of the same package, full
// name and configuration.
func expected(text string) []wantRow {
	config := map[string]string{}
	seen := map[string]int32{}
	var out []wantRow
	for n, line := range strings.Split(text, "\n") {
		if len(line)+1 > maxLine {
			continue
		}
		line = strings.TrimSuffix(line, "\r")
		if key, val, ok := configLine(line); ok {
			if val == "" {
				delete(config, key)
			} else {
				config[key] = val
			}
			continue
		}
		rest, ok := strings.CutPrefix(line, "Benchmark")
		if !ok {
			continue
		}
		sp := strings.IndexFunc(rest, unicode.IsSpace)
		if sp < 0 {
			continue
		}
		name, f := rest[:sp], strings.Fields(rest[sp:])
		iters, err := strconv.ParseUint(first(f), 10, 64)
		if len(f) < 3 || len(f)%2 == 0 || err != nil || iters < 1 {
			continue
		}
		var rows []wantRow
		units := map[string]bool{}
		for i := 1; i < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				rows = nil
				break
			}
			tv, tu := benchunit.Tidy(v, f[i+1])
			if math.IsNaN(tv) || math.IsInf(tv, 0) || units[tu] {
				continue
			}
			units[tu] = true
			r := wantRow{line: n + 1, name: name, config: copyMap(config), iters: iters, unit: tu, value: tv}
			if tu != f[i+1] {
				r.orig = f[i+1]
			}
			rows = append(rows, r)
		}
		if len(rows) == 0 {
			continue
		}
		key := config["pkg"] + "\x00" + name + "\x00" + mapKey(config)
		for i := range rows {
			rows[i].index = seen[key]
		}
		seen[key]++
		out = append(out, rows...)
	}
	return out
}

// configLine parses "key: value" as the format defines it.
func configLine(line string) (key, val string, ok bool) {
	k, v, found := strings.Cut(line, ":")
	if !found || k == "" || !unicode.IsLower(rune(k[0])) || strings.IndexFunc(k, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsUpper(r) }) >= 0 {
		return "", "", false
	}
	if v == "" {
		return k, "", true
	}
	if v[0] != ' ' && v[0] != '\t' {
		return "", "", false
	}
	return k, strings.TrimLeft(v, " \t"), true
}

func copyMap(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func mapKey(m map[string]string) string {
	var b strings.Builder
	for _, k := range sortedKeys(m) {
		b.WriteString(k + "=" + m[k] + "\x00")
	}
	return b.String()
}

func sortedKeys(m map[string]string) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	for i := 1; i < len(ks); i++ {
		for j := i; j > 0 && ks[j] < ks[j-1]; j-- {
			ks[j], ks[j-1] = ks[j-1], ks[j]
		}
	}
	return ks
}

// TestSharedFixtures: every gobench fixture collected for the project
// (../shared/fixtures/gobench, and so its copy in testdata/) imports with
// one row per value of the file's own, in file order, each carrying the
// configuration keys in force at its line (goos, goarch, pkg, cpu and user
// keys, which change mid-file in the benchseries file) as dimensions, its
// iterations, its unit tidied as benchstat does (the original unit kept),
// and its -count repetition as value_index.
func TestSharedFixtures(t *testing.T) {
	paths, _ := filepath.Glob(filepath.Join(sharedGobench, "*"))
	if len(paths) == 0 {
		testenv.Unable(t, "shared fixtures", "absent", "%s", sharedGobench)
	}
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			raw, _ := os.ReadFile(path)
			if copy, err := os.ReadFile(filepath.Join("testdata", filepath.Base(path))); err != nil || !bytes.Equal(copy, raw) {
				t.Fatalf("testdata/ has no identical copy: %v", err)
			}
			want := expected(string(raw))
			sink := newSink(t)
			in := adapter.ExtractInput{RunID: "r", ArtifactID: "sha256:f", Path: path, Head: raw[:min(len(raw), 4096)]}
			if _, _, err := extract(context.Background(), in, sink); err != nil {
				t.Fatal(err)
			}
			rows := sink.Rows(t, "measurements")
			if len(rows) != len(want) {
				t.Fatalf("%d rows, the file has %d values", len(rows), len(want))
			}
			keys, changes, maxIndex := map[string]bool{}, 0, int32(0)
			var prev map[string]string
			for i, r := range rows {
				w := want[i]
				d := r["dimensions"].(map[string]string)
				for k, v := range w.config {
					keys[k] = true
					if d[k] != v {
						t.Fatalf("line %d (%s %s): dimension %s = %q, the file's config says %q", w.line, w.name, w.unit, k, d[k], v)
					}
				}
				for k := range d {
					if _, ok := w.config[k]; !ok && !strings.HasPrefix(k, "name.") && k != "gomaxprocs" && k != "orig_unit" {
						t.Fatalf("line %d: dimension %s is not in force there", w.line, k)
					}
				}
				if prev != nil && mapKey(prev) != mapKey(w.config) {
					changes++
				}
				prev = w.config
				if r["unit"] != w.unit || r["value_float"] != w.value || d["orig_unit"] != w.orig || r["loop_count"] != w.iters ||
					r["value_index"] != w.index || r["worker_id"] != nilIfEmpty(w.config["pkg"]) {
					t.Fatalf("line %d (%s): row %v, want %+v", w.line, w.name, r, w)
				}
				maxIndex = max(maxIndex, w.index)
			}
			t.Logf("%d rows, config keys %v, %d config changes between rows, value_index up to %d", len(rows), sortedKeys(keysMap(keys)), changes, maxIndex)
		})
	}
}

func keysMap(m map[string]bool) map[string]string {
	out := map[string]string{}
	for k := range m {
		out[k] = ""
	}
	return out
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// TestSeriesApart: the same benchmark under two configurations (two
// toolchains in one file, the way benchseries files hold them) is two
// series: each row keeps its own toolchain, value_index restarts, and the
// ids differ. A key deleted by an empty value is gone from later rows.
func TestSeriesApart(t *testing.T) {
	text := `goos: linux
pkg: example.com/p
toolchain: base
BenchmarkA-8  10  100 ns/op
BenchmarkA-8  10  110 ns/op
toolchain: tip
BenchmarkA-8  10  90 ns/op
BenchmarkA-8  10  95 ns/op
BenchmarkA-8  10  96 ns/op
toolchain:
BenchmarkA-8  10  97 ns/op
BenchmarkA-4  10  120 ns/op
`
	path := filepath.Join(t.TempDir(), "bench.txt")
	os.WriteFile(path, []byte(text), 0o644)
	sink := newSink(t)
	if _, _, err := extract(context.Background(), adapter.ExtractInput{RunID: "r", ArtifactID: "a", Path: path, Head: []byte(text)}, sink); err != nil {
		t.Fatal(err)
	}
	type got struct {
		toolchain, procs string
		index            int32
	}
	var rows []got
	ids := map[any]bool{}
	for _, r := range sink.Rows(t, "measurements") {
		d := r["dimensions"].(map[string]string)
		rows = append(rows, got{d["toolchain"], d["gomaxprocs"], r["value_index"].(int32)})
		ids[r["measurement_id"]] = true
		if d["goos"] != "linux" || r["worker_id"] != "example.com/p" || r["subject"] != "A" {
			t.Errorf("row %v", r)
		}
	}
	want := []got{{"base", "8", 0}, {"base", "8", 1}, {"tip", "8", 0}, {"tip", "8", 1}, {"tip", "8", 2}, {"", "8", 0}, {"", "4", 0}}
	if len(rows) != len(want) || len(ids) != len(want) {
		t.Fatalf("rows %v (%d ids), want %v", rows, len(ids), want)
	}
	for i := range want {
		if rows[i] != want[i] {
			t.Fatalf("rows %v, want %v", rows, want)
		}
	}
}
