package hyperfine

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/flameox/flameox/pkg/adapter"
	"github.com/flameox/flameox/pkg/adapter/gotest"
	"github.com/flameox/flameox/pkg/adapter/stacks"
	"github.com/flameox/flameox/pkg/config"
	"github.com/flameox/flameox/pkg/fault"
)

// TestFixtures imports every real hyperfine file and checks its rows
// against an independent reading of the file: the same number of rows per
// measurement, and each run's wall time and exit code where the file has
// them, under the run's index and the command.
func TestFixtures(t *testing.T) {
	t.Run("testdata", func(t *testing.T) {
		for _, p := range local(t) {
			t.Run(filepath.Base(p), func(t *testing.T) { checkFile(t, p) })
		}
	})
	t.Run("shared", func(t *testing.T) {
		for _, p := range shared(t) {
			t.Run(filepath.Base(p), func(t *testing.T) { checkFile(t, p) })
		}
	})
}

func checkFile(t *testing.T, path string) {
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	in := inputOf(t, path)
	e := NewExtractor()
	if !e.Accepts(in) {
		t.Fatal("a real hyperfine file is not accepted")
	}
	sink := newSink(t)
	x, err := e.Extract(context.Background(), in, sink)
	if err != nil {
		t.Fatal(err)
	}
	want := counts(t, raw)
	got := map[string]int{}
	rows := sink.Rows(t, "measurements")
	for _, r := range rows {
		got[r["name"].(string)]++
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("rows per measurement %v, the file's own %v", got, want)
	}
	total := 0
	for _, n := range want {
		total += n
	}
	if x.Rows["measurements"] != int64(total) || len(rows) != total {
		t.Fatalf("reported %d rows, read back %d, want %d", x.Rows["measurements"], len(rows), total)
	}
	var f struct {
		Results []struct {
			Command    string            `json:"command"`
			Times      []float64         `json:"times"`
			ExitCodes  []*int            `json:"exit_codes"`
			Parameters map[string]string `json:"parameters"`
		} `json:"results"`
	}
	json.Unmarshal(raw, &f)
	ids := map[any]bool{}
	for _, r := range rows {
		ids[r["measurement_id"]] = true
		d := r["dimensions"].(map[string]string)
		var k int
		fmt.Sscan(d["result_index"], &k)
		res := f.Results[k]
		if !strings.HasPrefix(r["subject"].(string), res.Command) || r["scope"] != "benchmark" || r["is_warmup"] != false {
			t.Fatalf("row %v for result %d (%s)", r, k, res.Command)
		}
		for name, v := range res.Parameters {
			if d["parameter."+name] != v {
				t.Fatalf("row %v lacks parameter %s=%s", r, name, v)
			}
		}
		switch r["name"] {
		case nameWall:
			i := r["value_index"].(int32)
			if r["value_float"] != res.Times[i] || r["unit"] != "sec" || r["aggregation"] != "value" {
				t.Fatalf("wall time row %v, want times[%d] = %v", r, i, res.Times[i])
			}
			if res.ExitCodes != nil && (*res.ExitCodes[i] == 0) != (r["outcome"] == outcomeSucceeded) {
				t.Fatalf("row %v: exit code %d", r, *res.ExitCodes[i])
			}
		case nameExit:
			i := r["value_index"].(int32)
			if r["value_int"] != int64(*res.ExitCodes[i]) || r["unit"] != "code" {
				t.Fatalf("exit code row %v, want %d", r, *res.ExitCodes[i])
			}
		case nameUser, nameSystem:
			if r["aggregation"] != "mean" || r["loop_count"] != uint64(len(res.Times)) || r["value_index"] != nil {
				t.Fatalf("cpu time row %v", r)
			}
		}
	}
	if len(ids) != len(rows) {
		t.Fatalf("%d measurement ids for %d rows", len(ids), len(rows))
	}
	lim := strings.Join(x.Limitations, "\n")
	if strings.Contains(lim, "disagrees") {
		t.Fatalf("a real file's summaries disagree with its times: %s", lim)
	}
	if !strings.Contains(lim, "hyperfine's means") {
		t.Fatalf("limitations do not say user/system are means: %s", lim)
	}
}

// TestDuplicateCommands: `hyperfine -L n 1,2 'seq {n}' true` exports two
// results named "true"; their subjects carry the parameter, as hyperfine
// prints them.
func TestDuplicateCommands(t *testing.T) {
	sink := newSink(t)
	if _, err := NewExtractor().Extract(context.Background(), inputOf(t, "testdata/hyperfine-1.15-params.json"), sink); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, r := range sink.Rows(t, "measurements") {
		seen[r["subject"].(string)] = true
	}
	want := map[string]bool{"seq 1": true, "seq 2": true, "true (n = 1)": true, "true (n = 2)": true}
	if !reflect.DeepEqual(seen, want) {
		t.Fatalf("subjects %v, want %v", seen, want)
	}
	got := subjects([]*bench{{command: "a"}, {command: "a"}, {command: "b"}})
	if !reflect.DeepEqual(got, []string{"a #1", "a #2", "b"}) {
		t.Fatalf("identical results: %v", got)
	}
}

// TestNewerFields: memory_usage_byte (hyperfine 1.20), per-run user and
// system arrays, a null exit code, the old unnamed parameter and an
// unknown field.
func TestNewerFields(t *testing.T) {
	file := `{"results":[{"command":"sleep 0.1","mean":0.2,"stddev":0.1414213562373095,"median":0.2,"user":[0.01,0.02],"system":0.005,
"min":0.1,"max":0.3,"times":[0.1,0.3],"memory_usage_byte":[1024,4096],"exit_codes":[0,null],"parameter":"x","future":{"a":[1,2]}}]}`
	path := filepath.Join(t.TempDir(), "r.json")
	os.WriteFile(path, []byte(file), 0o644)
	sink := newSink(t)
	in := inputOf(t, path)
	x, err := NewExtractor().Extract(context.Background(), in, sink)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]any{}
	for _, r := range sink.Rows(t, "measurements") {
		v := r["value_float"]
		if v == nil {
			v = r["value_int"]
		}
		got[r["name"].(string)] = append(got[r["name"].(string)], v, r["value_index"], r["outcome"])
		if r["dimensions"].(map[string]string)["parameter"] != "x" {
			t.Errorf("row %v lacks the parameter", r)
		}
	}
	i0, i1 := int32(0), int32(1)
	want := map[string][]any{
		nameWall:   {0.1, i0, "succeeded", 0.3, i1, "signaled"},
		nameExit:   {int64(0), i0, "succeeded"},
		nameMaxRSS: {int64(1024), i0, "succeeded", int64(4096), i1, "signaled"},
		nameUser:   {0.01, i0, "succeeded", 0.02, i1, "signaled"},
		nameSystem: {0.005, nil, nil},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("rows %v\nwant %v", got, want)
	}
	lim := strings.Join(x.Limitations, "\n")
	for _, s := range []string{"RUSAGE_CHILDREN", "ended by a signal", "before 1.11", "fields not read: future", "1 user or system time arrays"} {
		if !strings.Contains(lim, s) {
			t.Errorf("limitations lack %q: %s", s, lim)
		}
	}
	if strings.Contains(lim, "disagrees") {
		t.Errorf("consistent summaries reported as disagreeing: %s", lim)
	}
}

// TestSummaryDisagrees: a file whose median is not its times' median is
// imported, and a limitation names the disagreement.
func TestSummaryDisagrees(t *testing.T) {
	raw, _ := os.ReadFile("testdata/1brc__hyperfine.json")
	bad := strings.Replace(string(raw), `"median": 11.81813333352`, `"median": 12.5`, 1)
	path := filepath.Join(t.TempDir(), "r.json")
	os.WriteFile(path, []byte(bad), 0o644)
	x, err := NewExtractor().Extract(context.Background(), inputOf(t, path), newSink(t))
	if err != nil {
		t.Fatal(err)
	}
	if lim := strings.Join(x.Limitations, "\n"); !strings.Contains(lim, "the file's median 12.5 disagrees with the median of its 3 times (11.81813333352)") {
		t.Fatalf("limitations: %s", lim)
	}
}

// TestRefuses: hostile or broken files fail with a structured fault and
// open no table.
func TestRefuses(t *testing.T) {
	raw, _ := os.ReadFile("testdata/1brc__hyperfine.json")
	one := func(fields string) string {
		return `{"results":[{"command":"x",` + fields + `}]}`
	}
	many := func(n int) string {
		var b strings.Builder
		b.WriteString(`{"results":[{"command":"x","times":[`)
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString("0.5")
		}
		b.WriteString(`]}]}`)
		return b.String()
	}
	small := config.Limits{MaxSamples: 1000, MaxJSONDepth: 8, MaxStringBytes: 64, MaxDecompressedBytes: 1 << 20}
	for _, tt := range []struct {
		name, content string
		limits        config.Limits
		code          fault.Code
		msg           string
	}{
		{"NaN literal", one(`"times":[NaN]`), config.Limits{}, fault.ArtifactParseFailed, "invalid JSON"},
		{"NaN string", one(`"times":["NaN"]`), config.Limits{}, fault.ArtifactParseFailed, `results[0].times[0]: want a number, got "NaN"`},
		{"infinite", one(`"times":[1e400]`), config.Limits{}, fault.ArtifactParseFailed, "not a finite number"},
		{"negative time", one(`"times":[0.1,-0.2]`), config.Limits{}, fault.ArtifactParseFailed, "results[0].times[1]: negative time -0.2"},
		{"negative user", one(`"times":[0.1],"user":-1`), config.Limits{}, fault.ArtifactParseFailed, "results[0].user: negative time"},
		{"exit codes short", one(`"times":[0.1,0.2],"exit_codes":[0]`), config.Limits{}, fault.ArtifactParseFailed, "results[0].exit_codes: 1 values for 2 runs"},
		{"memory long", one(`"times":[0.1],"memory_usage_byte":[1,2]`), config.Limits{}, fault.ArtifactParseFailed, "memory_usage_byte: 2 values for 1 runs"},
		{"user runs short", one(`"times":[0.1,0.2],"user":[0.1]`), config.Limits{}, fault.ArtifactParseFailed, "results[0].user: 1 values for 2 runs"},
		{"exit code too big", one(`"times":[0.1],"exit_codes":[4294967296]`), config.Limits{}, fault.ArtifactParseFailed, "want an exit code"},
		{"memory negative", one(`"times":[0.1],"memory_usage_byte":[-1]`), config.Limits{}, fault.ArtifactParseFailed, "want a byte count"},
		{"no times", one(`"mean":1`), config.Limits{}, fault.ArtifactParseFailed, `no "times"`},
		{"empty times", one(`"times":[]`), config.Limits{}, fault.ArtifactParseFailed, "times: empty"},
		{"times twice", one(`"times":[1],"times":[2]`), config.Limits{}, fault.ArtifactParseFailed, `key "times" appears twice`},
		{"nested time", one(`"times":[[1]]`), config.Limits{}, fault.ArtifactParseFailed, "want a value"},
		{"parameter not string", one(`"times":[1],"parameters":{"n":1}`), config.Limits{}, fault.ArtifactParseFailed, "results[0].parameters.n: want a string"},
		{"no command", `{"results":[{"times":[1]}]}`, config.Limits{}, fault.ArtifactParseFailed, `no "command"`},
		{"empty results", `{"results":[]}`, config.Limits{}, fault.ArtifactParseFailed, "holds no benchmark"},
		{"no results", `{"benchmarks":[]}`, config.Limits{}, fault.ArtifactParseFailed, `no "results"`},
		{"trailing data", string(raw) + "{}", config.Limits{}, fault.ArtifactParseFailed, "data after the end"},
		{"truncated", string(raw[:len(raw)/2]), config.Limits{}, fault.ArtifactParseFailed, "truncated JSON"},
		{"empty", "", config.Limits{}, fault.ArtifactParseFailed, "truncated"},
		{"not json", "\x00\x01\xff", config.Limits{}, fault.ArtifactParseFailed, "invalid JSON"},
		{"too many values", many(1001), small, fault.ArtifactTooLarge, "limit max_samples"},
		{"too deep", `{"results":[{"command":"x","times":[1],"a":[[[[[[[[[]]]]]]]]]}]}`, small, fault.ArtifactTooLarge, "limit max_json_depth"},
		{"long command", `{"results":[{"command":"` + strings.Repeat("x", 65) + `","times":[1]}]}`, small, fault.ArtifactTooLarge, "limit max_string_bytes"},
		{"too many bytes", many(300000), small, fault.ArtifactTooLarge, "limit max_decompressed_bytes"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "r.json")
			os.WriteFile(path, []byte(tt.content), 0o644)
			in := inputOf(t, path)
			in.Limits = tt.limits
			sink := newSink(t)
			x, err := NewExtractor().Extract(context.Background(), in, sink)
			fe := fault.As(err)
			if err == nil || fe.Code != tt.code || !strings.Contains(fe.Message, tt.msg) {
				t.Fatalf("Extract = %v, %v; want %s with %q", x, err, tt.code, tt.msg)
			}
			if sink.Opened() != 0 {
				t.Fatal("a table was opened for a refused file")
			}
			if tt.code == fault.ArtifactTooLarge && (fe.Details["limit_key"] == "" || len(fe.Remediation) == 0) {
				t.Fatalf("no limit key or remedy: %+v", fe)
			}
		})
	}
}

// TestMillionRuns: 10^6 runs import within the default limits, with one
// row each.
func TestMillionRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 10^6 rows")
	}
	var b strings.Builder
	b.WriteString(`{"results":[{"command":"x","times":[`)
	for i := range 1_000_000 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%d.5e-3", i%10)
	}
	b.WriteString(`]}]}`)
	path := filepath.Join(t.TempDir(), "r.json")
	os.WriteFile(path, []byte(b.String()), 0o644)
	x, err := NewExtractor().Extract(context.Background(), inputOf(t, path), newSink(t))
	if err != nil || x.Rows["measurements"] != 1_000_000 {
		t.Fatalf("%v %v", x, err)
	}
}

// TestAccepts: hyperfine files are accepted by content, whatever their
// name; other JSON formats and the other extractors' inputs are not, and
// the other extractors do not claim a hyperfine file.
func TestAccepts(t *testing.T) {
	dir := t.TempDir()
	for name, tt := range map[string]struct {
		content string
		want    bool
	}{
		"fixture":    {string(mustRead(t, "testdata/1brc__hyperfine.json")), true},
		"times only": {`{"results":[{"times":[1],"command":"x"}]}`, true},
		"no times":   {`{"results":[{"command":"x","mean":1}]}`, false},
		"pyperf":     {`{"version":"1.0","benchmarks":[{"runs":[{"values":[1.0]}]}],"metadata":{}}`, false},
		"speedscope": {`{"$schema":"https://www.speedscope.app/file-format-schema.json","profiles":[],"shared":{"frames":[]}}`, false},
		"test2json":  {`{"Action":"start","Package":"p"}` + "\n", false},
		"gobench":    {"BenchmarkX-8 10 5 ns/op\n", false},
		"array":      {`[{"command":"x","times":[1]}]`, false},
		"binary":     {"\x1f\x8b\x08\x00", false},
		// Beyond the 4 KiB head staging hands over, which decides alone
		// only when it rules a JSON object out.
		"late":     {strings.Repeat(" ", 5000) + `{"results":[{"times":[1],"command":"x"}]}`, true},
		"late bom": {strings.Repeat(" ", 4095) + "\ufeff" + `{"results":[{"times":[1],"command":"x"}]}`, true},
	} {
		path := filepath.Join(dir, strings.ReplaceAll(name, " ", "_"))
		os.WriteFile(path, []byte(tt.content), 0o644)
		in := adapter.ExtractInput{Path: path, Head: []byte(tt.content[:min(len(tt.content), 4<<10)])}
		if got := NewExtractor().Accepts(in); got != tt.want {
			t.Errorf("%s: Accepts = %v, want %v", name, got, tt.want)
		}
	}
	// The registry the lead builds (pkg/adapter/all) with this extractor:
	// only it accepts a hyperfine file.
	reg := adapter.NewRegistry(gotest.New(), stacks.New()).WithExtractors(stacks.NewExtractor(), NewExtractor())
	for _, p := range local(t) {
		var accepted []string
		for _, e := range reg.Extractors() {
			if e.Accepts(inputOf(t, p)) {
				accepted = append(accepted, e.Name())
			}
		}
		if !reflect.DeepEqual(accepted, []string{ExtractorName}) {
			t.Errorf("%s: accepted by %v", p, accepted)
		}
	}
}

func mustRead(t *testing.T, p string) []byte {
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
