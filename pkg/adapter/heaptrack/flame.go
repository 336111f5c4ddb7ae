package heaptrack

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"hash/maphash"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	gprof "github.com/google/pprof/profile"

	"github.com/flameox/flameox/pkg/adapter"
	"github.com/flameox/flameox/pkg/adapter/stacks"
	"github.com/flameox/flameox/pkg/config"
	"github.com/flameox/flameox/pkg/fault"
)

// Cost is one cost type of heaptrack_print's flame graph
// (--flamegraph-cost-type) and the sample type it becomes in frames and
// stacks.
type Cost struct {
	Flag       string // heaptrack_print's name of the cost type
	SampleType string
	Unit       string
}

// The cost types, in the order of the profile's sample types. Peak is the
// default sample type, as a Go heap profile's live bytes are.
var (
	CostPeak      = Cost{"peak", "inuse_space", "bytes"}
	CostLeaked    = Cost{"leaked", "retained_space", "bytes"}
	CostAllocs    = Cost{"allocations", "alloc_objects", "count"}
	CostTemporary = Cost{"temporary", "temporary_objects", "count"}
)

// SampleType is the default sample type: the bytes each stack held at the
// peak, as Go heap profiles name live bytes.
const SampleType = "inuse_space"

// FlameGraphs merges heaptrack_print's flame-graph files of several cost
// types: one Stack per backtrace with a cost in any of them, its values
// by column (Costs). Backtraces are matched by their frames, not by line
// position, though heaptrack_print writes every backtrace in the same
// order for every cost type.
type FlameGraphs struct {
	Costs  []Cost
	Stacks []CostStack
	// Lines is how many lines each column's file had (every backtrace
	// heaptrack_print knows, costs of zero included).
	Lines []int64

	lim                  config.Limits
	frames               []Frame // interned, by id
	ids                  map[string]int32
	byHash               map[uint64][]int32
	seed                 maphash.Seed
	buf                  []int32
	keptFrames, strBytes int64
}

// CostStack is one backtrace, frames outermost first (ids into Frames),
// and its cost by column.
type CostStack struct {
	ids    []int32
	Values []int64
}

// NewFlameGraphs returns an empty merge of the given cost types, bounded
// by lim: backtraces kept (MaxSamples), frames in all of them
// (MaxStackFrames), in one (MaxStackDepth), and the bytes of the names
// (MaxStringBytes). Backtraces of zero cost in every column are not kept.
func NewFlameGraphs(costs []Cost, lim config.Limits) *FlameGraphs {
	return &FlameGraphs{Costs: costs, Lines: make([]int64, len(costs)), lim: withDefaults(lim),
		ids: map[string]int32{}, byHash: map[uint64][]int32{}, seed: maphash.MakeSeed()}
}

// Frames returns stack s's frames, outermost first.
func (g *FlameGraphs) Frames(s CostStack) []Frame {
	out := make([]Frame, len(s.ids))
	for i, id := range s.ids {
		out[i] = g.frames[id]
	}
	return out
}

// Total is the sum of column col over every backtrace.
func (g *FlameGraphs) Total(col int) int64 {
	var t int64
	for _, s := range g.Stacks {
		t += s.Values[col]
	}
	return t
}

// Read reads column col from `heaptrack_print -F FILE
// --flamegraph-cost-type TYPE` output: "outer (file.c);inner; COST" per
// line.
func (g *FlameGraphs) Read(col int, r io.Reader) error {
	var n int64
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	for sc.Scan() {
		n++
		l := sc.Bytes()
		if len(l) == 0 {
			continue
		}
		i := bytes.LastIndexByte(l, ' ')
		if i < 0 {
			return fmt.Errorf("%w: flame-graph line %d has no cost", ErrReport, n)
		}
		v, ok := parseCost(l[i+1:])
		if !ok {
			return fmt.Errorf("%w: flame-graph line %d: cost %q", ErrReport, n, clip(string(l[i+1:])))
		}
		if v == 0 {
			continue
		}
		if err := g.add(col, bytes.TrimSuffix(l[:i], []byte(";")), v, n); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%w: flame-graph line %d: %v", ErrReport, n+1, err)
	}
	g.Lines[col] = n
	return nil
}

// parseCost reads a non-negative decimal count without allocating.
func parseCost(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	var v int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	return v, true
}

func (g *FlameGraphs) add(col int, stack []byte, v, line int64) error {
	ids := g.buf[:0]
	for len(stack) > 0 || len(ids) == 0 {
		part := stack
		if j := bytes.IndexByte(stack, ';'); j >= 0 {
			part, stack = stack[:j], stack[j+1:]
		} else {
			stack = nil
		}
		if int64(len(ids)) >= g.lim.MaxStackDepth {
			return fmt.Errorf("%w: flame-graph line %d deeper than %d frames (limits.max_stack_depth)", ErrReport, line, g.lim.MaxStackDepth)
		}
		id, ok := g.ids[string(part)]
		if !ok {
			// Names are kept once however many stacks repeat them.
			g.strBytes += int64(len(part))
			if g.strBytes > g.lim.MaxStringBytes {
				return fmt.Errorf("%w: more than %d bytes of names (limits.max_string_bytes)", ErrReport, g.lim.MaxStringBytes)
			}
			p := string(part)
			f := Frame{Function: p}
			if j := strings.LastIndex(p, " ("); j > 0 && strings.HasSuffix(p, ")") {
				f.Function, f.File = p[:j], p[j+2:len(p)-1]
			}
			id = int32(len(g.frames))
			g.frames = append(g.frames, f)
			g.ids[p] = id
		}
		ids = append(ids, id)
	}
	g.buf = ids
	h := g.hash(ids)
	for _, k := range g.byHash[h] {
		if slices.Equal(g.Stacks[k].ids, ids) {
			g.Stacks[k].Values[col] += v
			return nil
		}
	}
	if int64(len(g.Stacks)) >= g.lim.MaxSamples {
		return fmt.Errorf("%w: more than %d flame-graph stacks (limits.max_samples)", ErrReport, g.lim.MaxSamples)
	}
	g.keptFrames += int64(len(ids))
	if g.keptFrames > g.lim.MaxStackFrames {
		return fmt.Errorf("%w: more than %d flame-graph frames (limits.max_stack_frames)", ErrReport, g.lim.MaxStackFrames)
	}
	s := CostStack{ids: slices.Clone(ids), Values: make([]int64, len(g.Costs))}
	s.Values[col] = v
	g.byHash[h] = append(g.byHash[h], int32(len(g.Stacks)))
	g.Stacks = append(g.Stacks, s)
	return nil
}

func (g *FlameGraphs) hash(ids []int32) uint64 {
	var h maphash.Hash
	h.SetSeed(g.seed)
	var b [4]byte
	for _, id := range ids {
		b[0], b[1], b[2], b[3] = byte(id), byte(id>>8), byte(id>>16), byte(id>>24)
		h.Write(b[:])
	}
	return h.Sum64()
}

func withDefaults(lim config.Limits) config.Limits {
	def := config.DefaultLimits()
	if lim.MaxSamples <= 0 {
		lim.MaxSamples = def.MaxSamples
	}
	if lim.MaxStackFrames <= 0 {
		lim.MaxStackFrames = def.MaxStackFrames
	}
	if lim.MaxStackDepth <= 0 {
		lim.MaxStackDepth = def.MaxStackDepth
	}
	if lim.MaxStringBytes <= 0 {
		lim.MaxStringBytes = def.MaxStringBytes
	}
	return lim
}

// Profile is the merged stacks as a pprof heap profile, one sample type
// per column (the first is the default), leaf first as pprof wants.
func (g *FlameGraphs) Profile() *gprof.Profile {
	p := &gprof.Profile{DefaultSampleType: g.Costs[0].SampleType,
		PeriodType: &gprof.ValueType{Type: "space", Unit: "bytes"}, Period: 1}
	for _, c := range g.Costs {
		p.SampleType = append(p.SampleType, &gprof.ValueType{Type: c.SampleType, Unit: c.Unit})
	}
	locs := make([]*gprof.Location, len(g.frames))
	funcs := map[Frame]*gprof.Function{}
	for _, s := range g.Stacks {
		st := make([]*gprof.Location, len(s.ids))
		for i, id := range s.ids {
			l := locs[id]
			if l == nil {
				f := g.frames[id]
				fn := funcs[f]
				if fn == nil {
					fn = &gprof.Function{ID: uint64(len(funcs) + 1), Name: f.Function, SystemName: f.Function, Filename: f.File}
					funcs[f] = fn
					p.Function = append(p.Function, fn)
				}
				l = &gprof.Location{ID: uint64(len(p.Location) + 1), Line: []gprof.Line{{Function: fn}}}
				locs[id] = l
				p.Location = append(p.Location, l)
			}
			st[len(s.ids)-1-i] = l
		}
		p.Sample = append(p.Sample, &gprof.Sample{Location: st, Value: slices.Clone(s.Values)})
	}
	return p
}

// stackRows hands the merged stacks, as a heap profile, to the profile
// extractor, so that hotspots, callers and stacks read heaptrack's costs
// as they read a Go heap profile's.
func stackRows(ctx context.Context, g *FlameGraphs, in adapter.ExtractInput, sink adapter.Sink, res *adapter.Extraction) error {
	if len(g.Stacks) == 0 {
		return nil
	}
	dir, err := os.MkdirTemp("", "flameox-heaptrack-")
	if err != nil {
		return fault.Wrap(fault.InternalError, err, "heaptrack stacks of %s", in.ArtifactID)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "stacks.pb")
	f, err := os.Create(path)
	if err != nil {
		return fault.Wrap(fault.InternalError, err, "heaptrack stacks of %s", in.ArtifactID)
	}
	err = g.Profile().WriteUncompressed(f) // read back at once: not worth compressing
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fault.Wrap(fault.InternalError, err, "heaptrack stacks of %s", in.ArtifactID)
	}
	sub := in
	sub.Path = path
	if sub.Head, err = readHead(path, 64<<10); err != nil {
		return fault.Wrap(fault.InternalError, err, "heaptrack stacks of %s", in.ArtifactID)
	}
	x, err := stacks.NewExtractor().Extract(ctx, sub, sink)
	if err != nil {
		return err
	}
	for k, v := range x.Rows {
		res.Rows[k] += v
	}
	res.Limitations = append(res.Limitations, x.Limitations...)
	return nil
}
