package profile

import "github.com/google/pprof/profile"

// checkValid gives pprof's (*profile.Profile).CheckValid verdict, which
// fromPprof must ask for (pprof's decoder accepts profiles its own check
// refuses).
//
// Why not CheckValid alone: it builds three maps keyed by ID, one entry
// per mapping, function and location, and on a profile of 10^6 locations
// those maps were a quarter of the parse, all of it before the import's
// other work can start (docs/performance.md). Producers number IDs from 1
// up, so validDense does the same lookups in slices indexed by ID. When it
// cannot vouch for the profile (IDs too sparse for a slice, or anything
// CheckValid would refuse), pprof's own check decides and words the error.
func checkValid(p *profile.Profile) error {
	if validDense(p) {
		return nil
	}
	return p.CheckValid()
}

// validDense reports true only for a profile CheckValid accepts: every
// condition CheckValid checks is checked here the same way. False means
// "ask CheckValid", not "invalid".
func validDense(p *profile.Profile) bool {
	n := len(p.SampleType)
	if n == 0 && len(p.Sample) != 0 {
		return false
	}
	for _, s := range p.Sample {
		if s == nil || len(s.Value) != n {
			return false
		}
		for _, l := range s.Location {
			if l == nil {
				return false
			}
		}
	}
	mappings, ok := byID(p.Mapping, func(m *profile.Mapping) uint64 { return m.ID })
	if !ok {
		return false
	}
	functions, ok := byID(p.Function, func(f *profile.Function) uint64 { return f.ID })
	if !ok {
		return false
	}
	// Locations are only checked for duplicates: a set of IDs will do.
	maxLoc, ok := maxID(p.Location, func(l *profile.Location) uint64 { return l.ID })
	if !ok {
		return false
	}
	seen := make([]uint64, maxLoc/64+1)
	for _, l := range p.Location {
		w, bit := l.ID/64, uint64(1)<<(l.ID%64)
		if seen[w]&bit != 0 {
			return false
		}
		seen[w] |= bit
		if m := l.Mapping; m != nil && (m.ID == 0 || m.ID >= uint64(len(mappings)) || mappings[m.ID] != m) {
			return false
		}
		for _, ln := range l.Line {
			f := ln.Function
			if f == nil || f.ID == 0 || f.ID >= uint64(len(functions)) || functions[f.ID] != f {
				return false
			}
		}
	}
	return true
}

// denseSlack bounds how sparse IDs may be for a table indexed by them: the
// largest ID at most twice the entries plus this. Sparser IDs go to
// CheckValid's maps.
const denseSlack = 1024

// maxID returns the largest of the items' IDs, false for a nil item, an
// ID of 0 or IDs too sparse to index a slice by.
func maxID[T any](items []*T, id func(*T) uint64) (uint64, bool) {
	var top uint64
	for _, it := range items {
		if it == nil {
			return 0, false
		}
		v := id(it)
		if v == 0 {
			return 0, false
		}
		top = max(top, v)
	}
	if top > 2*uint64(len(items))+denseSlack {
		return 0, false
	}
	return top, true
}

// byID returns the items in a slice indexed by ID, false where maxID is
// or an ID repeats.
func byID[T any](items []*T, id func(*T) uint64) ([]*T, bool) {
	top, ok := maxID(items, id)
	if !ok {
		return nil, false
	}
	table := make([]*T, top+1)
	for _, it := range items {
		v := id(it)
		if table[v] != nil {
			return nil, false
		}
		table[v] = it
	}
	return table, true
}
