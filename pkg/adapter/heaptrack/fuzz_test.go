package heaptrack

import (
	"os"
	"strings"
	"testing"

	"github.com/flameox/flameox/pkg/config"
)

// FuzzParseReport: any input either parses within small limits or is
// refused with ErrReport; it never panics or keeps more than the limits.
func FuzzParseReport(f *testing.F) {
	if b, err := os.ReadFile("testdata/alloc.report.txt"); err == nil {
		f.Add(string(b))
	}
	f.Add("MOST TEMPORARY ALLOCATIONS\n3 temporary allocations of 4 allocations in total (75.00%) from\nmain\n  at a.c:1\n\ncalls to allocation functions: 1 (1/s)\npeak heap memory consumption: 1B\ntotal memory leaked: 0B\n")
	f.Add("PEAK MEMORY CONSUMERS\n1.00K peak memory consumed over 2 calls from\nf\n1.00K consumed over 2 calls from:\n    g\n      in x.so\n  and 3 from 4 other places\n")
	lim := config.Limits{MaxSamples: 100, MaxStackFrames: 1000, MaxStackDepth: 50, MaxStringBytes: 1 << 16}
	f.Fuzz(func(t *testing.T, in string) {
		rep, err := ParseReport(strings.NewReader(in), lim)
		if err != nil {
			return
		}
		var n, frames int64
		for _, es := range rep.Sections {
			for _, e := range es {
				n += 1 + int64(len(e.Stacks))
				frames += int64(len(e.Location))
				for _, s := range e.Stacks {
					frames += int64(len(s.Frames))
				}
			}
		}
		if n > lim.MaxSamples || frames > lim.MaxStackFrames {
			t.Fatalf("kept %d entries and %d frames beyond the limits", n, frames)
		}
	})
}

// FuzzFlameGraphs: flame-graph lines of two cost types merge within the
// limits or are refused with ErrReport.
func FuzzFlameGraphs(f *testing.F) {
	f.Add("0x7f (rtld.c);_dl_init (dl-init.c);0x7fc; 72704\nmain (alloc.c); 1500000\nmain (alloc.c); 0\n", "main (alloc.c); 10\nx; 1\n")
	f.Add("a;b 3\n;; 1\n", "a;b 4\n")
	lim := config.Limits{MaxSamples: 100, MaxStackFrames: 1000, MaxStackDepth: 50, MaxStringBytes: 1 << 16}
	f.Fuzz(func(t *testing.T, peak, allocs string) {
		g := NewFlameGraphs([]Cost{CostPeak, CostAllocs}, lim)
		if g.Read(0, strings.NewReader(peak)) != nil || g.Read(1, strings.NewReader(allocs)) != nil {
			return
		}
		var frames int64
		for _, s := range g.Stacks {
			if s.Values[0] <= 0 && s.Values[1] <= 0 || int64(len(g.Frames(s))) > lim.MaxStackDepth {
				t.Fatalf("stack %+v", s)
			}
			frames += int64(len(s.ids))
		}
		if int64(len(g.Stacks)) > lim.MaxSamples || frames > lim.MaxStackFrames {
			t.Fatalf("%d stacks, %d frames beyond the limits", len(g.Stacks), frames)
		}
		if p := g.Profile(); len(p.Sample) != len(g.Stacks) || p.CheckValid() != nil {
			t.Fatalf("profile: %v", p.CheckValid())
		}
	})
}

// FuzzParseTimeline: heaptrack_print's massif export parses within the
// limits, in milliseconds and without trees, or is refused; it never
// hangs.
func FuzzParseTimeline(f *testing.F) {
	f.Add("#-----------\nsnapshot=0\n#-----------\ntime=0.001\nmem_heap_B=1000\nmem_heap_extra_B=0\nmem_stacks_B=0\nheap_tree=empty\ndesc: heaptrack\ncmd: ./alloc\ntime_unit: s\n")
	f.Add("desc: heaptrack\ncmd: a\ntime_unit: s\n#-----------\nsnapshot=0\n#-----------\ntime=1.5e+06\nmem_heap_B=3\nmem_heap_extra_B=0\nmem_stacks_B=0\nheap_tree=detailed\nn1: 3 (heap allocation functions) malloc/new/new[], --alloc-fns, etc.\n n0: 3 in 2 places, all below massif's threshold (1)\n")
	lim := config.Limits{MaxSamples: 50, MaxDecompressedBytes: 1 << 16, MaxLocations: 100, MaxStackDepth: 20, MaxStringBytes: 1 << 12}
	f.Fuzz(func(t *testing.T, in string) {
		tl, err := ParseTimeline(strings.NewReader(in), lim)
		if err != nil {
			return
		}
		if int64(len(tl.File.Snapshots)) > lim.MaxSamples || tl.File.TimeUnit != "ms" || len(tl.File.Tree) != 0 {
			t.Fatalf("%d snapshots, time unit %q, %d tree nodes", len(tl.File.Snapshots), tl.File.TimeUnit, len(tl.File.Tree))
		}
	})
}
