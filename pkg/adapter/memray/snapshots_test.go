package memray

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/flameox/flameox/pkg/adapter/adaptertest"
	"github.com/flameox/flameox/pkg/config"
)

func TestSubset(t *testing.T) {
	for _, c := range []struct {
		name           string
		n, maxAt, keep int
		want           []int
	}{
		{"empty", 0, -1, 5, []int{}},
		{"fewer than keep", 4, 2, 5, []int{0, 1, 2, 3}},
		{"exactly keep", 5, 4, 5, []int{0, 1, 2, 3, 4}},
		{"max on the grid", 9, 4, 5, []int{0, 2, 4, 6, 8}},
		{"max off the grid", 9, 3, 5, []int{0, 2, 3, 5, 8}},
		{"max first", 100, 0, 3, []int{0, 49, 99}},
		{"max last", 100, 99, 3, []int{0, 49, 99}},
		{"max off, keep 3", 100, 10, 3, []int{0, 10, 99}},
		{"keep below 3 is 3", 100, 10, 1, []int{0, 10, 99}},
		// 5 is off the grid of 4 (0 3 6 9) but on that of 3 (0 5 10).
		{"max on the smaller grid", 11, 5, 4, []int{0, 5, 10}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := Subset(c.n, c.maxAt, c.keep); !slices.Equal(got, c.want) {
				t.Fatalf("Subset(%d, %d, %d) = %v, want %v", c.n, c.maxAt, c.keep, got, c.want)
			}
		})
	}
	// Every size around the bound: at most keep, ascending, distinct,
	// first, last and the maximum included, and evenly spaced apart from
	// the maximum (gaps differ by at most one, the maximum's two aside).
	for _, n := range []int{MaxSnapshots - 1, MaxSnapshots, MaxSnapshots + 1, 2*MaxSnapshots - 1, 2458, 12345, 360000} {
		for _, maxAt := range []int{0, 1, n / 3, 1772, n - 2, n - 1} {
			if maxAt >= n {
				continue
			}
			got := Subset(n, maxAt, MaxSnapshots)
			if len(got) > MaxSnapshots || len(got) > n || got[0] != 0 || got[len(got)-1] != n-1 || !slices.Contains(got, maxAt) {
				t.Fatalf("n=%d max=%d: %d kept, first %d, last %d", n, maxAt, len(got), got[0], got[len(got)-1])
			}
			if n > MaxSnapshots && len(got) < MaxSnapshots-1 {
				t.Fatalf("n=%d max=%d: only %d kept", n, maxAt, len(got))
			}
			var gaps []int
			for i := 1; i < len(got); i++ {
				if got[i] == got[i-1] {
					t.Fatalf("n=%d max=%d: ordinal %d twice", n, maxAt, got[i])
				}
				if got[i] <= got[i-1] {
					t.Fatalf("n=%d max=%d: not ascending at %d", n, maxAt, i)
				}
				if got[i] != maxAt && got[i-1] != maxAt {
					gaps = append(gaps, got[i]-got[i-1])
				}
			}
			if len(gaps) > 0 && slices.Max(gaps)-slices.Min(gaps) > 1 {
				t.Fatalf("n=%d max=%d: gaps from %d to %d", n, maxAt, slices.Min(gaps), slices.Max(gaps))
			}
		}
	}
}

func TestParseCount(t *testing.T) {
	for in, want := range map[string]int64{"0": 0, "7": 7, "1700000000000": 1700000000000, "9223372036854775807": math.MaxInt64,
		"9223372036854775808": -1, "99999999999999999999": -1, "": -1, "-1": -1, "+1": -1, "1 ": -1, "0x10": -1} {
		v, ok := parseCount([]byte(in))
		if ok != (want >= 0) || (ok && v != want) {
			t.Errorf("parseCount(%q) = %d, %v; want %d", in, v, ok, want)
		}
	}
}

func TestMaxSnapshotRecords(t *testing.T) {
	for _, c := range []struct{ in, want int64 }{{0, config.DefaultLimits().MaxSamples}, {5, 5}, {math.MaxInt64, math.MaxInt32}} {
		if got := maxSnapshotRecords(config.Limits{MaxSamples: c.in}); got != c.want {
			t.Errorf("max_samples %d: %d, want %d", c.in, got, c.want)
		}
	}
}

// snapshotFile is a file as driverScript writes it: heap rises to max at
// ordinal maxAt, then falls.
func snapshotFile(n, maxAt int) string {
	var b strings.Builder
	b.WriteString(snapshotHeader + "\n")
	for i := range n {
		heap := 1000 + i
		if i == maxAt {
			heap = 1 << 30
		}
		fmt.Fprintf(&b, "%d,%d,%d\n", 1700000000000+int64(10*i), 1<<20, heap)
	}
	return b.String()
}

func TestParseSnapshots(t *testing.T) {
	small := config.DefaultLimits()
	small.MaxSamples = 3
	tiny := config.DefaultLimits()
	tiny.MaxDecompressedBytes = 40
	def := config.DefaultLimits()
	for _, c := range []struct {
		name      string
		in        string
		lim       config.Limits
		keep      int
		err       string
		total     int
		ordinals  []int
		maxAt     int
		firstTime int64
	}{
		{name: "empty list", in: snapshotHeader + "\n", lim: def, keep: 5, maxAt: -1},
		{name: "all kept", in: snapshotFile(4, 2), lim: def, keep: 5, total: 4, ordinals: []int{0, 1, 2, 3}, maxAt: 2, firstTime: 1700000000000},
		{name: "subset", in: snapshotFile(9, 3), lim: def, keep: 5, total: 9, ordinals: []int{0, 2, 3, 5, 8}, maxAt: 3, firstTime: 1700000000000},
		{name: "no trailing newline", in: strings.TrimSuffix(snapshotFile(2, 0), "\n"), lim: def, keep: 5, total: 2, ordinals: []int{0, 1}, maxAt: 0, firstTime: 1700000000000},
		{name: "empty file", in: "", lim: def, keep: 5, err: "no header"},
		{name: "bad header", in: "time,rss\n1,2\n", lim: def, keep: 5, err: "header"},
		{name: "two fields", in: snapshotHeader + "\n1,2\n", lim: def, keep: 5, err: "line 2: 2 fields"},
		{name: "negative heap", in: snapshotHeader + "\n1,2,-3\n", lim: def, keep: 5, err: "heap \"-3\""},
		{name: "not a number", in: snapshotHeader + "\n1,x,3\n", lim: def, keep: 5, err: "rss \"x\""},
		{name: "overflow", in: snapshotHeader + "\n99999999999999999999,1,1\n", lim: def, keep: 5, err: "time_ms"},
		{name: "four fields", in: snapshotHeader + "\n1,2,3,4\n", lim: def, keep: 5, err: "line 2: 4 fields"},
		{name: "empty field", in: snapshotHeader + "\n1,,3\n", lim: def, keep: 5, err: "rss \"\""},
		{name: "long line", in: snapshotHeader + "\n" + strings.Repeat("1", 200) + "\n", lim: def, keep: 5, err: "longer than"},
		{name: "too many", in: snapshotFile(4, 0), lim: small, keep: 5, err: "limits.max_samples"},
		{name: "too many bytes", in: snapshotFile(4, 0), lim: tiny, keep: 5, err: "limits.max_decompressed_bytes"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := ParseSnapshots(strings.NewReader(c.in), c.lim, c.keep)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var ords []int
			for _, k := range s.Kept {
				ords = append(ords, k.Ordinal)
				if k.Time != 1700000000000+int64(10*k.Ordinal) || k.RSS != 1<<20 {
					t.Errorf("snapshot %+v", k)
				}
			}
			if s.Total != c.total || !slices.Equal(ords, c.ordinals) || s.MaxHeap != c.maxAt || s.First.Time != c.firstTime {
				t.Fatalf("total %d ordinals %v max %d first %+v; want %d %v %d %d", s.Total, ords, s.MaxHeap, s.First, c.total, c.ordinals, c.maxAt, c.firstTime)
			}
		})
	}
}

// snapshotRows are the memory.snapshot.heap and .rss rows by ordinal.
type snapshotRow struct {
	ordinal   int
	time      int64
	heap, rss int64
}

func snapshotRows(t *testing.T, rows []map[string]any) []snapshotRow {
	t.Helper()
	byOrd := map[int]*snapshotRow{}
	var order []int
	for _, r := range rows {
		name := r["name"].(string)
		if !strings.HasPrefix(name, "memory.snapshot.") {
			continue
		}
		d := r["dimensions"].(map[string]string)
		n, err := strconv.Atoi(d["snapshot"])
		tm, err2 := strconv.ParseInt(d["time"], 10, 64)
		if err != nil || err2 != nil || d["time_unit"] != "ms" || d["source"] != "memray FileReader.get_memory_snapshots" ||
			r["subject"] != "snapshot "+d["snapshot"] || fmt.Sprint(r["value_index"]) != d["snapshot"] ||
			r["unit"] != "bytes" || r["aggregation"] != "value" {
			t.Fatalf("row %v", r)
		}
		s, ok := byOrd[n]
		if !ok {
			s = &snapshotRow{ordinal: n, time: tm, heap: -1, rss: -1}
			byOrd[n] = s
			order = append(order, n)
		}
		switch name {
		case "memory.snapshot.heap":
			s.heap = r["value_int"].(int64)
		case "memory.snapshot.rss":
			s.rss = r["value_int"].(int64)
		default:
			t.Fatalf("row %s", name)
		}
	}
	out := make([]snapshotRow, 0, len(order))
	for _, n := range order {
		if byOrd[n].heap < 0 || byOrd[n].rss <= 0 {
			t.Fatalf("snapshot %d: %+v", n, *byOrd[n])
		}
		out = append(out, *byOrd[n])
	}
	return out
}

// TestExtractSnapshots captures phases.py under the real memray (it
// grows its heap in four steps, holds the peak, then frees it) and
// checks the timeline against memray stats on the same capture.
func TestExtractSnapshots(t *testing.T) {
	needMemray(t)
	capture := filepath.Join(t.TempDir(), "phases.bin")
	py, _ := RealSystem().LookPath("python3")
	if _, err := RealSystem().Output(context.Background(), []string{py, "-m", "memray", "run", "-o", capture, "-f", "-q", "testdata/phases.py"}, time.Minute); err != nil {
		t.Fatal(err)
	}
	peak := int64(memrayStats(t, capture)["metadata"].(map[string]any)["peak_memory"].(float64))
	sink := adaptertest.NewSink(t, ExtractorName, ExtractorVersion)
	x, err := New().Extractors()[0].Extract(context.Background(), input(t, capture), sink)
	if err != nil {
		t.Fatal(err)
	}
	rows := sink.Rows(t, "measurements")
	snaps := snapshotRows(t, rows)
	// phases.py runs for more than a quarter of a second: memray ticks
	// every 10 ms, so there are tens of snapshots, all kept.
	if len(snaps) < 10 {
		t.Fatalf("%d snapshots", len(snaps))
	}
	var maxHeap int64
	for i, s := range snaps {
		if s.ordinal != i || (i == 0 && s.time != 0) || (i > 0 && s.time < snaps[i-1].time) {
			t.Fatalf("snapshot %d is %+v after %+v", i, s, snaps[max(i-1, 0)])
		}
		maxHeap = max(maxHeap, s.heap)
	}
	// A snapshot's heap is the heap memray had tracked at that tick, and
	// memray stats' peak is the largest it ever was, so no snapshot
	// exceeds the peak. phases.py holds its peak across several ticks,
	// so the largest snapshot is the peak, less at most the few
	// transient objects the interpreter holds at the tick.
	if maxHeap > peak || maxHeap < peak-64<<10 {
		t.Errorf("largest snapshot heap %d, memray stats' peak %d", maxHeap, peak)
	}
	// The four growth phases (2 MiB each) and the release show.
	if last := snaps[len(snaps)-1].heap; last > maxHeap-6<<20 {
		t.Errorf("last heap %d, largest %d: the release is not seen", last, maxHeap)
	}
	var steps int
	for i := 1; i < len(snaps); i++ {
		if snaps[i].heap-snaps[i-1].heap >= 1<<20 {
			steps++
		}
	}
	if steps < 2 {
		t.Errorf("%d steps of growth in %+v", steps, snaps)
	}
	if !slices.ContainsFunc(x.Limitations, func(l string) bool {
		return strings.HasPrefix(l, "memory.snapshot.heap is the heap memray had tracked")
	}) {
		t.Errorf("limitations %q", x.Limitations)
	}
	if got := measurementsOf(rows)["memory.peak_heap"]; got != peak {
		t.Errorf("memory.peak_heap %d, memray stats %d", got, peak)
	}
}

// TestExtractSnapshotsRefused: when memray.FileReader refuses the
// snapshots (here: the driver is pointed at a file that is not there),
// the extraction still succeeds, without memory.snapshot.* rows and with
// the reason as a limitation.
func TestExtractSnapshotsRefused(t *testing.T) {
	needMemray(t)
	real := RealSystem()
	sys := System{LookPath: real.LookPath, Output: func(ctx context.Context, argv []string, timeout time.Duration) ([]byte, error) {
		var spec map[string]any
		if err := json.Unmarshal([]byte(argv[3]), &spec); err != nil {
			t.Fatal(err)
		}
		spec["snapshots"].(map[string]any)["capture"] = filepath.Join(t.TempDir(), "gone.bin")
		b, _ := json.Marshal(spec)
		argv = slices.Clone(argv)
		argv[3] = string(b)
		return real.Output(ctx, argv, timeout)
	}}
	sink := adaptertest.NewSink(t, ExtractorName, ExtractorVersion)
	x, err := (&Extractor{Sys: sys}).Extract(context.Background(), input(t, "testdata/retain.bin"), sink)
	if err != nil {
		t.Fatal(err)
	}
	rows := sink.Rows(t, "measurements")
	if s := snapshotRows(t, rows); len(s) != 0 {
		t.Errorf("%d snapshots", len(s))
	}
	if measurementsOf(rows)["memory.peak_heap"] == 0 {
		t.Errorf("no peak")
	}
	if !slices.ContainsFunc(x.Limitations, func(l string) bool {
		return strings.HasPrefix(l, "no timeline (memory.snapshot.* rows): memray.FileReader(...).get_memory_snapshots() refused: ") && strings.Contains(l, "gone.bin")
	}) {
		t.Errorf("limitations %q", x.Limitations)
	}
}

// TestExtractSnapshotsSubset captures ticks.py (memray.Tracker sampling
// every millisecond, so more snapshots than MaxSnapshots) and checks the
// subset against memray's own full list, read beside the extractor.
func TestExtractSnapshotsSubset(t *testing.T) {
	needMemray(t)
	capture := filepath.Join(t.TempDir(), "ticks.bin")
	py, _ := RealSystem().LookPath("python3")
	// memray's ticks come late on a busy machine: a longer capture when
	// one holds too few snapshots.
	var total, maxAt int
	var maxHeap int64
	for _, secs := range []string{"2.5", "6", "15"} {
		if _, err := RealSystem().Output(context.Background(), []string{py, "testdata/ticks.py", capture, secs}, time.Minute); err != nil {
			t.Fatal(err)
		}
		out, err := RealSystem().Output(context.Background(), []string{py, "-c", `import sys, memray
with memray.FileReader(sys.argv[1], max_memory_records=1 << 30) as r:
    s = list(r.get_memory_snapshots())
m = max(range(len(s)), key=lambda i: s[i].heap)
print(len(s), m, s[m].heap)`, capture}, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := fmt.Sscan(string(out), &total, &maxAt, &maxHeap); err != nil {
			t.Fatalf("%q: %v", out, err)
		}
		if total > MaxSnapshots {
			break
		}
		t.Logf("memray took %d snapshots in %s s", total, secs)
	}
	if total <= MaxSnapshots {
		t.Fatalf("memray took %d snapshots of ticks.py, not more than %d: the machine was too busy for its 1 ms ticks", total, MaxSnapshots)
	}
	peak := int64(memrayStats(t, capture)["metadata"].(map[string]any)["peak_memory"].(float64))
	sink := adaptertest.NewSink(t, ExtractorName, ExtractorVersion)
	x, err := New().Extractors()[0].Extract(context.Background(), input(t, capture), sink)
	if err != nil {
		t.Fatal(err)
	}
	snaps := snapshotRows(t, sink.Rows(t, "measurements"))
	if len(snaps) < MaxSnapshots-1 || len(snaps) > MaxSnapshots {
		t.Fatalf("%d snapshots kept of %d", len(snaps), total)
	}
	var ords []int
	var got int64
	for i, s := range snaps {
		if i > 0 && (s.ordinal <= snaps[i-1].ordinal || s.time < snaps[i-1].time) {
			t.Fatalf("snapshot %+v after %+v", s, snaps[i-1])
		}
		ords = append(ords, s.ordinal)
		got = max(got, s.heap)
	}
	if !slices.Equal(ords, Subset(total, maxAt, MaxSnapshots)) {
		t.Errorf("ordinals %v…, want Subset(%d, %d)", ords[:5], total, maxAt)
	}
	// The largest heap of memray's list is kept; no snapshot exceeds
	// memray stats' peak (ticks.py holds its peak across several ticks).
	if got != maxHeap || got > peak {
		t.Errorf("largest kept heap %d, memray's largest %d, memray stats' peak %d", got, maxHeap, peak)
	}
	want := fmt.Sprintf("%d of memray's %d memory snapshots are kept", len(snaps), total)
	if !slices.ContainsFunc(x.Limitations, func(l string) bool { return strings.HasPrefix(l, want) }) {
		t.Errorf("limitations %q, want %q", x.Limitations, want)
	}
}
