package trace

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/flameox/flameox/pkg/config"
	"github.com/flameox/flameox/pkg/fault"
)

// TestHostile: odd and broken inputs give a clear error, or rows whose
// strings are inert and whose counts say what was not stored.
func TestHostile(t *testing.T) {
	valid := []byte(`{"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":10,"dur":5},{"ph":"X","name":"b","pid":1,"tid":1,"ts":11,"dur":1}]}`)
	truncated := gz(t, valid)
	truncated = truncated[:len(truncated)-6]
	for _, c := range []struct {
		name   string
		data   []byte
		code   fault.Code // "" for success
		err    string     // in the error's message
		slices int
		lim    string // in a limitation
		check  func(t *testing.T, tables map[string][]map[string]any)
	}{
		{name: "truncated gzip", data: truncated, code: fault.ArtifactParseFailed, err: "ends early"},
		{name: "truncated json", data: valid[:40], code: fault.ArtifactParseFailed, err: "ends early"},
		{name: "not a trace", data: []byte(`{"a":1}`), code: fault.ArtifactParseFailed, err: "no traceEvents"},
		{name: "duplicated key", data: []byte(`{"traceEvents":[],"traceEvents":[]}`), code: fault.ArtifactParseFailed, err: "twice"},
		{name: "ts not a number", data: []byte(`{"traceEvents":[{"ph":"X","ts":"soon"}]}`), code: fault.ArtifactParseFailed, err: "traceEvents[0]"},
		{name: "name not a string", data: []byte(`{"traceEvents":[{"ph":"X","ts":1,"name":{"x":1}}]}`), code: fault.ArtifactParseFailed, err: "traceEvents[0]"},
		{name: "ts out of range", data: []byte(`{"traceEvents":[{"ph":"X","ts":1e300,"dur":1}]}`), code: fault.ArtifactParseFailed, err: "range"},
		{name: "trailing garbage", data: append(append([]byte{}, valid...), "xyz"...), code: fault.ArtifactParseFailed, err: "after the end"},
		{name: "unsorted", data: []byte(`[{"ph":"X","name":"b","pid":1,"tid":1,"ts":11,"dur":1},{"ph":"E","pid":1,"tid":1,"ts":30},{"ph":"X","name":"a","pid":1,"tid":1,"ts":10,"dur":5},{"ph":"B","name":"c","pid":1,"tid":1,"ts":20}]`),
			slices: 3, check: func(t *testing.T, tables map[string][]map[string]any) {
				// b (11..12) nests in a (10..15) although written first.
				for _, s := range tables["stacks"] {
					if s["start_ns"] == int64(1000) && len(s["frame_ids"].([]string)) != 2 {
						t.Errorf("b's chain %v", s["frame_ids"])
					}
				}
			}},
		{name: "negative duration", data: []byte(`[{"ph":"X","name":"a","pid":1,"tid":1,"ts":10,"dur":-5}]`), slices: 1, lim: "negative dur"},
		{name: "unknown phases", data: []byte(`[{"ph":"X","name":"a","ts":1,"dur":1},{"ph":"Q","ts":2},{"ph":"O","ts":3,"name":"obj"}]`), slices: 1, lim: `"Q" ×1`},
		{name: "unmatched begin and end", data: []byte(`[{"ph":"E","pid":1,"tid":1,"ts":1},{"ph":"B","name":"x","pid":1,"tid":1,"ts":2},{"ph":"B","name":"y","pid":1,"tid":2,"ts":2},{"ph":"E","pid":1,"tid":2,"ts":4}]`), slices: 1, lim: "1 begin (B) events have no end"},
		{name: "unclosed array", data: []byte(`[{"ph":"X","name":"a","ts":1,"dur":1},`), slices: 1, lim: "not closed"},
		{name: "invalid utf-8", data: []byte("[{\"ph\":\"X\",\"name\":\"bad\xff\xfename\",\"ts\":1,\"dur\":1}]"), slices: 1,
			check: func(t *testing.T, tables map[string][]map[string]any) {
				if fn := tables["frames"][0]["function"]; fn != "bad\uFFFD\uFFFDname" {
					t.Errorf("function %q", fn)
				}
			}},
		{name: "terminal escapes", data: []byte(`[{"ph":"X","name":"\u001b[31mred\u001b]0;title\u0007","cat":"\u001b[2J","ts":1,"dur":1}]`), slices: 1,
			check: func(t *testing.T, tables map[string][]map[string]any) {
				// Stored as written (the evidence is the name); output quotes it.
				if fn := tables["frames"][0]["function"]; fn != "\x1b[31mred\x1b]0;title\a" {
					t.Errorf("function %q", fn)
				}
			}},
		{name: "counters and instants", data: []byte(`{"traceEvents":[{"ph":"C","name":"mem","pid":1,"ts":1,"args":{"used":10,"free":"x"}},{"ph":"C","name":"mem","pid":1,"ts":3,"args":{"used":12}},{"ph":"i","name":"mark","pid":1,"tid":1,"ts":2,"s":"g"},{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":3}]}`),
			slices: 1, lim: "1 counter values are not numbers",
			check: func(t *testing.T, tables map[string][]map[string]any) {
				var counters, instants int
				for _, r := range tables["measurements"] {
					switch r["name"] {
					case NameCounter:
						counters++
						if d := dimsOf(r); d["series"] != "used" || d["time_ns"] == "" {
							t.Errorf("counter dims %v", d)
						}
					case NameInstant:
						instants++
						if r["value_int"] != int64(1000) {
							t.Errorf("instant at %v", r["value_int"])
						}
					}
				}
				if counters != 2 || instants != 1 {
					t.Errorf("%d counter rows, %d instant rows", counters, instants)
				}
			}},
		{name: "async", data: []byte(`[{"ph":"b","cat":"c","id":"0x1","name":"req","pid":1,"ts":1},{"ph":"b","cat":"c","id":"0x2","name":"req","pid":1,"ts":2},{"ph":"e","cat":"c","id":"0x1","pid":1,"ts":5},{"ph":"e","cat":"c","id":"0x2","pid":1,"ts":3}]`), slices: 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := inputOf(t, writeFile(t, c.data))
			if c.code != "" {
				_, err := NewExtractor().Extract(context.Background(), in, newSink(t))
				wantFault(t, err, c.code, c.err)
				return
			}
			x, tables := extract(t, in)
			if len(tables["stacks"]) != c.slices {
				t.Fatalf("%d slices, want %d", len(tables["stacks"]), c.slices)
			}
			if c.lim != "" && !contains(x.Limitations, c.lim) {
				t.Errorf("limitations lack %q: %q", c.lim, x.Limitations)
			}
			if c.check != nil {
				c.check(t, tables)
			}
		})
	}
}

// synthetic returns a trace of n complete events on 16 threads, each thread
// a sequence of nested pairs, with long names when pad > 0.
func synthetic(n, pad int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"traceEvents":[`)
	name := strings.Repeat("x", pad)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		ts := (i / 16) * 10
		if i%32 >= 16 {
			ts = (i/16-1)*10 + 2 // nested in the previous event of its thread
		}
		fmt.Fprintf(&b, `{"ph":"X","cat":"cpu_op","name":"op%d%s","pid":1,"tid":%d,"ts":%d.5,"dur":%d}`, i%100, name, i%16, ts, 5-(i%32/16)*3)
	}
	b.WriteString(`]}`)
	return b.Bytes()
}

// TestLarge: a 10^6-event trace and a 15 MB one import within the default
// limits; under smaller limits they are refused as too large, naming the
// limit, and a deep nesting is refused by the depth limit.
func TestLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("large inputs")
	}
	million := synthetic(1_000_000, 0)
	big := synthetic(42_000, 300)
	if len(big) < 15<<20 {
		t.Fatalf("the 15 MB trace has %d bytes", len(big))
	}
	for _, c := range []struct {
		name string
		data []byte
		lim  config.Limits
		key  string // refused with this limit, or "" for success
	}{
		{"million events", million, config.Limits{}, ""},
		{"15 MB", big, config.Limits{}, ""},
		{"million events, max_events", million, config.Limits{MaxEvents: 1000}, "limits.max_events"},
		{"15 MB, max_decompressed_bytes", big, config.Limits{MaxDecompressedBytes: 1 << 20}, "limits.max_decompressed_bytes"},
		{"15 MB, max_string_bytes", big, config.Limits{MaxStringBytes: 4 << 10}, "limits.max_string_bytes"},
		{"deep", deep(100_000), config.Limits{MaxStackDepth: 1000}, "limits.max_stack_depth"},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := inputOf(t, writeFile(t, c.data))
			in.Limits = c.lim
			if c.key != "" {
				_, err := NewExtractor().Extract(context.Background(), in, newSink(t))
				if !fault.Is(err, fault.ArtifactTooLarge) || fault.As(err).Details["limit_key"] != c.key {
					t.Fatalf("got %v, want ARTIFACT_TOO_LARGE on %s", err, c.key)
				}
				return
			}
			sink := newSink(t)
			x, err := NewExtractor().Extract(context.Background(), in, sink)
			if err != nil {
				t.Fatal(err)
			}
			n := bytes.Count(c.data, []byte(`"ph":"X"`))
			if x.Rows["stacks"] != int64(n) {
				t.Fatalf("%d stacks rows for %d events", x.Rows["stacks"], n)
			}
		})
	}
}

// deep is n nested B events closed in reverse.
func deep(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`[`)
	for i := range n {
		fmt.Fprintf(&b, `{"ph":"B","name":"f","pid":1,"tid":1,"ts":%d},`, i)
	}
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"ph":"E","pid":1,"tid":1,"ts":%d}`, 2*n-i)
	}
	b.WriteString(`]`)
	return b.Bytes()
}
