package profile

import (
	"slices"

	"github.com/google/pprof/profile"
)

// Inline labels, as `go tool pprof -top` prints them after a name.
const (
	InlineFull    = "inline"         // every call into the function was inlined
	InlinePartial = "partial-inline" // some calls were inlined, some not
)

// Outer appends to buf, for each node Stack(s) returns (in the same
// order), whether it is the outermost function of its location: the
// physical frame. A node that is not was inlined into the next node, its
// caller.
func (g *Graph) Outer(s *profile.Sample, buf []bool) []bool {
	buf = buf[:0]
	for _, l := range s.Location {
		ns := g.nodes(l)
		for i := range ns {
			buf = append(buf, i == len(ns)-1)
		}
	}
	return buf
}

// InlineEdges records the call edges of samples the way pprof's graph
// does, to label each node "(inline)" or "(partial-inline)" as pprof -top
// does: an edge caller -> callee is inline when every sample that has it
// reaches the callee through inlining (the first time the pair occurs
// walking the stack from the root; a node calling itself is no edge); a
// node is labelled inline when all its incoming edges are inline, partial
// when some are. Like pprof's report, edges lighter than EdgeFraction of
// the total (its -edgefraction default) are dropped first, so a function
// reached only through them has no label.
type InlineEdges struct {
	edges map[uint64]*inlineEdge // caller<<32 | callee
	seen  map[uint64]struct{}
	total int64 // sum of the samples' values: pprof's flat sum of all nodes
}

type inlineEdge struct {
	inline bool // every occurrence inline
	weight int64
}

// EdgeFraction is pprof's default -edgefraction.
const EdgeFraction = 0.001

// NewInlineEdges returns an empty edge set.
func NewInlineEdges() *InlineEdges {
	return &InlineEdges{edges: map[uint64]*inlineEdge{}, seen: map[uint64]struct{}{}}
}

// Add records one sample's stack (nodes leaf first, from Graph.Stack; outer
// from Graph.Outer) and its value.
func (e *InlineEdges) Add(nodes []int, outer []bool, value int64) {
	e.total += value
	clear(e.seen)
	for j := len(nodes) - 2; j >= 0; j-- {
		parent, n := nodes[j+1], nodes[j]
		if parent == n {
			continue
		}
		k := uint64(parent)<<32 | uint64(uint32(n))
		if _, ok := e.seen[k]; ok {
			continue
		}
		e.seen[k] = struct{}{}
		inline := !outer[j]
		if ed := e.edges[k]; ed != nil {
			ed.inline = ed.inline && inline
			ed.weight += value
		} else {
			e.edges[k] = &inlineEdge{inline: inline, weight: value}
		}
	}
}

// Labels returns, per node of a graph with n nodes, "" or InlineFull or
// InlinePartial; and, for each node, the callers it was inlined into at
// every call (the inline edges' callers), sorted by node index.
func (e *InlineEdges) Labels(n int) (labels []string, into [][]int) {
	in, plain := make([]bool, n), make([]bool, n)
	into = make([][]int, n)
	cutoff := abs(int64(float64(e.total) * EdgeFraction))
	for k, ed := range e.edges {
		parent, child := int(k>>32), int(uint32(k))
		if child >= n || abs(ed.weight) < cutoff {
			continue
		}
		if ed.inline {
			in[child] = true
			into[child] = append(into[child], parent)
		} else {
			plain[child] = true
		}
	}
	labels = make([]string, n)
	for i := range labels {
		switch {
		case in[i] && plain[i]:
			labels[i] = InlinePartial
		case in[i]:
			labels[i] = InlineFull
		}
		slices.Sort(into[i])
	}
	return labels, into
}
