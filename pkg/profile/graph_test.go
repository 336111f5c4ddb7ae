package profile

import (
	"os"
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

// TestGraphFunctionIndex: functions are merged by name whether each
// Function's node is kept by its ID (dense, unique IDs) or not (sparse or
// repeated IDs), the first function seen gives the node its fields, and a
// Function that is not the profile's is named by its own name.
func TestGraphFunctionIndex(t *testing.T) {
	for _, tc := range []struct {
		name    string
		ids     [4]uint64
		indexed bool
	}{
		{"dense", [4]uint64{1, 2, 3, 4}, true},
		{"sparse", [4]uint64{1, 2, 3, 1 << 40}, false},
		{"repeated", [4]uint64{1, 2, 3, 3}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a1 := &profile.Function{ID: tc.ids[0], Name: "a", SystemName: "a1", Filename: "a1.go"}
			a2 := &profile.Function{ID: tc.ids[1], Name: "a", SystemName: "a2", Filename: "a2.go"}
			b := &profile.Function{ID: tc.ids[2], Name: "b"}
			c := &profile.Function{ID: tc.ids[3], Name: "c"}
			stranger := &profile.Function{ID: tc.ids[0], Name: "d"} // an ID of the profile's, not one of its functions
			p := &profile.Profile{SampleType: []*profile.ValueType{{Type: "cpu", Unit: "ns"}}, Function: []*profile.Function{a1, a2, b, c}}
			for i, fn := range []*profile.Function{a1, b, a2, b, c, stranger, a1} {
				p.Location = append(p.Location, &profile.Location{ID: uint64(i + 1), Line: []profile.Line{{Function: fn}}})
			}
			g, _ := NewGraph(p)
			if got := g.fnIndexed; got != tc.indexed {
				t.Fatalf("functions indexed by ID = %v, want %v", got, tc.indexed)
			}
			var names []string
			for _, l := range p.Location {
				for _, n := range g.nodes(l) {
					names = append(names, g.Nodes[n].Name)
				}
			}
			if want := []string{"a", "b", "a", "b", "c", "d", "a"}; !slices.Equal(names, want) {
				t.Errorf("names by location = %q, want %q", names, want)
			}
			if len(g.Nodes) != 4 {
				t.Errorf("%d nodes, want 4 (a, b, c, d)", len(g.Nodes))
			}
			if n := g.Nodes[0]; n.SystemName != "a1" || n.File != "a1.go" {
				t.Errorf("node a = %+v, want the first function's fields", n)
			}
		})
	}
}

// BenchmarkNewGraph builds the node graph of the profile that
// FLAMEOX_BENCH_PROFILE names (scripts/bench/bigprofile writes 10^6-
// location ones; docs/performance.md).
func BenchmarkNewGraph(b *testing.B) {
	path := os.Getenv("FLAMEOX_BENCH_PROFILE")
	if path == "" {
		b.Skip("FLAMEOX_BENCH_PROFILE names no profile")
	}
	p := parseFile(b, path)
	for b.Loop() {
		NewGraph(p.P)
	}
}
