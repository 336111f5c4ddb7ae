package profile

import (
	"slices"
	"testing"

	"github.com/google/pprof/profile"
)

// TestGraphLocationIndex checks that a sample's nodes are the same whether
// the graph indexes locations by dense ID or, for sparse or repeated IDs,
// by location.
func TestGraphLocationIndex(t *testing.T) {
	build := func(ids ...uint64) (*profile.Profile, []*profile.Location) {
		p := &profile.Profile{SampleType: []*profile.ValueType{{Type: "cpu", Unit: "ns"}}}
		var locs []*profile.Location
		for i, id := range ids {
			f := &profile.Function{ID: uint64(i + 1), Name: string(rune('a' + i))}
			g := &profile.Function{ID: uint64(i + 100), Name: string(rune('A' + i))}
			p.Function = append(p.Function, f, g)
			// Two lines: an inlined callee first, then its caller.
			l := &profile.Location{ID: id, Line: []profile.Line{{Function: g}, {Function: f}}}
			locs = append(locs, l)
		}
		p.Location = locs
		p.Sample = []*profile.Sample{{Location: slices.Clone(locs), Value: []int64{1}}}
		return p, locs
	}
	want := []string{"C", "c", "B", "b", "A", "a"}
	for _, tc := range []struct {
		name  string
		ids   []uint64
		dense bool
	}{
		{"dense", []uint64{1, 2, 3}, true},
		{"sparse", []uint64{1, 1 << 40, 7}, false},
		{"repeated", []uint64{2, 2, 3}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, locs := build(tc.ids...)
			slices.Reverse(p.Sample[0].Location) // leaf first: the last location
			g, _ := NewGraph(p)
			if got := g.idLoc != nil; got != tc.dense {
				t.Fatalf("dense index = %v, want %v", got, tc.dense)
			}
			var names []string
			for _, n := range g.Stack(p.Sample[0], nil) {
				names = append(names, g.Nodes[n].Name)
			}
			if !slices.Equal(names, want) {
				t.Errorf("stack = %q, want %q", names, want)
			}
			if got := g.Outer(p.Sample[0], nil); !slices.Equal(got, []bool{false, true, false, true, false, true}) {
				t.Errorf("outer = %v", got)
			}
			stranger := &profile.Location{ID: locs[0].ID, Line: locs[0].Line}
			if ns := g.Stack(&profile.Sample{Location: []*profile.Location{stranger, nil}}, nil); len(ns) != 0 {
				t.Errorf("a location that is not the profile's (or none) has nodes %v", ns)
			}
		})
	}
}
