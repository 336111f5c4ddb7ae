package stacks

import (
	"cmp"
	"math/bits"
	"slices"
)

// Aggregates live in flat tables rather than one small object per node,
// edge or stack: a large profile has tens of thousands of each, and three
// slices per aggregate were most of the extraction's live heap while its
// rows were written (docs/performance.md).

// key identifies an aggregate: a node (a), or an edge from caller a to
// callee b, in one thread and process (tp indexes extraction.tps).
type key struct{ a, b, tp int32 }

func (k key) compare(o key) int {
	if c := cmp.Compare(k.a, o.a); c != 0 {
		return c
	}
	if c := cmp.Compare(k.b, o.b); c != 0 {
		return c
	}
	return cmp.Compare(k.tp, o.tp)
}

// aggTable holds aggregates by entry: entry e's self, inclusive value and
// sample count for sample type t are self(e)[t], incl(e)[t], count(e)[t].
type aggTable struct {
	nt    int
	keys  []key
	vals  []int64 // per entry: self[nt], incl[nt], count[nt]
	zeros []int64
}

func newAggTable(nt int) aggTable { return aggTable{nt: nt, zeros: make([]int64, 3*nt)} }

// add appends an entry for k with zero values.
func (s *aggTable) add(k key) int32 {
	s.keys = grow(s.keys, 1)
	s.keys = append(s.keys, k)
	s.vals = grow(s.vals, len(s.zeros))
	s.vals = append(s.vals, s.zeros...)
	return int32(len(s.keys) - 1)
}

// grow makes room for n more elements, doubling the capacity when it must
// grow: append grows large slices in small steps, which for these tables
// allocated several times their final size (docs/performance.md).
func grow[T any](s []T, n int) []T {
	if len(s)+n <= cap(s) {
		return s
	}
	return slices.Grow(s, max(n, cap(s)))
}

func (s *aggTable) len() int { return len(s.keys) }

func (s *aggTable) self(e int32) []int64 {
	o := int(e) * 3 * s.nt
	return s.vals[o : o+s.nt]
}

func (s *aggTable) incl(e int32) []int64 {
	o := int(e)*3*s.nt + s.nt
	return s.vals[o : o+s.nt]
}

func (s *aggTable) count(e int32) []int64 {
	o := int(e)*3*s.nt + 2*s.nt
	return s.vals[o : o+s.nt]
}

// addValues adds a sample's non-zero values to the entry's inclusive
// values, counting c sample records for each.
func (s *aggTable) addValues(e int32, vals []int64, c int64) {
	o := int(e) * 3 * s.nt
	incl, count := s.vals[o+s.nt:o+2*s.nt], s.vals[o+2*s.nt:o+3*s.nt]
	for t := 0; t < s.nt && t < len(vals); t++ {
		if v := vals[t]; v != 0 {
			incl[t] += v
			count[t] += c
		}
	}
}

// sorted returns the entries ordered by key, so rows come out the same
// for the same input.
func (s *aggTable) sorted() []int32 {
	idx := make([]int32, len(s.keys))
	for i := range idx {
		idx[i] = int32(i)
	}
	slices.SortFunc(idx, func(i, j int32) int { return s.keys[i].compare(s.keys[j]) })
	return idx
}

// stackTable holds distinct stacks: stack i's nodes, root first, are
// nodes[start[i]:start[i+1]]; its value and sample count for sample type
// t are value(i)[t] and count(i)[t]. Stacks are found by a 64-bit hash of
// their nodes, checked on a hit.
type stackTable struct {
	nt    int
	tp    []int32
	start []int32
	nodes []int32
	vals  []int64 // per stack: value[nt], count[nt]
	head  map[uint64]int32
	next  []int32 // per stack: next stack with the same hash, -1 ends
	zeros []int64
}

func newStackTable(nt int) stackTable {
	return stackTable{nt: nt, start: []int32{0}, head: map[uint64]int32{}, zeros: make([]int64, 2*nt)}
}

func (s *stackTable) len() int { return len(s.tp) }

func (s *stackTable) stack(i int32) []int32 { return s.nodes[s.start[i]:s.start[i+1]] }

func (s *stackTable) value(i int32) []int64 {
	o := int(i) * 2 * s.nt
	return s.vals[o : o+s.nt]
}

func (s *stackTable) count(i int32) []int64 {
	o := int(i)*2*s.nt + s.nt
	return s.vals[o : o+s.nt]
}

// find returns the stack with hash h in tp whose nodes, root first, are
// leafFirst reversed, or -1.
func (s *stackTable) find(h uint64, tp int32, leafFirst []int) int32 {
	i, ok := s.head[h]
	for ok && i >= 0 {
		if s.tp[i] == tp && sameReversed(s.stack(i), leafFirst) {
			return i
		}
		i = s.next[i]
	}
	return -1
}

// add appends the stack leafFirst reversed, with zero values.
func (s *stackTable) add(h uint64, tp int32, leafFirst []int) int32 {
	i := int32(len(s.tp))
	s.tp = append(grow(s.tp, 1), tp)
	s.nodes = grow(s.nodes, len(leafFirst))
	for j := len(leafFirst) - 1; j >= 0; j-- {
		s.nodes = append(s.nodes, int32(leafFirst[j]))
	}
	s.start = append(grow(s.start, 1), int32(len(s.nodes)))
	s.vals = append(grow(s.vals, len(s.zeros)), s.zeros...)
	next, ok := s.head[h]
	if !ok {
		next = -1
	}
	s.next = append(grow(s.next, 1), next)
	s.head[h] = i
	return i
}

// sameReversed reports whether root (root first) is leafFirst reversed.
func sameReversed(root []int32, leafFirst []int) bool {
	if len(root) != len(leafFirst) {
		return false
	}
	for j, n := range leafFirst {
		if int(root[len(root)-1-j]) != n {
			return false
		}
	}
	return true
}

// permuted returns a copy of the table with its entries in perm's order.
func (s *aggTable) permuted(perm []int32) aggTable {
	out := newAggTable(s.nt)
	out.keys, out.vals = make([]key, 0, len(perm)), make([]int64, 0, len(s.vals))
	for _, e := range perm {
		o := int(e) * 3 * s.nt
		out.keys = append(out.keys, s.keys[e])
		out.vals = append(out.vals, s.vals[o:o+3*s.nt]...)
	}
	return out
}

// edgeIndex maps a call edge's key (caller<<32 | callee, node indices
// below 2^31) to its entry: open addressing with linear probing. The
// aggregation looks an edge up for every frame of every sample, and Go's
// map spent a third of the aggregation hashing and probing (a 10^6-edge
// profile's map is also a cache miss per lookup either way).
type edgeIndex struct {
	keys  []uint64 // emptyEdge where free
	vals  []int32
	n     int
	shift uint
}

// emptyEdge marks a free slot: no edge key has its top bit set.
const emptyEdge = ^uint64(0)

func newEdgeIndex() *edgeIndex {
	x := &edgeIndex{}
	x.alloc(1 << 10)
	return x
}

func (x *edgeIndex) alloc(size int) {
	x.keys, x.vals = make([]uint64, size), make([]int32, size)
	for i := range x.keys {
		x.keys[i] = emptyEdge
	}
	x.shift = uint(64 - bits.TrailingZeros(uint(size)))
}

func (x *edgeIndex) slot(k uint64) int { return int((k * 0x9E3779B97F4A7C15) >> x.shift) }

// get returns the entry of k.
func (x *edgeIndex) get(k uint64) (int32, bool) {
	mask := len(x.keys) - 1
	for i := x.slot(k); ; i = (i + 1) & mask {
		switch x.keys[i] {
		case k:
			return x.vals[i], true
		case emptyEdge:
			return 0, false
		}
	}
}

// put sets the entry of k, which get did not find.
func (x *edgeIndex) put(k uint64, v int32) {
	if 2*(x.n+1) > len(x.keys) {
		keys, vals := x.keys, x.vals
		x.alloc(2 * len(keys))
		for i, old := range keys {
			if old != emptyEdge {
				x.insert(old, vals[i])
			}
		}
	}
	x.insert(k, v)
	x.n++
}

func (x *edgeIndex) insert(k uint64, v int32) {
	mask := len(x.keys) - 1
	i := x.slot(k)
	for x.keys[i] != emptyEdge {
		i = (i + 1) & mask
	}
	x.keys[i], x.vals[i] = k, v
}
