package stacks

import (
	"cmp"
	"encoding/binary"
	"slices"
	"strings"
	"sync"
)

// Hotspots list a profile's frames by |self| (then function, |inclusive|,
// module and frame id). The extractor knows every value, so it writes the
// rows a hotspots page needs first: frame_measurements carries each row's
// rank within its metric, thread and process, and the first topRows ranks
// of every metric go in a row group of their own; frames carry a
// frame_index, and the topRows hottest frames under the default sample
// type come first, in a row group of their own. Min/max statistics then
// leave a hotspots query one small row group of each table to read,
// instead of aggregating, joining and sorting the whole profile
// (docs/performance.md). The frame count and symbolized total it reports
// are measurements (profile.frames, profile.symbolized).

// topRows is how many of a ranking's first rows get a row group of their
// own (frames, hottest first; each metric's frame_measurements, by rank).
// The first firstRows of them, a default hotspots page (20 rows) and a
// few more, come in a row group ahead of the rest: a first look then
// reads that many rows of each table, not a thousand.
const (
	topRows   = 1024
	firstRows = 64
)

// ranking is the frame-level view of an extraction: one entry per frame
// id and thread/process (pprof nodes that share an id are one frame, their
// values summed, as the hotspots query sums them), the frames' order, and
// each metric's ranks.
type ranking struct {
	canon  []int32     // per node: the first node with its frame id; -1 for unused nodes
	frames []int32     // canonical nodes in frames order
	index  []int32     // per canonical node: its frame_index
	merged aggTable    // key a: canonical node, in tp; by key
	top    [][][]int32 // [t][tp]: the first topRows entries with a value, by rank
	rank   [][]int32   // [t][entry]: 1-based rank, 0 without a value
	// nframes and symbolized, per tp and sample type: the frames ranked
	// and the |self| total of those with symbols.
	nframes, symbolized [][]int64
	// minValue, per tp and sample type: the smallest non-zero |self| (or,
	// for a frame without self, |inclusive|) of a frame, which pprof
	// chooses the unit of its values by.
	minValue [][]int64
	// name and tail order canonical nodes by function, and by module
	// (absent last) then frame id: the ranking sorts compare these
	// integers, not strings.
	name, tail []int32
}

// rankKey is one entry's sort key (|self|, |inclusive|, name and tail
// order).
type rankKey struct {
	self, incl int64
	name, tail int32
	e          int32 // entry, or canonical node for the frames order
}

// compare orders keys as hotspots list them: |self| descending, then
// function, |inclusive| descending, module (absent last) and frame id.
func (a rankKey) compare(b rankKey) int {
	if c := cmp.Compare(b.self, a.self); c != 0 {
		return c
	}
	if c := cmp.Compare(a.name, b.name); c != 0 {
		return c
	}
	if c := cmp.Compare(b.incl, a.incl); c != 0 {
		return c
	}
	return cmp.Compare(a.tail, b.tail)
}

// sortRankKeys sorts keys by rankKey.compare; no two of them share a
// tail, which is below ntails. Most of a profile's frames have no self
// value (they only call), and keys without one order by name, then
// |inclusive| and tail, where tail alone already orders names (sortKeys):
// those are placed by their tail in one pass, and only runs of one name
// are sorted. The keys with a self value are sorted as before. A 10^6-
// location profile's three sorts of 10^6 keys were a third of its
// ranking (docs/performance.md).
func sortRankKeys(keys []rankKey, ntails int) {
	// Keys without self go to the end, where they sort (|self| 0 is
	// the least).
	n := len(keys)
	for i := 0; i < n; {
		if keys[i].self == 0 {
			n--
			keys[i], keys[n] = keys[n], keys[i]
			continue
		}
		i++
	}
	if len(keys)-n < minPlaced {
		slices.SortFunc(keys, rankKey.compare)
		return
	}
	slices.SortFunc(keys[:n], rankKey.compare)
	zero := keys[n:]
	at := make([]int32, ntails) // by tail: its key's index in zero + 1
	for i, k := range zero {
		at[k.tail] = int32(i) + 1
	}
	placed := make([]rankKey, 0, len(zero))
	for _, i := range at {
		if i > 0 {
			placed = append(placed, zero[i-1])
		}
	}
	copy(zero, placed)
	for i := 0; i < len(zero); {
		j := i + 1
		for j < len(zero) && zero[j].name == zero[i].name {
			j++
		}
		if j-i > 1 {
			slices.SortFunc(zero[i:j], rankKey.compare)
		}
		i = j
	}
}

// minPlaced is the fewest keys without self that sortRankKeys places by
// tail rather than sorting (a variable for tests).
var minPlaced = 1 << 12

// alwaysMerge turns off rank's shortcut for profiles whose frame ids are
// all distinct, so that a test can compare the two ways.
var alwaysMerge = false

// rank builds the ranking of x's node aggregates; ids are the nodes'
// frame ids.
func (x *extraction) rank(ids []string) *ranking {
	nt, nn, ntp := len(x.p.SampleType), x.info.len(), len(x.tps)
	r := &ranking{canon: make([]int32, nn), index: make([]int32, nn), merged: newAggTable(nt)}
	used := make([]bool, nn)
	for _, k := range x.nodes.keys {
		used[k.a] = true
	}
	canonical, nUsed := x.canonicalNodes(r, used, ids)
	// Merge nodes that share an id, per thread/process, in key order.
	// When every id names one node (canon is the identity), nothing
	// merges: the merged table is the node table in key order.
	if len(canonical) == nUsed && !alwaysMerge {
		r.merged = x.nodes.permuted(x.nodes.sorted())
	} else {
		at := make(map[key]int32, len(x.nodes.keys))
		for _, e := range x.nodes.sorted() {
			k := x.nodes.keys[e]
			mk := key{a: r.canon[k.a], tp: k.tp}
			m, ok := at[mk]
			if !ok {
				m = r.merged.add(mk)
				at[mk] = m
			}
			for _, f := range []func(*aggTable, int32) []int64{(*aggTable).self, (*aggTable).incl, (*aggTable).count} {
				dst, src := f(&r.merged, m), f(&x.nodes, e)
				for t := range dst {
					dst[t] += src[t]
				}
			}
		}
		if perm := r.merged.sorted(); !slices.IsSorted(perm) { // merged ids out of node order
			r.merged = r.merged.permuted(perm)
		}
	}
	x.nodes = aggTable{} // merged holds what the rest of the extraction needs
	x.sortKeys(r, canonical, ids)

	// Frames: the topRows hottest under the default sample type over
	// every thread, by rank, then the rest in node order.
	d := x.defaultType()
	self, incl := make([]int64, nn), make([]int64, nn)
	for m, k := range r.merged.keys {
		self[k.a] += r.merged.self(int32(m))[d]
		incl[k.a] += r.merged.incl(int32(m))[d]
	}
	// The frames order is sorted beside the metrics' ranks below: it
	// sets only r.frames and r.index, the ranks only their own fields.
	var framesOrder sync.WaitGroup
	framesOrder.Go(func() {
		keys := make([]rankKey, 0, len(canonical))
		for _, c := range canonical {
			keys = append(keys, rankKey{self: abs(self[c]), incl: abs(incl[c]), name: r.name[c], tail: r.tail[c], e: c})
		}
		sortRankKeys(keys, len(r.tail))
		hot := make([]bool, nn)
		for _, k := range keys[:min(topRows, len(keys))] {
			hot[k.e] = true
			r.frames = append(r.frames, k.e)
		}
		for _, c := range canonical {
			if !hot[c] {
				r.frames = append(r.frames, c)
			}
		}
		for i, c := range r.frames {
			r.index[c] = int32(i)
		}
	})
	defer framesOrder.Wait()

	// Each metric's ranks per thread/process, two metrics at a time on two
	// goroutines (each writes only its own metric's entries): the sorts
	// were most of a 10^6-frame profile's ranking.
	r.top, r.rank = make([][][]int32, nt), make([][]int32, nt)
	r.nframes, r.symbolized, r.minValue = make([][]int64, ntp), make([][]int64, ntp), make([][]int64, ntp)
	for tp := range ntp {
		r.nframes[tp], r.symbolized[tp], r.minValue[tp] = make([]int64, nt), make([]int64, nt), make([]int64, nt)
	}
	for t := 0; t < nt; t += 2 {
		if t+1 == nt || r.merged.len() < 4096 {
			x.rankMetric(r, t)
			if t+1 < nt {
				x.rankMetric(r, t+1)
			}
			continue
		}
		var wg sync.WaitGroup
		wg.Go(func() { x.rankMetric(r, t+1) })
		x.rankMetric(r, t)
		wg.Wait()
	}
	return r
}

// rankMetric sets r.top[t] and r.rank[t], and sample type t's counts in
// r.nframes, r.symbolized and r.minValue.
func (x *extraction) rankMetric(r *ranking, t int) {
	byTP := make([][]rankKey, len(x.tps))
	for m, k := range r.merged.keys {
		s, in := r.merged.self(int32(m))[t], r.merged.incl(int32(m))[t]
		if s == 0 && in == 0 {
			continue
		}
		byTP[k.tp] = append(byTP[k.tp], rankKey{self: abs(s), incl: abs(in), name: r.name[k.a], tail: r.tail[k.a], e: int32(m)})
		r.nframes[k.tp][t]++
		if v := cmp.Or(abs(s), abs(in)); r.minValue[k.tp][t] == 0 || v < r.minValue[k.tp][t] {
			r.minValue[k.tp][t] = v
		}
		if !x.info.unsymbolized(k.a) {
			r.symbolized[k.tp][t] += abs(s)
		}
	}
	r.top[t], r.rank[t] = make([][]int32, len(byTP)), make([]int32, r.merged.len())
	for tp, keys := range byTP {
		sortRankKeys(keys, len(r.tail))
		for i, k := range keys {
			r.rank[t][k.e] = int32(i + 1)
			if i < topRows {
				r.top[t][tp] = append(r.top[t][tp], k.e)
			}
		}
	}
}

// canonicalNodes sets r.canon (and r.index to -1): each used node's
// canonical node, the first used node with its frame id. It returns the
// canonical nodes in node order and the number of used nodes. Frame ids
// are matched by the first 8 bytes of their digests, the full digests
// compared on a match; should two digests share those bytes, the ids
// themselves are matched instead.
func (x *extraction) canonicalNodes(r *ranking, used []bool, ids []string) ([]int32, int) {
	prefix := func(i int) uint64 { return binary.LittleEndian.Uint64(x.digests[i][:8]) }
	same := func(c, i int) bool { return x.digests[c] == x.digests[i] }
	if canonical, n, ok := canonicalBy(r, used, prefix, same); ok {
		return canonical, n
	}
	canonical, n, _ := canonicalBy(r, used, func(i int) string { return ids[i] }, nil)
	return canonical, n
}

// canonicalBy is canonicalNodes matching nodes by key; with same set, a
// node whose key matches an earlier node's must also be same as it, or
// canonicalBy gives up (ok false).
func canonicalBy[K comparable](r *ranking, used []bool, key func(int) K, same func(c, i int) bool) (canonical []int32, nUsed int, ok bool) {
	first := make(map[K]int32, len(used))
	for i := range r.canon {
		r.canon[i], r.index[i] = -1, -1
		if !used[i] {
			continue
		}
		nUsed++
		k := key(i)
		c, seen := first[k]
		switch {
		case !seen:
			c = int32(i)
			first[k] = c
			canonical = append(canonical, c)
		case same != nil && !same(int(c), i):
			return nil, 0, false
		}
		r.canon[i] = c
	}
	return canonical, nUsed, true
}

// sortKeys sets r.name and r.tail of the canonical nodes: one string
// sort by function, module (absent last) and frame id, all compared by
// bytes as DuckDB compares them. A large profile's nodes are sorted in
// two halves on two goroutines, then merged: the order is total (frame
// ids are distinct), so the result is the one sort's.
func (x *extraction) sortKeys(r *ranking, canonical []int32, ids []string) {
	nodes := slices.Clone(canonical)
	sortNodes(nodes, func(a, b int32) int {
		if c := strings.Compare(x.info.nameOf(a), x.info.nameOf(b)); c != 0 {
			return c
		}
		ma, mb := x.info.module(a), x.info.module(b)
		if (ma == "") != (mb == "") {
			if ma == "" {
				return 1
			}
			return -1
		}
		if c := strings.Compare(ma, mb); c != 0 {
			return c
		}
		return strings.Compare(ids[a], ids[b])
	})
	r.name, r.tail = make([]int32, x.info.len()), make([]int32, x.info.len())
	name := int32(0)
	for i, n := range nodes {
		if i > 0 && x.info.nameOf(n) != x.info.nameOf(nodes[i-1]) {
			name++
		}
		r.name[n], r.tail[n] = name, int32(i)
	}
}

// sortNodes sorts nodes by compare, in two halves on two goroutines when
// there are many, merged after.
func sortNodes(nodes []int32, compare func(a, b int32) int) {
	if len(nodes) < 1<<15 {
		slices.SortFunc(nodes, compare)
		return
	}
	half := len(nodes) / 2
	lo, hi := nodes[:half], nodes[half:]
	var wg sync.WaitGroup
	wg.Go(func() { slices.SortFunc(lo, compare) })
	slices.SortFunc(hi, compare)
	wg.Wait()
	out := make([]int32, 0, len(nodes))
	i, j := 0, 0
	for i < len(lo) && j < len(hi) {
		if compare(hi[j], lo[i]) < 0 {
			out = append(out, hi[j])
			j++
		} else {
			out = append(out, lo[i])
			i++
		}
	}
	out = append(append(out, lo[i:]...), hi[j:]...)
	copy(nodes, out)
}
