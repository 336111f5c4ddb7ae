package profile

import (
	"strconv"

	"github.com/google/pprof/profile"
)

// Node is one function-granularity node of a profile, named and merged
// exactly as `go tool pprof` does at its default granularity (see Top).
type Node struct {
	Name         string // pprof's printable name: function, "[module]" or "<unknown>"
	SystemName   string
	File         string
	StartLine    int64
	Module       string // mapping file of the first location seen
	BuildID      string
	Unsymbolized bool
}

// Graph maps every location of a profile to its function nodes, innermost
// (inlined) frame first, so that extraction and Top share one naming rule.
type Graph struct {
	Nodes []Node
	// Every location's nodes, by location ID when the IDs are dense (the
	// usual case: pprof numbers them 1..n), else by location. A large
	// profile looks up one location per stack frame of every sample, and
	// the slice costs one memory access where the map cost several
	// (docs/performance.md, "Profiles with 10^6 locations").
	byID  [][]int
	idLoc []*profile.Location // byID[i] belongs to idLoc[i]
	loc   map[*profile.Location][]int
	// fnIndexed says NewGraph kept each Function's node by its ID (tests).
	fnIndexed bool
}

// nodes returns the nodes of location l, nil for a location that is not
// the profile's.
func (g *Graph) nodes(l *profile.Location) []int {
	if l == nil {
		return nil
	}
	if g.loc != nil {
		return g.loc[l]
	}
	if l.ID < uint64(len(g.idLoc)) && g.idLoc[l.ID] == l {
		return g.byID[l.ID]
	}
	return nil
}

// ReleaseLocations drops the location index (Stack no longer works); the
// nodes stay. Extraction calls it between aggregating and writing rows.
func (g *Graph) ReleaseLocations() { g.loc, g.byID, g.idLoc = nil, nil, nil }

// NewGraph builds the node table of p (after DropFrames, like Top).
func NewGraph(p *profile.Profile) (*Graph, *profile.Profile) {
	if p.DropFrames != "" {
		p = p.Copy()
		p.RemoveUninteresting()
	}
	// Sized up front: a profile has tens of thousands of functions, and
	// growing the node table by append's small steps for large slices
	// allocated several times its final size (docs/performance.md).
	g := &Graph{Nodes: make([]Node, 0, len(p.Function)+len(p.Mapping)+1)}
	lines := 0
	for _, l := range p.Location {
		lines += max(len(l.Line), 1)
	}
	// Locations by ID when the IDs are dense and unique (byID, the rule
	// of the consistency check); else by location.
	g.idLoc, _ = byID(p.Location, func(l *profile.Location) uint64 { return l.ID })
	if g.idLoc != nil {
		g.byID = make([][]int, len(g.idLoc))
	} else {
		g.loc = make(map[*profile.Location][]int, len(p.Location))
	}
	set := func(l *profile.Location, ns []int) {
		if g.loc != nil {
			g.loc[l] = ns
		} else {
			g.byID[l.ID] = ns
		}
	}
	slab := make([]int, lines) // every location's nodes, sliced from one allocation
	// Named functions, nearly every node, are found by name in a map of
	// names alone, and each pprof Function's node is kept by its ID once
	// found (a function is on many locations): a 10^6-function profile's
	// graph spent most of its time probing one map of full node keys, a
	// table twice the size (docs/performance.md, "Profiles with 10^6
	// locations").
	byName := make(map[string]int32, cap(g.Nodes))
	other := map[nodeKey]int{}
	fns, _ := byID(p.Function, func(f *profile.Function) uint64 { return f.ID })
	var fnNode []int32 // by Function ID, its node + 1, 0 when not yet found
	if fns != nil {
		fnNode = make([]int32, len(fns))
	}
	g.fnIndexed = fns != nil
	add := func(k nodeKey, fn *profile.Function, m *profile.Mapping) int {
		n := Node{Name: k.printable(), Unsymbolized: fn == nil || fn.Name == ""}
		if fn != nil {
			n.SystemName, n.File, n.StartLine = fn.SystemName, fn.Filename, fn.StartLine
		}
		if m != nil {
			n.Module, n.BuildID = m.File, m.BuildID
		}
		g.Nodes = append(g.Nodes, n)
		return len(g.Nodes) - 1
	}
	node := func(k nodeKey, fn *profile.Function, m *profile.Mapping) int {
		if k.name == "" {
			if i, ok := other[k]; ok {
				return i
			}
			i := add(k, fn, m)
			other[k] = i
			return i
		}
		known := fn.ID < uint64(len(fns)) && fns[fn.ID] == fn
		if known && fnNode[fn.ID] != 0 {
			return int(fnNode[fn.ID] - 1)
		}
		i, ok := byName[k.name]
		if !ok {
			i = int32(add(k, fn, m))
			byName[k.name] = i
		}
		if known {
			fnNode[fn.ID] = i + 1
		}
		return int(i)
	}
	for _, l := range p.Location {
		var obj string
		if l.Mapping != nil {
			obj = l.Mapping.File
		}
		if len(l.Line) == 0 {
			ns := slab[:1:1]
			slab = slab[1:]
			ns[0] = node(nodeKey{objfile: obj}, nil, l.Mapping)
			set(l, ns)
			continue
		}
		ns := slab[:len(l.Line):len(l.Line)]
		slab = slab[len(l.Line):]
		for i, ln := range l.Line {
			switch fn := ln.Function; {
			case fn == nil:
				ns[i] = node(nodeKey{objfile: obj}, nil, l.Mapping)
			case fn.Name == "":
				ns[i] = node(nodeKey{objfile: obj, startLine: fn.StartLine}, fn, l.Mapping)
			default:
				ns[i] = node(nodeKey{name: fn.Name}, fn, l.Mapping)
			}
		}
		set(l, ns)
	}
	return g, p
}

// Stack appends the nodes of a sample's stack to buf, leaf (innermost
// frame) first, and returns it.
func (g *Graph) Stack(s *profile.Sample, buf []int) []int {
	buf = buf[:0]
	for _, l := range s.Location {
		buf = append(buf, g.nodes(l)...)
	}
	return buf
}

// Labels returns a sample's thread and process names as flameox records
// them: the string labels "thread" (or "thread_name"), "process" (or
// "comm"), else the numeric "thread_id" / "pid".
func Labels(s *profile.Sample) (thread, process string) {
	first := func(keys ...string) string {
		for _, k := range keys {
			if v := s.Label[k]; len(v) > 0 && v[0] != "" {
				return v[0]
			}
		}
		for _, k := range keys {
			if v := s.NumLabel[k]; len(v) > 0 {
				return strconv.FormatInt(v[0], 10)
			}
		}
		return ""
	}
	return first("thread", "thread_name", "thread_id"), first("process", "process_name", "pid")
}
