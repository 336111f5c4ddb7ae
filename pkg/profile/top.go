package profile

import (
	"cmp"
	"path/filepath"
	"slices"

	"github.com/google/pprof/profile"
)

// Row is one function of a flat/cumulative report, as `go tool pprof -top`
// prints it at its default (function) granularity.
type Row struct {
	Function     string // pprof's node name: the function name, "[module]" or "<unknown>"
	File         string // source file of the first function seen under this name
	StartLine    int64  // its start line, 0 if unknown
	Module       string // mapping file of the first location seen, "" if none
	Unsymbolized bool   // the row stands for locations without a function name
	Inline       string // "", InlineFull or InlinePartial, as pprof labels the row
	Flat, Cum    int64
}

// nodeKey mirrors pprof's graph.NodeInfo after function-granularity
// aggregation, which clears addresses, line numbers and file names: a named
// function is keyed by its name alone, a nameless one by module and start line.
type nodeKey struct {
	name, objfile string
	startLine     int64
}

func (k nodeKey) printable() string {
	switch {
	case k.name != "":
		return k.name
	case k.objfile != "":
		return "[" + filepath.Base(k.objfile) + "]"
	}
	return "<unknown>"
}

// Top computes flat and cumulative values per function for one sample type,
// with the rules of `go tool pprof -top -nodefraction=0`:
//   - a sample's value counts as flat for the innermost frame of its leaf
//     location (inlined frames are frames: Location[0].Line[0]);
//   - it counts once as cum for every function on the stack, even when the
//     function recurses;
//   - samples whose value is zero, or that filter rejects, are skipped;
//     functions with zero flat and cum are not reported;
//   - the profile's DropFrames/KeepFrames are applied first, as pprof does;
//   - rows are ordered by |flat| desc, then name asc, then |cum| desc;
//   - rows carry pprof's "(inline)"/"(partial-inline)" label (InlineEdges).
//
// It returns nil if sampleIndex is out of range. p is not modified.
func Top(p *profile.Profile, sampleIndex int, filter func(*profile.Sample) bool) []Row {
	if p == nil || sampleIndex < 0 || sampleIndex >= len(p.SampleType) {
		return nil
	}
	g, p := NewGraph(p) // the same nodes, named the same way, as extraction
	rows := make([]Row, len(g.Nodes))
	for i, n := range g.Nodes {
		rows[i] = Row{Function: n.Name, File: n.File, StartLine: n.StartLine, Module: n.Module, Unsymbolized: n.Unsymbolized}
	}
	seen := make([]uint32, len(rows))
	var gen uint32
	var stack []int
	var outer []bool
	inl := NewInlineEdges()
	for _, s := range p.Sample {
		if sampleIndex >= len(s.Value) {
			continue
		}
		v := s.Value[sampleIndex]
		if v == 0 || len(s.Location) == 0 || (filter != nil && !filter(s)) {
			continue
		}
		gen++
		stack, outer = g.Stack(s, stack), g.Outer(s, outer)
		inl.Add(stack, outer, v)
		for _, n := range stack {
			if seen[n] != gen {
				seen[n] = gen
				rows[n].Cum += v
			}
		}
		if ns := g.nodes(s.Location[0]); len(ns) > 0 {
			rows[ns[0]].Flat += v
		}
	}
	labels, _ := inl.Labels(len(rows))
	out := make([]Row, 0, len(rows))
	for i, r := range rows {
		r.Inline = labels[i]
		if r.Flat != 0 || r.Cum != 0 {
			out = append(out, r)
		}
	}
	slices.SortStableFunc(out, func(a, b Row) int {
		return cmp.Or(
			cmp.Compare(abs(b.Flat), abs(a.Flat)),
			cmp.Compare(a.Function, b.Function),
			cmp.Compare(abs(b.Cum), abs(a.Cum)),
			cmp.Compare(a.Module, b.Module),
		)
	})
	return out
}

// Totals returns the sum of |value| over all samples for one sample type
// (pprof's total, the denominator of its percentages) and the number of
// sample records with a non-zero value. A record may stand for many
// samples (a Go CPU profile merges equal stacks; a folded line is a count);
// use a count sample type for the number of samples taken.
func Totals(p *profile.Profile, sampleIndex int) (total, samples int64) {
	if p == nil || sampleIndex < 0 || sampleIndex >= len(p.SampleType) {
		return 0, 0
	}
	for _, s := range p.Sample {
		if sampleIndex >= len(s.Value) {
			continue
		}
		if v := s.Value[sampleIndex]; v != 0 {
			total += abs(v)
			samples++
		}
	}
	return total, samples
}

func abs(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}
