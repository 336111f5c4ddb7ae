package analysis

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/flameox/flameox/pkg/catalog"
	"github.com/flameox/flameox/pkg/query"
)

// roleTypes are the sample types that hold each kind of stack, by
// collector: what each stack held at the peak, what it still held at
// exit, and what it allocated over the run.
var roleTypes = map[string]map[string]string{
	"memray":    {"peak": "peak_space", "retained": "retained_space"},
	"massif":    {"peak": "inuse_space"},
	"heaptrack": {"peak": "inuse_space", "retained": "retained_space", "allocated": "alloc_objects"},
	"go":        {"retained": "inuse_space", "allocated": "alloc_space"},
}

// stackConcept says what a list's values are.
func stackConcept(collector, role string) string {
	switch role + "/" + collector {
	case "peak/memray":
		return "bytes each stack held at the peak (memray transform csv at the high-water mark)"
	case "peak/massif":
		return "bytes each allocation stack held at the peak snapshot (massif's detailed tree)"
	case "peak/heaptrack":
		return "bytes each backtrace held at the peak (heaptrack_print's peak cost)"
	case "retained/memray":
		return "bytes each stack still held when tracking stopped (memray transform csv --leaks)"
	case "retained/heaptrack":
		return "bytes each backtrace leaked: still held at exit (heaptrack_print's leaked cost)"
	case "retained/go":
		return "bytes each stack held live at the profile (inuse_space, sampled estimate)"
	case "allocated/heaptrack":
		return "allocations each backtrace made over the run (heaptrack_print's allocations cost)"
	case "allocated/go":
		return "bytes each stack allocated over the program's life (alloc_space, sampled estimate)"
	}
	return ""
}

// roleSources are the captures that carry a role's sample type (the
// first capture's collector decides which type).
func roleSources(caps []*memCapture, role string) (string, string, []*memCapture) {
	var st, unit string
	var out []*memCapture
	for _, c := range caps {
		t := roleTypes[c.src.Collector][role]
		if t == "" {
			continue
		}
		u, ok := c.types[t]
		if !ok {
			continue
		}
		if st == "" {
			st, unit = t, u
		}
		if t == st {
			out = append(out, c)
		}
	}
	return st, unit, out
}

// sourceFilter is the SQL that selects the stacks (or frames) of some
// captures, binding their ids as parameters after args.
func sourceFilter(caps []*memCapture, args *[]any, withRun bool) string {
	param := func(v string) string {
		*args = append(*args, v)
		return "$" + strconv.Itoa(len(*args))
	}
	var or []string
	for _, c := range caps {
		if withRun {
			or = append(or, fmt.Sprintf("(run_id = %s AND artifact_id = %s AND evidence_generation_id = %s)", param(c.src.RunID), param(c.src.ArtifactID), param(c.src.GenerationID)))
		} else {
			or = append(or, fmt.Sprintf("(artifact_id = %s AND evidence_generation_id = %s)", param(c.src.ArtifactID), param(c.src.GenerationID)))
		}
	}
	return "(" + strings.Join(or, " OR ") + ")"
}

// maxMemoryDepth bounds the frames a memory result gives per stack (the
// leaf side: the allocation site and its callers); get_stack_examples
// gives whole stacks.
const maxMemoryDepth = 8

// frameTail is the frames of a page's stacks, the leaf side kept.
var frameTail = `unnest(page.frame_ids[greatest(len(page.frame_ids) - ` + strconv.Itoa(maxMemoryDepth) + ` + 1, 1):]) WITH ORDINALITY AS u(fid, pos)`

// topStacks ranks the stacks of a role over the captures that carry it:
// each stack's value is its mean per capture. Stacks are matched by their
// frames (frame ids of named functions are the same in every artifact;
// stack ids are not, they hash the artifact), across threads.
func topStacks(ctx context.Context, s *query.Session, caps []*memCapture, role string, limit int) (*MemoryStacks, error) {
	st, unit, srcs := roleSources(caps, role)
	if st == "" {
		return nil, nil
	}
	args := []any{st, limit, float64(len(srcs))}
	stacksWhere := sourceFilter(srcs, &args, true)
	framesWhere := sourceFilter(srcs, &args, false)
	q := catalog.Query{Name: "analysis.memory_stacks", Version: "1", SQL: `
WITH g AS (
  SELECT min(stack_id) AS stack_id, frame_ids, CAST(round(sum(value) / $3) AS BIGINT) AS value
  FROM stacks WHERE metric = $1 AND ` + stacksWhere + `
  GROUP BY frame_ids),
t AS (SELECT count(*) FILTER (WHERE value <> 0) AS n, coalesce(sum(value), 0) AS total FROM g),
page AS (SELECT * FROM g WHERE value <> 0 ORDER BY abs(value) DESC, stack_id LIMIT $2),
f AS (SELECT frame_id, any_value(function) AS function, any_value(file) AS file FROM frames WHERE ` + framesWhere + ` GROUP BY frame_id)
SELECT page.stack_id, page.value, t.n, t.total, len(page.frame_ids), coalesce(u.fid, ''), coalesce(f.function, ''), coalesce(f.file, '')
FROM page, t, ` + frameTail + `
LEFT JOIN f ON f.frame_id = u.fid
ORDER BY abs(page.value) DESC, page.stack_id, u.pos`}
	out := &MemoryStacks{Role: role, SampleType: st, Unit: unit, Concept: stackConcept(srcs[0].src.Collector, role), Stacks: []MemoryStack{}}
	if len(srcs) > 1 {
		out.Concept += fmt.Sprintf("; the mean over %d captures", len(srcs))
	}
	err := s.R.Scan(ctx, q, args, func(r *sql.Rows) error {
		for r.Next() {
			var id, fid, fn, file string
			var v, depth int64
			if err := r.Scan(&id, &v, &out.Page.Total, &out.Total, &depth, &fid, &fn, &file); err != nil {
				return err
			}
			if n := len(out.Stacks); n == 0 || out.Stacks[n-1].StackID != id {
				out.Stacks = append(out.Stacks, MemoryStack{StackID: id, Value: v, Depth: int(depth), Truncated: depth > maxMemoryDepth, Frames: []MemoryFrame{}})
			}
			last := &out.Stacks[len(out.Stacks)-1]
			last.Frames = append(last.Frames, MemoryFrame{Function: fn, File: file})
			last.LeafFrameID = fid
		}
		return r.Err()
	})
	if err != nil {
		return nil, err
	}
	for i := range out.Stacks {
		out.Stacks[i].Fraction = frac(out.Stacks[i].Value, out.Total)
	}
	out.Returned = len(out.Stacks)
	out.Truncated = out.Page.Total > int64(out.Returned)
	return out, nil
}

// memoryGrowth compares the two sides' stacks under the first role both
// carry (retained, then peak, then allocated): each stack's mean per
// capture on each side, the stacks that grew most first.
func memoryGrowth(ctx context.Context, s *query.Session, base, cand *MemorySide, limit int) (*MemoryGrowth, error) {
	for _, role := range []string{"retained", "peak", "allocated"} {
		b, c := roleList(base, role), roleList(cand, role)
		if b == nil || c == nil || b.SampleType != c.SampleType || b.Unit != c.Unit {
			continue
		}
		bs, cs := base.roleCaptures(role), cand.roleCaptures(role)
		args := []any{b.SampleType, limit, float64(len(bs)), float64(len(cs))}
		bw := sourceFilter(bs, &args, true)
		cw := sourceFilter(cs, &args, true)
		fw := sourceFilter(append(append([]*memCapture{}, bs...), cs...), &args, false)
		q := catalog.Query{Name: "analysis.memory_growth", Version: "1", SQL: `
WITH b AS (SELECT min(stack_id) AS stack_id, frame_ids, sum(value) / $3 AS v FROM stacks WHERE metric = $1 AND ` + bw + ` GROUP BY frame_ids),
c AS (SELECT min(stack_id) AS stack_id, frame_ids, sum(value) / $4 AS v FROM stacks WHERE metric = $1 AND ` + cw + ` GROUP BY frame_ids),
e AS (SELECT coalesce(c.stack_id, b.stack_id) AS stack_id, coalesce(b.frame_ids, c.frame_ids) AS frame_ids,
             CAST(round(coalesce(b.v, 0)) AS BIGINT) AS bv, CAST(round(coalesce(c.v, 0)) AS BIGINT) AS cv
      FROM b FULL OUTER JOIN c ON b.frame_ids = c.frame_ids),
t AS (SELECT count(*) FILTER (WHERE cv > bv AND bv <> 0) AS grew, count(*) FILTER (WHERE bv = 0 AND cv <> 0) AS new,
             count(*) FILTER (WHERE cv < bv AND cv <> 0) AS shrank, count(*) FILTER (WHERE cv = 0 AND bv <> 0) AS gone,
             coalesce(sum(bv), 0) AS btotal, coalesce(sum(cv), 0) AS ctotal FROM e),
page AS (SELECT *, cv - bv AS delta FROM e WHERE cv > bv ORDER BY cv - bv DESC, stack_id LIMIT $2),
pu AS (SELECT page.stack_id, page.bv, page.cv, page.delta, len(page.frame_ids) AS depth, u.fid, u.pos FROM page, ` + frameTail + `),
f AS (SELECT frame_id, any_value(function) AS function, any_value(file) AS file FROM frames WHERE ` + fw + ` GROUP BY frame_id)
SELECT t.grew, t.new, t.shrank, t.gone, t.btotal, t.ctotal, coalesce(pu.stack_id, ''), coalesce(pu.bv, 0), coalesce(pu.cv, 0),
       coalesce(pu.depth, 0), coalesce(pu.fid, ''), coalesce(f.function, ''), coalesce(f.file, '')
FROM t LEFT JOIN pu ON true
LEFT JOIN f ON f.frame_id = pu.fid
ORDER BY pu.delta DESC NULLS LAST, pu.stack_id, pu.pos`}
		g := &MemoryGrowth{Role: role, SampleType: b.SampleType, Unit: b.Unit, Stacks: []MemoryStackChange{}}
		err := s.R.Scan(ctx, q, args, func(r *sql.Rows) error {
			for r.Next() {
				var id, fid, fn, file string
				var bv, cv, depth int64
				if err := r.Scan(&g.Grew, &g.New, &g.Shrank, &g.Gone, &g.BaseTotal, &g.CandidateTotal, &id, &bv, &cv, &depth, &fid, &fn, &file); err != nil {
					return err
				}
				if id == "" {
					continue
				}
				if n := len(g.Stacks); n == 0 || g.Stacks[n-1].StackID != id {
					st := "grew"
					if bv == 0 {
						st = "new"
					}
					g.Stacks = append(g.Stacks, MemoryStackChange{StackID: id, Base: bv, Candidate: cv, Delta: cv - bv, Status: st,
						Depth: int(depth), Truncated: depth > maxMemoryDepth, Frames: []MemoryFrame{}})
				}
				last := &g.Stacks[len(g.Stacks)-1]
				last.Frames = append(last.Frames, MemoryFrame{Function: fn, File: file})
				last.LeafFrameID = fid
			}
			return r.Err()
		})
		if err != nil {
			return nil, err
		}
		g.Delta = g.CandidateTotal - g.BaseTotal
		g.Returned = len(g.Stacks)
		g.Page.Total = g.Grew + g.New
		g.Truncated = g.Page.Total > int64(g.Returned)
		return g, nil
	}
	return nil, nil
}

func roleList(side *MemorySide, role string) *MemoryStacks {
	switch role {
	case "retained":
		return side.Retained
	case "peak":
		return side.Peak
	}
	return side.Allocated
}

// roleCaptures rebuilds the captures a side's role list was read from.
func (side *MemorySide) roleCaptures(role string) []*memCapture {
	l := roleList(side, role)
	var out []*memCapture
	for _, src := range side.Sources {
		if roleTypes[src.Collector][role] == l.SampleType {
			out = append(out, &memCapture{src: src})
		}
	}
	return out
}

// timeline is a capture's heap over time from its memory.snapshot.*
// rows, bounded, with its growth by phase.
func timeline(c *memCapture, points int) *MemoryTimeline {
	byIdx := map[int64]*MemoryPoint{}
	unit := ""
	for _, r := range c.rows {
		if r.index < 0 || !strings.HasPrefix(r.name, "memory.snapshot.") {
			continue
		}
		p, ok := byIdx[r.index]
		if !ok {
			t, _ := strconv.ParseInt(r.time, 10, 64)
			p = &MemoryPoint{Index: r.index, Time: t}
			byIdx[r.index] = p
		}
		if r.timeUnit != "" {
			unit = r.timeUnit
		}
		v := r.value
		switch r.name {
		case "memory.snapshot.heap":
			p.Heap = v
		case "memory.snapshot.heap_extra":
			p.HeapExtra = &v
		case "memory.snapshot.stacks":
			p.Stacks = &v
		case "memory.snapshot.rss":
			p.RSS = &v
		}
	}
	if len(byIdx) == 0 {
		return nil
	}
	pts := make([]MemoryPoint, 0, len(byIdx))
	for _, p := range byIdx {
		pts = append(pts, *p)
	}
	sort.Slice(pts, func(i, j int) bool { return pts[i].Index < pts[j].Index })
	tl := &MemoryTimeline{RunID: c.src.RunID, ArtifactID: c.src.ArtifactID, Collector: c.src.Collector, TimeUnit: unit, Phases: []MemoryPhase{}}
	peak := 0
	for i, p := range pts {
		if heapOf(p) > heapOf(pts[peak]) {
			peak = i
		}
	}
	tl.Peak = pts[peak]
	tl.Phases, tl.Steepest = phases(pts, peak)
	tl.Page.Total = int64(len(pts))
	tl.Points = thin(pts, peak, points)
	tl.Returned = len(tl.Points)
	tl.Truncated = tl.Returned < len(pts)
	return tl
}

// heapOf is a point's heap with its extra bytes, as memory.peak_heap
// counts them.
func heapOf(p MemoryPoint) int64 {
	if p.HeapExtra != nil {
		return p.Heap + *p.HeapExtra
	}
	return p.Heap
}

// minQuarterPoints is the fewest snapshots a timeline is split into
// quarters from: with fewer, most quarters would hold no snapshot.
const minQuarterPoints = 8

// phases splits the timeline's time axis into quarters (from 8
// snapshots), and at the peak into the growth to it and what followed;
// the heap at a moment is the last snapshot's at or before it (snapshots
// are samples of a step function). Snapshots without a usable time (all
// at one instant) have no phases.
func phases(pts []MemoryPoint, peak int) ([]MemoryPhase, string) {
	out := []MemoryPhase{}
	if len(pts) < 2 {
		return out, ""
	}
	t0, tn := pts[0].Time, pts[len(pts)-1].Time
	if tn <= t0 {
		return out, ""
	}
	at := func(t int64) int64 {
		i := sort.Search(len(pts), func(i int) bool { return pts[i].Time > t })
		if i == 0 {
			return heapOf(pts[0])
		}
		return heapOf(pts[i-1])
	}
	steepest, best := "", int64(0)
	for k := int64(0); k < 4 && len(pts) >= minQuarterPoints; k++ {
		from, to := t0+(tn-t0)*k/4, t0+(tn-t0)*(k+1)/4
		ph := MemoryPhase{Name: fmt.Sprintf("%d-%d%%", k*25, (k+1)*25), From: from, To: to, Start: at(from), End: at(to)}
		ph.Growth = ph.End - ph.Start
		if ph.Growth > best {
			steepest, best = ph.Name, ph.Growth
		}
		out = append(out, ph)
	}
	p := pts[peak]
	out = append(out,
		MemoryPhase{Name: "to the peak", From: t0, To: p.Time, Start: heapOf(pts[0]), End: heapOf(p), Growth: heapOf(p) - heapOf(pts[0])},
		MemoryPhase{Name: "after the peak", From: p.Time, To: tn, Start: heapOf(p), End: heapOf(pts[len(pts)-1]), Growth: heapOf(pts[len(pts)-1]) - heapOf(p)})
	return out, steepest
}

// thin keeps at most n points, evenly spaced, always the first, the last
// and the peak.
func thin(pts []MemoryPoint, peak, n int) []MemoryPoint {
	if len(pts) <= n {
		return pts
	}
	keep := map[int]bool{0: true, len(pts) - 1: true, peak: true}
	for i := 0; i < n-3; i++ {
		keep[i*(len(pts)-1)/(n-3)] = true
	}
	out := make([]MemoryPoint, 0, n)
	for i, p := range pts {
		if keep[i] {
			out = append(out, p)
		}
	}
	return out
}
