package analysis

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"math/big"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/flameox/flameox/pkg/adapter/all"
	"github.com/flameox/flameox/pkg/capture/capturetest"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/internal/testenv"
	"github.com/flameox/flameox/pkg/query"
	"github.com/flameox/flameox/pkg/workspace"
	"github.com/spf13/pflag"
)

const traceFixture = "../adapter/trace/testdata/hta__mi250_rocm6.2_kineto.json.gz"

// allWindow pages through a window and returns every slice.
func allWindow(t *testing.T, ws *workspace.Workspace, req TraceWindowRequest) ([]TraceSlice, *TraceWindowResult) {
	t.Helper()
	var out []TraceSlice
	var first *TraceWindowResult
	for range 1000 {
		res, err := TraceWindow(context.Background(), ws, req)
		if err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = res
		}
		if res.Total != first.Total {
			t.Fatalf("total moved from %d to %d", first.Total, res.Total)
		}
		out = append(out, res.Slices...)
		if !res.Truncated {
			return out, first
		}
		if res.Cursor == "" || res.Returned != req.Limit {
			t.Fatalf("truncated page without a cursor or short: %+v", res.Page)
		}
		req.Cursor = res.Cursor
	}
	t.Fatal("too many pages")
	return nil, nil
}

// windowSlice is a slice of the trace as an independent reading gives it.
type windowSlice struct {
	start, end int64
	name       string
}

// independentSlices reads the complete events of a gzipped trace with
// encoding/json into generic values, exact decimal times through big.Rat,
// relative to the earliest ts of any event but metadata.
func independentSlices(t *testing.T, path string) []windowSlice {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(z)
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var doc struct {
		TraceEvents []map[string]any `json:"traceEvents"`
	}
	if err := dec.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	ns := func(v any) int64 {
		n, _ := v.(json.Number)
		r, ok := new(big.Rat).SetString(string(n))
		if !ok {
			return 0
		}
		r.Mul(r, big.NewRat(1000, 1))
		return new(big.Int).Quo(r.Num(), r.Denom()).Int64()
	}
	var origin int64
	first := true
	var out []windowSlice
	for _, e := range doc.TraceEvents {
		if e["ph"] == "M" || e["ts"] == nil {
			continue
		}
		ts := ns(e["ts"])
		if first || ts < origin {
			origin, first = ts, false
		}
		if e["ph"] == "X" {
			name, _ := e["name"].(string)
			out = append(out, windowSlice{ts, ts + max(ns(e["dur"]), 0), name})
		}
	}
	for i := range out {
		out[i].start -= origin
		out[i].end -= origin
	}
	return out
}

// TestTraceWindow: pages of a window hold each overlapping slice once, in
// (start, track, id) order, and agree with an independent reading of the
// JSON; a track filter keeps one track; a cursor is bound to its window.
func TestTraceWindow(t *testing.T) {
	ws, runs := importProfiles(t, traceFixture)
	want := independentSlices(t, traceFixture)
	res, err := TraceWindow(context.Background(), ws, TraceWindowRequest{Input: runs[0], Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	art := res.Source.ArtifactID
	if len(res.Tracks) == 0 || res.SpanNS <= 0 {
		t.Fatalf("tracks %v span %d", res.Tracks, res.SpanNS)
	}
	for _, w := range []struct{ start, end int64 }{{0, 0}, {0, res.SpanNS / 3}, {res.SpanNS / 3, res.SpanNS/3 + res.SpanNS/50}, {res.SpanNS - 1000, res.SpanNS + 1}} {
		got, first := allWindow(t, ws, TraceWindowRequest{Input: art, StartNS: w.start, EndNS: w.end, Limit: 7})
		end := w.end
		if end == 0 {
			end = res.SpanNS + 1
		}
		var exp []windowSlice
		for _, s := range want {
			if s.start < end && (s.end > w.start || (s.end == s.start && s.start >= w.start)) {
				exp = append(exp, s)
			}
		}
		if int(first.Total) != len(exp) || len(got) != len(exp) {
			t.Fatalf("window %v: total %d, %d paged, independent %d", w, first.Total, len(got), len(exp))
		}
		seen := map[string]bool{}
		for i, s := range got {
			if seen[s.StackID] {
				t.Fatalf("slice %s twice", s.StackID)
			}
			seen[s.StackID] = true
			if i > 0 {
				p := got[i-1]
				if p.StartNS > s.StartNS || (p.StartNS == s.StartNS && (p.TrackID > s.TrackID || (p.TrackID == s.TrackID && p.StackID >= s.StackID))) {
					t.Fatalf("out of order at %d", i)
				}
			}
		}
		key := func(name string, start, end int64) string { return name + "\x00" + itoa(start) + "\x00" + itoa(end) }
		var a, b []string
		for _, s := range got {
			a = append(a, key(s.Name, s.StartNS, s.EndNS))
		}
		for _, s := range exp {
			b = append(b, key(s.name, s.start, s.end))
		}
		sort.Strings(a)
		sort.Strings(b)
		if !slices.Equal(a, b) {
			t.Fatalf("window %v: slices differ from the independent reading", w)
		}
	}
	// Device work is marked; a track filter keeps its track.
	all, _ := allWindow(t, ws, TraceWindowRequest{Input: art, Limit: 1000})
	var device *TraceSlice
	for i := range all {
		if all[i].Category == "kernel" {
			device = &all[i]
			if !all[i].Device {
				t.Errorf("kernel %q not marked as device work", all[i].Name)
			}
		}
	}
	if device == nil {
		t.Fatal("no kernel in the trace")
	}
	one, first := allWindow(t, ws, TraceWindowRequest{Input: art, Track: itoa(int64(device.TrackID)), Limit: 50})
	for _, s := range one {
		if s.TrackID != device.TrackID {
			t.Fatalf("track filter %d let track %d through", device.TrackID, s.TrackID)
		}
	}
	if first.Total == 0 || first.Total >= int64(len(all)) {
		t.Fatalf("track %d: %d of %d slices", device.TrackID, first.Total, len(all))
	}
	byName, _ := allWindow(t, ws, TraceWindowRequest{Input: art, Track: device.Thread, Limit: 50})
	if len(byName) == 0 || byName[0].Thread != device.Thread {
		t.Fatalf("thread filter %q: %d slices", device.Thread, len(byName))
	}
	// Errors: a stale cursor, an empty window, an input that is no trace.
	page, err := TraceWindow(context.Background(), ws, TraceWindowRequest{Input: art, Limit: 2})
	if err != nil || page.Cursor == "" {
		t.Fatalf("%v %+v", err, page)
	}
	_, err = TraceWindow(context.Background(), ws, TraceWindowRequest{Input: art, StartNS: 5, Limit: 2, Cursor: page.Cursor})
	if !fault.Is(err, fault.StaleCursor) {
		t.Fatalf("other window's cursor: %v", err)
	}
	_, err = TraceWindow(context.Background(), ws, TraceWindowRequest{Input: art, StartNS: 10, EndNS: 10})
	if !fault.Is(err, fault.InvalidArguments) {
		t.Fatalf("empty window: %v", err)
	}
	_, err = TraceWindow(context.Background(), ws, TraceWindowRequest{Input: "sha256:" + strings.Repeat("0", 64)})
	if !fault.Is(err, fault.NotFound) {
		t.Fatalf("unknown artifact: %v", err)
	}
}

// TestTraceWindowFlags: every request field but the input has its flag.
func TestTraceWindowFlags(t *testing.T) {
	fs := pflag.NewFlagSet("trace window", pflag.ContinueOnError)
	var r TraceWindowRequest
	r.Flags(fs)
	if err := fs.Parse([]string{"--start", "5", "--end", "9", "--track", "3", "--limit", "4", "--cursor", "c"}); err != nil {
		t.Fatal(err)
	}
	r.Input = "x"
	want := TraceWindowRequest{Input: "x", StartNS: 5, EndNS: 9, Track: "3", Limit: 4, Cursor: "c"}
	if !reflect.DeepEqual(r, want) {
		t.Fatalf("%+v", r)
	}
	var flags int
	fs.VisitAll(func(*pflag.Flag) { flags++ })
	if n := reflect.TypeOf(r).NumField() - 1; flags != n {
		t.Fatalf("%d flags for %d fields", flags, n)
	}
}

// TestViewerOfTrace: flameox open on a trace names Perfetto UI.
func TestViewerOfTrace(t *testing.T) {
	ws, runs := importProfiles(t, traceFixture)
	res, err := TraceWindow(context.Background(), ws, TraceWindowRequest{Input: runs[0], Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	plan, err := Viewer(context.Background(), ws, all.Registry(), res.Source.ArtifactID)
	if err != nil {
		t.Fatal(err)
	}
	if plan.Tool != "Perfetto UI" || !strings.Contains(plan.Note, "chrome://tracing") || !strings.Contains(plan.Note, "uploads nothing") {
		t.Fatalf("plan %+v", plan)
	}
	// By run id: the run has no profile, so its trace is opened.
	byRun, err := Viewer(context.Background(), ws, all.Registry(), runs[0])
	if err != nil {
		t.Fatal(err)
	}
	if byRun.ArtifactID != res.Source.ArtifactID || byRun.Tool != "Perfetto UI" {
		t.Fatalf("by run: %+v", byRun)
	}
}

// BenchmarkTraceWindow is one page of a 10 ms window of the largest
// published chrome-trace fixture (docs/traces.md).
func BenchmarkTraceWindow(b *testing.B) {
	p := filepath.Join("..", "..", "..", "shared", "fixtures", "chrome-trace", "hta__ns_resolution_rank-0.pt.trace.json.gz")
	if _, err := os.Stat(p); err != nil {
		testenv.Unable(b, "shared fixtures", "absent", "%v", err)
	}
	ws, runs := capturetest.Published(b, "", p)
	req := TraceWindowRequest{Input: runs[0], StartNS: 100_000_000, EndNS: 110_000_000, Limit: 100}
	if res, err := TraceWindow(context.Background(), ws, req); err != nil || res.Returned == 0 {
		b.Fatalf("%v %+v", err, res)
	}
	b.Run("cold", func(b *testing.B) {
		for b.Loop() {
			if _, err := TraceWindow(context.Background(), ws, req); err != nil {
				b.Fatal(err)
			}
		}
	})
	// warm: as the MCP server runs it, with the reader cache it keeps
	// while HEAD stays put (query.Readers).
	b.Run("warm", func(b *testing.B) {
		ctx := query.WithReaders(context.Background(), query.NewReaders())
		for b.Loop() {
			if _, err := TraceWindow(ctx, ws, req); err != nil {
				b.Fatal(err)
			}
		}
	})
}
