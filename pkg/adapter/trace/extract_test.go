package trace

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flameox/flameox/pkg/adapter"
	"github.com/flameox/flameox/pkg/fault"
)

func extract(t testing.TB, in adapter.ExtractInput) (*adapter.Extraction, map[string][]map[string]any) {
	t.Helper()
	sink := newSink(t)
	x, err := NewExtractor().Extract(context.Background(), in, sink)
	if err != nil {
		t.Fatal(err)
	}
	tables := map[string][]map[string]any{}
	for _, name := range []string{"frames", "frame_measurements", "call_edges", "stacks", "measurements"} {
		tables[name] = sink.Rows(t, name)
		if int64(len(tables[name])) != x.Rows[name] {
			t.Errorf("%s: %d rows read back, extraction says %d", name, len(tables[name]), x.Rows[name])
		}
	}
	return x, tables
}

// TestFixtures imports every chrome-trace fixture and checks its slices
// and per-name totals against an independent reading of the same JSON.
func TestFixtures(t *testing.T) {
	paths := local(t)
	paths = append(paths, shared(t, largest))
	for _, p := range paths {
		t.Run(filepath.Base(p), func(t *testing.T) {
			in := inputOf(t, p)
			if !NewExtractor().Accepts(in) {
				t.Fatal("not accepted")
			}
			x, tables := extract(t, in)
			small := !strings.Contains(p, largest)
			n, ops := independent(t, plain(t, p), small)
			if got := len(tables["stacks"]); got != n || n == 0 {
				t.Fatalf("stacks rows = %d, independent slices = %d", got, n)
			}
			counts := measurementsBy(tables["measurements"], NameOpCount)
			totals := measurementsBy(tables["measurements"], NameOpTotal)
			selfs := measurementsBy(tables["measurements"], NameOpSelf)
			if len(counts) != len(ops) {
				t.Errorf("%d names with a trace.op.count, independent reading %d", len(counts), len(ops))
			}
			for k, o := range ops {
				if counts[k] != o.count || totals[k] != o.total {
					t.Errorf("%q/%q: count %d total %d, independent %d %d", k.name, k.cat, counts[k], totals[k], o.count, o.total)
				}
				if small && selfs[k] != o.self {
					t.Errorf("%q/%q: self %d, independent %d", k.name, k.cat, selfs[k], o.self)
				}
			}
			checkStacks(t, tables)
			if len(x.Limitations) == 0 {
				t.Error("no limitations")
			}
		})
	}
}

// checkStacks checks the stacks rows' shape: leaf = last frame id, every
// frame id a frame, times non-negative, a track, and per track the chain
// of a child extends its parent's.
func checkStacks(t *testing.T, tables map[string][]map[string]any) {
	t.Helper()
	frames := map[string]map[string]any{}
	for _, f := range tables["frames"] {
		frames[f["frame_id"].(string)] = f
	}
	for _, s := range tables["stacks"] {
		ids := s["frame_ids"].([]string)
		if len(ids) == 0 || ids[len(ids)-1] != s["leaf_frame_id"] {
			t.Fatalf("leaf %v of %v", s["leaf_frame_id"], ids)
		}
		for _, id := range ids {
			if frames[id] == nil {
				t.Fatalf("frame %s not in frames", id)
			}
		}
		if s["start_ns"].(int64) < 0 || s["duration_ns"].(int64) < 0 || s["track_id"].(uint64) == 0 {
			t.Fatalf("row %v", s)
		}
		if s["metric"] != MetricWall || s["unit"] != UnitNanos {
			t.Fatalf("metric %v unit %v", s["metric"], s["unit"])
		}
	}
}

func TestKinetoDetails(t *testing.T) {
	_, tables := extract(t, inputOf(t, "testdata/hta__alexnet_a100_trace.json.gz"))
	// Kernels are device work: language "device" on the frame, device
	// "true" and class "device" on the totals.
	var kernels int
	for _, f := range tables["frames"] {
		if f["module"] == "kernel" {
			kernels++
			if f["language"] != "device" {
				t.Errorf("kernel frame language %v", f["language"])
			}
		}
		if f["module"] == "cpu_op" && f["language"] != "host" {
			t.Errorf("cpu_op frame language %v", f["language"])
		}
	}
	if kernels == 0 {
		t.Fatal("no kernel frames")
	}
	var deviceTotals, flows int
	for _, r := range tables["measurements"] {
		d := dimsOf(r)
		if r["name"] == NameOpTotal && d["category"] == "kernel" {
			deviceTotals++
			if d["device"] != "true" || d["class"] != "device" {
				t.Errorf("kernel total dims %v", d)
			}
		}
		if r["name"] == NameFlows && r["subject"] == "ac2g" {
			flows++
			if r["value_int"].(int64) == 0 {
				t.Error("no ac2g flows bound")
			}
		}
	}
	if deviceTotals == 0 || flows != 1 {
		t.Fatalf("kernel totals %d, ac2g flow rows %d", deviceTotals, flows)
	}
	// Flow edges go from cuda_runtime launches to device work.
	fr := map[string]map[string]any{}
	for _, f := range tables["frames"] {
		fr[f["frame_id"].(string)] = f
	}
	var launches int
	for _, e := range tables["call_edges"] {
		if e["metric"] != MetricFlow {
			continue
		}
		if fr[e["parent_frame_id"].(string)]["module"] == "cuda_runtime" && fr[e["child_frame_id"].(string)]["language"] == "device" {
			launches++
		}
	}
	if launches == 0 {
		t.Error("no launch → device flow edge")
	}
	// Thread and process names come from the metadata.
	var stream, gpu bool
	for _, s := range tables["stacks"] {
		stream = stream || strings.HasPrefix(s["thread"].(string), "stream 7")
		gpu = gpu || s["process"] == "python3.10"
	}
	if !stream || !gpu {
		t.Error("thread/process names not from metadata")
	}
}

// TestNanosecondTimes: the ns_resolution trace says displayTimeUnit "ns"
// while its ts and dur stay microseconds with three decimals; they are
// read digit by digit, exactly.
func TestNanosecondTimes(t *testing.T) {
	raw := []byte(`{"displayTimeUnit":"ns","traceEvents":[
	{"ph":"X","name":"a","pid":1,"tid":1,"ts":1712195495519689.0,"dur":63.813},
	{"ph":"X","name":"b","pid":1,"tid":1,"ts":1712195495519695.8,"dur":0.415}]}`)
	_, tables := extract(t, inputOf(t, writeFile(t, raw)))
	got := map[string][2]int64{}
	for _, s := range tables["stacks"] {
		got[s["leaf_frame_id"].(string)] = [2]int64{s["start_ns"].(int64), s["duration_ns"].(int64)}
	}
	want := map[string][2]int64{hashID("trace-frame/v1", "", "a"): {0, 63813}, hashID("trace-frame/v1", "", "b"): {6800, 415}}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: %v, want %v", k, got[k], w)
		}
	}
}

func TestMicros(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
		err  bool
	}{
		{"0", 0, false}, {"1", 1000, false}, {"1.5", 1500, false}, {"0.415", 415, false}, {"0.0004", 0, false},
		{"0.0005", 1, false}, {"-2.25", -2250, false}, {"1712195495519695.8", 1712195495519695800, false},
		{"1e3", 1000000, false}, {"1.5E-3", 2, false}, {"1e300", 0, true}, {"9999999999999999", 0, true},
	} {
		got, ok, err := micros(json.Number(c.in))
		if (err != nil) != c.err || !ok || (!c.err && got != c.want) {
			t.Errorf("micros(%s) = %d, %v, %v; want %d (error %v)", c.in, got, ok, err, c.want, c.err)
		}
	}
}

func TestAcceptsByContent(t *testing.T) {
	for _, c := range []struct {
		data string
		want bool
	}{
		{`{"traceEvents":[]}`, true},
		{`{"schemaVersion":1,"deviceProperties":[{"name":"x"}],"traceEvents":[{"ph":"X"}]}`, true},
		{`[{"name":"a","ph":"B","ts":1}]`, true},
		{`[{"name":"a","ts":1}]`, false},
		{`{"results":[{"command":"x","times":[1]}]}`, false},
		{`{"traceEvents":{}}`, false},
		{`not json`, false},
		// Past the first 4 KiB, which Accepts decodes alone first.
		{strings.Repeat(" ", 5000) + `{"traceEvents":[]}`, true},
		{strings.Repeat(" ", 4095) + "\ufeff" + `{"traceEvents":[]}`, true}, // a byte order mark the prefix cuts
		{strings.Repeat("\n", 5000) + "x", false},
	} {
		for _, zip := range []bool{false, true} {
			data := []byte(c.data)
			if zip {
				data = gz(t, data)
			}
			if got := NewExtractor().Accepts(adapter.ExtractInput{Path: writeFile(t, data)}); got != c.want {
				t.Errorf("Accepts(%s, gzip %v) = %v", c.data, zip, got)
			}
		}
	}
}

func wantFault(t *testing.T, err error, code fault.Code, sub string) {
	t.Helper()
	if !fault.Is(err, code) {
		t.Fatalf("got %v, want %s", err, code)
	}
	if !strings.Contains(fault.As(err).Message, sub) {
		t.Fatalf("message %q lacks %q", fault.As(err).Message, sub)
	}
}
