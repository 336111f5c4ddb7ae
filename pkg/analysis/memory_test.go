package analysis

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/flameox/flameox/pkg/adapter/massif"
	"github.com/flameox/flameox/pkg/config"
	"github.com/flameox/flameox/pkg/fault"
	gprof "github.com/google/pprof/profile"
)

func figure(side MemorySide, name string) *MemoryFigure {
	for i := range side.Figures {
		if side.Figures[i].Name == name {
			return &side.Figures[i]
		}
	}
	return nil
}

// TestMemoryMassif reads a real massif.out through the recipe: the
// figures are the file's own (parsed independently here), the timeline
// holds every snapshot with the peak massif's figures name, the phases
// add up, and the peak stacks are the peak tree's.
func TestMemoryMassif(t *testing.T) {
	path := sharedFixture(t, "massif/massif-visualizer__massif.out.kate2")
	ws, runs := importProfiles(t, path)
	res, err := Memory(context.Background(), ws, MemoryRequest{Input: runs[0], Limit: 5, Points: 1000})
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := massif.Parse(f, config.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	peak := m.Snapshots[m.Peak]
	last := m.Snapshots[len(m.Snapshots)-1]
	side := res.Base
	if side.Kind != "run" || len(side.Sources) != 1 || side.Sources[0].Collector != "massif" {
		t.Fatalf("side %+v", side)
	}
	for name, want := range map[string]int64{"memory.peak_heap": peak.Heap + peak.HeapExtra, "memory.peak_heap.useful": peak.Heap,
		"memory.peak_heap.extra": peak.HeapExtra, "memory.retained_end": last.Heap} {
		got := figure(side, name)
		if got == nil || got.Value != want || got.Runs != 1 || got.Concept == "" || got.Collector != "massif" {
			t.Errorf("%s: %+v, want %d", name, got, want)
		}
	}
	tl := side.Timeline
	if tl == nil || tl.Page.Total != int64(len(m.Snapshots)) || len(tl.Points) != len(m.Snapshots) || tl.Truncated {
		t.Fatalf("timeline %+v, want %d snapshots", tl, len(m.Snapshots))
	}
	if heapOf(tl.Peak) < peak.Heap+peak.HeapExtra {
		t.Errorf("timeline peak %d below massif's peak %d", heapOf(tl.Peak), peak.Heap+peak.HeapExtra)
	}
	var grown int64
	quarters := 0
	for _, p := range tl.Phases {
		if strings.HasSuffix(p.Name, "%") {
			grown += p.Growth
			quarters++
		}
	}
	if quarters != 4 || grown != heapOf(tl.Points[len(tl.Points)-1])-heapOf(tl.Points[0]) {
		t.Errorf("%d quarters grow %d, want 4 adding to the timeline's net growth", quarters, grown)
	}
	if side.Peak == nil || side.Peak.SampleType != massif.SampleType || len(side.Peak.Stacks) == 0 || side.Retained != nil {
		t.Fatalf("stacks: peak %+v retained %+v", side.Peak, side.Retained)
	}
	if side.Peak.Total != peak.Heap {
		t.Errorf("peak stacks total %d, want the peak tree's %d", side.Peak.Total, peak.Heap)
	}
	for i, s := range side.Peak.Stacks {
		if i > 0 && s.Value > side.Peak.Stacks[i-1].Value {
			t.Errorf("stack %d (%d) ranks above %d", i, s.Value, side.Peak.Stacks[i-1].Value)
		}
		if len(s.Frames) == 0 || s.Frames[len(s.Frames)-1].Function == "" {
			t.Errorf("stack %d has no named leaf: %+v", i, s)
		}
	}
	if !hasText(side.Limitations, "Valgrind") || !hasText(side.Limitations, "snapshots") {
		t.Errorf("limitations %q: want massif's own and the collector note", side.Limitations)
	}
	thin, err := Memory(context.Background(), ws, MemoryRequest{Input: runs[0], Points: 10})
	if err != nil {
		t.Fatal(err)
	}
	if tl := thin.Base.Timeline; len(tl.Points) > 10 || !tl.Truncated || tl.Page.Total != int64(len(m.Snapshots)) || tl.Peak.Index != side.Timeline.Peak.Index {
		t.Errorf("10 points: %d returned of %d, truncated %v, peak %+v", len(tl.Points), tl.Page.Total, tl.Truncated, tl.Peak)
	}
	if len(res.NextSteps) == 0 || !strings.HasPrefix(res.NextSteps[0], "flameox open sha256:") {
		t.Errorf("next %q: want the native viewer", res.NextSteps)
	}
}

func hasText(ss []string, sub string) bool {
	for _, s := range ss {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// TestMemoryGoHeap reads a Go heap profile: its four sample types are the
// figures (totals equal the profile's own sums), in-use stacks are what
// it retains and alloc_space what allocated.
func TestMemoryGoHeap(t *testing.T) {
	path := sharedFixture(t, "pprof/parca__alloc_objects.pb.gz")
	ws, runs := importProfiles(t, path)
	res, err := Memory(context.Background(), ws, MemoryRequest{Input: runs[0]})
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := gprof.Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	side := res.Base
	for i, st := range p.SampleType {
		var sum int64
		for _, s := range p.Sample {
			sum += s.Value[i]
		}
		got := figure(side, "memory."+st.Type)
		if got == nil || got.Value != sum || got.Collector != "go" || got.EvidenceLevel != "derived" {
			t.Errorf("%s: %+v, want %d", st.Type, got, sum)
		}
	}
	if side.Retained == nil || side.Retained.SampleType != "inuse_space" || side.Allocated == nil || side.Allocated.SampleType != "alloc_space" || side.Peak != nil {
		t.Fatalf("stacks: retained %+v allocated %+v peak %+v", side.Retained, side.Allocated, side.Peak)
	}
	if side.Timeline != nil {
		t.Errorf("a heap profile has no timeline: %+v", side.Timeline)
	}
	if !hasText(side.Limitations, "MemProfileRate") {
		t.Errorf("limitations %q: want the sampling note", side.Limitations)
	}
}

// massifFile writes a small massif.out: the heap grows through
// grow (by step bytes a snapshot) and keeps base bytes in keep.
func massifFile(t *testing.T, dir, name string, keep, step int64) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("desc: --time-unit=i\ncmd: ./prog\ntime_unit: i\n")
	for i := int64(0); i < 4; i++ {
		heap := keep + step*i
		b.WriteString("#-----------\nsnapshot=" + itoa(i) + "\n#-----------\ntime=" + itoa(1000*i) + "\nmem_heap_B=" + itoa(heap) +
			"\nmem_heap_extra_B=8\nmem_stacks_B=0\n")
		if i < 3 {
			b.WriteString("heap_tree=empty\n")
			continue
		}
		b.WriteString("heap_tree=peak\nn2: " + itoa(heap) + " (heap allocation functions) malloc/new/new[], --alloc-fns, etc.\n" +
			" n1: " + itoa(step*i) + " 0x401000: grow (prog.c:10)\n  n0: " + itoa(step*i) + " 0x402000: main (prog.c:20)\n" +
			" n1: " + itoa(keep) + " 0x403000: keep (prog.c:30)\n  n0: " + itoa(keep) + " 0x402000: main (prog.c:21)\n")
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

// TestMemoryAgainst compares two captures: the figures side by side, the
// stack that grew first (matched by frames across artifacts), and the
// note that two single runs decide nothing.
func TestMemoryAgainst(t *testing.T) {
	dir := t.TempDir()
	base := massifFile(t, dir, "base.out", 4096, 1000)
	cand := massifFile(t, dir, "cand.out", 4096, 8000)
	ws, runs := importProfiles(t, base, cand)
	res, err := Memory(context.Background(), ws, MemoryRequest{Input: runs[0], Against: runs[1]})
	if err != nil {
		t.Fatal(err)
	}
	if res.Candidate == nil || res.Growth == nil {
		t.Fatalf("no comparison: %+v", res)
	}
	var retained *MemoryFigureChange
	for i := range res.Figures {
		if res.Figures[i].Name == "memory.retained_end" {
			retained = &res.Figures[i]
		}
	}
	if retained == nil || retained.Base != 4096+3000 || retained.Candidate != 4096+24000 || retained.Delta != 21000 || retained.Ratio == nil {
		t.Fatalf("retained_end change %+v", retained)
	}
	g := res.Growth
	if g.Role != "peak" || g.Grew != 1 || g.New != 0 || g.Gone != 0 || len(g.Stacks) != 1 || g.Delta != 21000 {
		t.Fatalf("growth %+v", g)
	}
	top := g.Stacks[0]
	if top.Delta != 21000 || top.Status != "grew" || top.Frames[len(top.Frames)-1].Function != "grow" {
		t.Errorf("top growth %+v, want grow +21000", top)
	}
	if !hasText(res.Limitations, "not a decision") || res.EvidenceLevel != "derived" {
		t.Errorf("limitations %q, evidence %s", res.Limitations, res.EvidenceLevel)
	}
}

func TestMemoryErrors(t *testing.T) {
	cpu := sharedFixture(t, "pprof/google-pprof__sample.cpu.pb.gz")
	ws, runs := importProfiles(t, cpu)
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		req  MemoryRequest
		code fault.Code
	}{
		{"empty", MemoryRequest{}, fault.InvalidArguments},
		{"not an id", MemoryRequest{Input: "x"}, fault.InvalidArguments},
		{"limit", MemoryRequest{Input: runs[0], Limit: 101}, fault.QueryBudgetExceeded},
		{"points", MemoryRequest{Input: runs[0], Points: 1001}, fault.QueryBudgetExceeded},
		{"cpu profile", MemoryRequest{Input: runs[0]}, fault.NotFound},
		{"unknown run set", MemoryRequest{Input: "rs-00000000000000000000000000000000"}, fault.NotFound},
		{"against unknown", MemoryRequest{Input: runs[0], Against: "x"}, fault.NotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Memory(ctx, ws, tc.req)
			fe := fault.As(err)
			if fe == nil {
				t.Fatalf("err %v, want %s", err, tc.code)
			}
			if tc.name == "against unknown" {
				// The input fails first: it has no memory capture.
				if fe.Details["field"] != "input" {
					t.Errorf("field %q", fe.Details["field"])
				}
				return
			}
			if fe.Code != tc.code {
				t.Errorf("code %s (%s), want %s", fe.Code, fe.Message, tc.code)
			}
		})
	}
}

func TestPhasesAndThin(t *testing.T) {
	var pts []MemoryPoint
	for i := int64(0); i < 9; i++ {
		pts = append(pts, MemoryPoint{Index: i, Time: 10 * i, Heap: 100 * i * i})
	}
	ph, steep := phases(pts, 8)
	if len(ph) != 6 || steep != "75-100%" {
		t.Fatalf("phases %+v steepest %q", ph, steep)
	}
	// Quarter 2 is 20..40: the heap at 20 and at 40.
	if ph[1].Start != 400 || ph[1].End != 1600 || ph[4].Growth != 6400 || ph[5].Growth != 0 {
		t.Errorf("phases %+v", ph)
	}
	if ph, _ := phases(pts[:3], 2); len(ph) != 2 {
		t.Errorf("3 points: %+v, want only the peak split", ph)
	}
	if ph, _ := phases([]MemoryPoint{{Time: 5}, {Time: 5}}, 0); len(ph) != 0 {
		t.Errorf("no time axis: %+v", ph)
	}
	many := make([]MemoryPoint, 5000)
	for i := range many {
		many[i] = MemoryPoint{Index: int64(i), Time: int64(i), Heap: int64(i % 97)}
	}
	kept := thin(many, 1234, 1000)
	if len(kept) > 1000 || kept[0].Index != 0 || kept[len(kept)-1].Index != 4999 {
		t.Fatalf("thin kept %d, first %d, last %d", len(kept), kept[0].Index, kept[len(kept)-1].Index)
	}
	found := false
	for _, p := range kept {
		found = found || p.Index == 1234
	}
	if !found {
		t.Error("the peak was thinned out")
	}
}
