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

// FuzzParsePeakStacks: flame-graph lines parse within the limits or are
// refused with ErrReport.
func FuzzParsePeakStacks(f *testing.F) {
	f.Add("0x7f (rtld.c);_dl_init (dl-init.c);0x7fc; 72704\nmain (alloc.c); 1500000\nmain (alloc.c); 0\n")
	f.Add("a;b 3\n;; 1\n")
	lim := config.Limits{MaxSamples: 100, MaxStackFrames: 1000, MaxStackDepth: 50, MaxStringBytes: 1 << 16}
	f.Fuzz(func(t *testing.T, in string) {
		ps, err := ParsePeakStacks(strings.NewReader(in), lim)
		if err != nil {
			return
		}
		var frames int64
		for _, s := range ps {
			if s.Bytes <= 0 || int64(len(s.Frames)) > lim.MaxStackDepth {
				t.Fatalf("stack %+v", s)
			}
			frames += int64(len(s.Frames))
		}
		if int64(len(ps)) > lim.MaxSamples || frames > lim.MaxStackFrames {
			t.Fatalf("%d stacks, %d frames beyond the limits", len(ps), frames)
		}
		_ = Profile(ps)
	})
}
