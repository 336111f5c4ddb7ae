package heaptrack

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/flameox/flameox/pkg/adapter"
	"github.com/flameox/flameox/pkg/adapter/adaptertest"
	"github.com/flameox/flameox/pkg/config"
	"github.com/flameox/flameox/pkg/internal/testenv"
)

// summaryOf runs heaptrack_print with its defaults on path, side by side
// with the extraction, and returns its summary lines by key.
func summaryOf(t *testing.T, exe, path string) map[string]string {
	t.Helper()
	out, err := exec.Command(exe, "-f", path).Output()
	if err != nil {
		t.Fatalf("heaptrack_print -f %s: %v", path, err)
	}
	want := map[string]string{}
	for _, l := range strings.Split(string(out), "\n") {
		for _, k := range summaryKeys {
			if v, ok := strings.CutPrefix(l, k.prefix); ok {
				want[k.key] = v
			}
		}
	}
	return want
}

// TestCostTypesAgreeWithSummary: every fixture's stacks of each cost type
// add up to what heaptrack_print's own summary says of the same file
// (leaked bytes, calls to allocation functions, temporary allocations),
// and its timeline is consistent with the peak and with what was left at
// exit. Where a bound leaves an output out (the largest fixture), the
// limitation says so.
func TestCostTypesAgreeWithSummary(t *testing.T) {
	exe := testenv.LookPath(t, "heaptrack_print")
	for _, path := range files(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			want := summaryOf(t, exe, path)
			x, rows, err := extract(t, path)
			if err != nil {
				t.Fatal(err)
			}
			totals := map[string]int64{}
			var snaps []map[string]any
			var peak int64
			for _, r := range rows {
				switch r["name"] {
				case "profile.total":
					totals[r["subject"].(string)] = r["value_int"].(int64)
				case MetricSnapshotHeap:
					snaps = append(snaps, r)
				case MetricPeakHeap:
					peak = r["value_int"].(int64)
				}
			}
			limits := strings.Join(x.Limitations, "\n")
			count := func(key string) string { v, _, _ := strings.Cut(want[key], " "); return v }
			checks := []struct {
				sampleType, got, want, skipped string
			}{
				{CostPeak.SampleType, FormatBytes(totals[CostPeak.SampleType]), want["peak_heap"], ""},
				{CostLeaked.SampleType, FormatBytes(totals[CostLeaked.SampleType]), want["leaked"], ""},
				{CostAllocs.SampleType, strconv.FormatInt(totals[CostAllocs.SampleType], 10), count("allocations"), "no alloc_objects"},
				{CostTemporary.SampleType, strconv.FormatInt(totals[CostTemporary.SampleType], 10), count("temporary_allocations"), "no alloc_objects or temporary_objects"},
			}
			for _, c := range checks {
				if _, ok := totals[c.sampleType]; !ok && c.skipped != "" && strings.Contains(limits, c.skipped) {
					t.Logf("%s not extracted: %s", c.sampleType, c.skipped)
					continue
				}
				// A total of zero has no stack; profile.total still says 0.
				if c.got != c.want {
					t.Errorf("%s stacks total %s, heaptrack_print's summary says %q", c.sampleType, c.got, c.want)
				}
			}
			if len(snaps) == 0 {
				if !strings.Contains(limits, "no timeline") {
					t.Fatalf("no timeline and no limitation saying why:\n%s", limits)
				}
				return
			}
			// The snapshots sample the heap at heaptrack's timestamp
			// records: none exceeds the peak, and the last (the program's
			// end) holds what was never freed, the leaks heaptrack's
			// suppressions matched included.
			var top int64
			last := snaps[0]
			for _, r := range snaps {
				top = max(top, r["value_int"].(int64))
				if r["value_index"].(int32) > last["value_index"].(int32) {
					last = r
				}
				d := r["dimensions"].(map[string]string)
				if d["time_unit"] != "ms" || d["source"] != "heaptrack_print --print-massif" || d["snapshot"] != strconv.Itoa(int(r["value_index"].(int32))) ||
					r["subject"] != "snapshot "+d["snapshot"] || r["aggregation"] != "value" || r["unit"] != "bytes" {
					t.Errorf("snapshot row %v", r)
				}
				if _, err := strconv.ParseInt(d["time"], 10, 64); err != nil {
					t.Errorf("snapshot time %q", d["time"])
				}
			}
			if top > peak || top == 0 {
				t.Errorf("largest snapshot %d bytes, peak heap %d", top, peak)
			}
			leaked, _ := ParseBytes(want["leaked"])
			suppressed, _ := ParseBytes(want["suppressed_leaks"])
			prec := Precision(want["leaked"]) + Precision(want["suppressed_leaks"])
			if end := last["value_int"].(int64); abs64(end-leaked-suppressed) > prec {
				t.Errorf("last snapshot %d bytes, heaptrack_print: %s leaked and %s suppressed", end, want["leaked"], want["suppressed_leaks"])
			}
		})
	}
}

// TestMassifExportParses: heaptrack_print's massif export with its
// default options (detailed snapshots, whose trees heaptrack_print 1.4
// writes before any backtrace has a cost and which are dropped) is read
// by the massif parser, every snapshot and heap as heaptrack_print wrote
// them.
func TestMassifExportParses(t *testing.T) {
	exe := testenv.LookPath(t, "heaptrack_print")
	for _, path := range files(t) {
		if strings.Contains(path, "heaptrack_gui") {
			continue // the export takes heaptrack_print long on it (see massifWork)
		}
		t.Run(filepath.Base(path), func(t *testing.T) {
			named, cleanup, err := nameByContent(path)
			if err != nil {
				t.Fatal(err)
			}
			defer cleanup()
			out := filepath.Join(t.TempDir(), "massif.out")
			if b, err := exec.Command(exe, "-f", named, "-M", out).CombinedOutput(); err != nil {
				t.Fatalf("heaptrack_print -M: %v\n%s", err, b)
			}
			text, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			f, err := os.Open(out)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			tl, err := ParseTimeline(f, config.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			var heaps, times []string
			for _, l := range strings.Split(string(text), "\n") {
				if v, ok := strings.CutPrefix(l, "mem_heap_B="); ok {
					heaps = append(heaps, v)
				}
				if v, ok := strings.CutPrefix(l, "time="); ok {
					f, _ := strconv.ParseFloat(v, 64)
					times = append(times, fmt.Sprintf("%.0f", f*1000))
				}
			}
			var got, gotTimes []string
			for _, s := range tl.File.Snapshots {
				got = append(got, strconv.FormatInt(s.Heap, 10))
				gotTimes = append(gotTimes, strconv.FormatInt(s.Time, 10))
			}
			if !slices.Equal(got, heaps) || !slices.Equal(gotTimes, times) {
				t.Fatalf("snapshots' heaps %v at %v ms, the file's %v at %v", got, gotTimes, heaps, times)
			}
			if len(tl.File.Tree) != 0 {
				t.Errorf("a tree was kept: %+v", tl.File.Tree)
			}
		})
	}
}

// TestParseTimelineRefuses: exports that are not heaptrack_print's, or
// beyond the limits, are refused with the reason.
func TestParseTimelineRefuses(t *testing.T) {
	snap := func(n int, time string) string {
		return fmt.Sprintf("#-----------\nsnapshot=%d\n#-----------\ntime=%s\nmem_heap_B=10\nmem_heap_extra_B=0\nmem_stacks_B=0\nheap_tree=empty\n", n, time)
	}
	good := snap(0, "0.001") + snap(1, "0.5") + "desc: heaptrack\ncmd: ./a\ntime_unit: s\n"
	tl, err := ParseTimeline(strings.NewReader(good), config.Limits{})
	if err != nil || len(tl.File.Snapshots) != 2 || tl.File.Snapshots[1].Time != 500 || tl.File.TimeUnit != "ms" {
		t.Fatalf("good export: %+v, %v", tl, err)
	}
	for _, c := range []struct {
		name, in string
		lim      config.Limits
		want     string
	}{
		{"empty", "", config.Limits{}, "no snapshot"},
		{"milliseconds", good + "time_unit: ms\n", config.Limits{}, "time_unit"},
		{"bad time", snap(0, "-1"), config.Limits{}, "not seconds"},
		{"nan", snap(0, "NaN"), config.Limits{}, "not seconds"},
		{"out of order", snap(1, "1"), config.Limits{}, "snapshot=1"},
		{"cut off", good[:len(good)-1], config.Limits{}, "truncated"},
		{"cut in a snapshot", snap(0, "0.001") + "#-----------\nsnapshot=1\n", config.Limits{}, "truncated"},
		{"snapshots", good, config.Limits{MaxSamples: 1}, "max_samples"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseTimeline(strings.NewReader(c.in), c.lim)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want one saying %q", err, c.want)
			}
		})
	}
}

func TestPick(t *testing.T) {
	heaps := func(n, top int) []int64 {
		h := make([]int64, n)
		for i := range h {
			h[i] = int64(i % 7)
		}
		if top >= 0 {
			h[top] = 100
		}
		return h
	}
	for _, c := range []struct {
		n, top, max int
		want        int // at least
	}{{5, 2, 10, 5}, {10, -1, 10, 10}, {11, 5, 10, 9}, {100000, 12345, 1000, 999}, {1001, 1000, 1000, 999}, {4, 1, 3, 3}} {
		got := Pick(heaps(c.n, c.top), c.max)
		if len(got) > c.max && c.n > c.max || len(got) < c.want || got[0] != 0 || got[len(got)-1] != c.n-1 || !slices.IsSorted(got) || slices.Compact(slices.Clone(got)) == nil {
			t.Errorf("Pick(%d, top %d, %d) = %d indices %v…, want %d or more from 0 to %d", c.n, c.top, c.max, len(got), got[:min(5, len(got))], c.want, c.n-1)
		}
		if c.top >= 0 && !slices.Contains(got, c.top) {
			t.Errorf("Pick(%d, top %d, %d) leaves out the largest", c.n, c.top, c.max)
		}
		for i := 1; i < len(got); i++ {
			if got[i] <= got[i-1] {
				t.Errorf("Pick(%d, top %d, %d): %d after %d", c.n, c.top, c.max, got[i], got[i-1])
			}
		}
	}
}

// TestTimelineBound: a long timeline is written as at most 1000 snapshots,
// the first, the last and the largest among them, and a limitation says
// how many of how many.
func TestTimelineBound(t *testing.T) {
	var b strings.Builder
	const n = 2500
	for i := range n {
		heap := i % 100
		if i == 1234 {
			heap = 1 << 20
		}
		fmt.Fprintf(&b, "#-----------\nsnapshot=%d\n#-----------\ntime=%g\nmem_heap_B=%d\nmem_heap_extra_B=0\nmem_stacks_B=0\nheap_tree=empty\n", i, 0.01*float64(i), heap)
	}
	tl, err := ParseTimeline(strings.NewReader(b.String()), config.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	sink := adaptertest.NewSink(t, ExtractorName, ExtractorVersion)
	w := &adapter.Measurements{Sink: sink, RunID: "run", ArtifactID: "art"}
	lim, err := writeTimeline(w, tl, "v 10400 3")
	if err != nil {
		t.Fatal(err)
	}
	rows := sink.Rows(t, "measurements")
	idx := map[int32]bool{}
	for _, r := range rows {
		idx[r["value_index"].(int32)] = true
	}
	if len(rows) > maxSnapshots || len(rows) < maxSnapshots-1 || !idx[0] || !idx[n-1] || !idx[1234] {
		t.Fatalf("%d rows; first %v, last %v, largest %v", len(rows), idx[0], idx[n-1], idx[1234])
	}
	if want := fmt.Sprintf("%d of %d snapshots", len(rows), n); !strings.Contains(strings.Join(lim, "\n"), want) {
		t.Fatalf("limitations %q, want one saying %q", lim, want)
	}
}

// TestTimelineFailureIsALimitation: when heaptrack_print cannot write its
// massif export, the rest of the evidence is published and a limitation
// says why there is no timeline.
func TestTimelineFailureIsALimitation(t *testing.T) {
	testenv.LookPath(t, "heaptrack_print")
	a := New()
	real := a.Sys.Output
	a.Sys.Output = func(ctx context.Context, argv []string, limit int64, timeout time.Duration) ([]byte, error) {
		if slices.Contains(argv, "--print-massif") {
			return nil, errors.New("heaptrack_print was killed by SIGSEGV")
		}
		return real(ctx, argv, limit, timeout)
	}
	path := "testdata/heaptrack.alloc.zst"
	head, _ := readHead(path, 4096)
	sink := adaptertest.NewSink(t, ExtractorName, ExtractorVersion)
	x, err := a.Extract(context.Background(), adapter.ExtractInput{RunID: "run", ArtifactID: "art", Path: path, Head: head}, sink)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range sink.Rows(t, "measurements") {
		if r["name"] == MetricSnapshotHeap {
			t.Fatalf("a snapshot row without a timeline: %v", r)
		}
		if r["name"] == MetricLeaked {
			n++
		}
	}
	if n != 1 || !strings.Contains(strings.Join(x.Limitations, "\n"), "no timeline (memory.snapshot.heap): heaptrack_print --print-massif: heaptrack_print was killed by SIGSEGV") {
		t.Fatalf("%d leaked rows; limitations %q", n, x.Limitations)
	}
}
