package heaptrack

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	gprof "github.com/google/pprof/profile"

	"github.com/flameox/flameox/pkg/adapter"
	"github.com/flameox/flameox/pkg/adapter/stacks"
	"github.com/flameox/flameox/pkg/config"
	"github.com/flameox/flameox/pkg/fault"
)

// SampleType names the bytes each stack held at the peak in frames and
// stacks, as Go heap profiles name live bytes.
const SampleType = "inuse_space"

// PeakStack is one line of heaptrack_print's flame-graph output with the
// peak cost type: the bytes a backtrace held at the moment of the peak,
// exact (not rounded), frames outermost first.
type PeakStack struct {
	Frames []Frame
	Bytes  int64
}

// ParsePeakStacks reads `heaptrack_print -F FILE --flamegraph-cost-type
// peak` output: "outer (file.c);inner; BYTES" per line. It is bounded by
// lim as ParseReport is; lines of zero bytes are dropped.
func ParsePeakStacks(r io.Reader, lim config.Limits) ([]PeakStack, error) {
	lim = withDefaults(lim)
	var out []PeakStack
	var frames, n, str int64
	seen := map[string]Frame{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	for sc.Scan() {
		n++
		l := string(sc.Bytes()) // the line's frames are cut from it, then interned
		if l == "" {
			continue
		}
		i := strings.LastIndexByte(l, ' ')
		if i < 0 {
			return nil, fmt.Errorf("%w: flame-graph line %d has no cost", ErrReport, n)
		}
		v, err := strconv.ParseInt(l[i+1:], 10, 64)
		if err != nil || v < 0 {
			return nil, fmt.Errorf("%w: flame-graph line %d: cost %q", ErrReport, n, clip(l[i+1:]))
		}
		if v == 0 {
			continue
		}
		if int64(len(out)) >= lim.MaxSamples {
			return nil, fmt.Errorf("%w: more than %d flame-graph stacks (limits.max_samples)", ErrReport, lim.MaxSamples)
		}
		parts := strings.Split(strings.TrimSuffix(l[:i], ";"), ";")
		if int64(len(parts)) > lim.MaxStackDepth {
			return nil, fmt.Errorf("%w: flame-graph line %d deeper than %d frames (limits.max_stack_depth)", ErrReport, n, lim.MaxStackDepth)
		}
		frames += int64(len(parts))
		if frames > lim.MaxStackFrames {
			return nil, fmt.Errorf("%w: more than %d flame-graph frames (limits.max_stack_frames)", ErrReport, lim.MaxStackFrames)
		}
		s := PeakStack{Bytes: v, Frames: make([]Frame, 0, len(parts))}
		for _, p := range parts {
			f, ok := seen[p]
			if !ok {
				// Names are kept once however many stacks repeat them.
				str += int64(len(p))
				if str > lim.MaxStringBytes {
					return nil, fmt.Errorf("%w: more than %d bytes of names (limits.max_string_bytes)", ErrReport, lim.MaxStringBytes)
				}
				p = strings.Clone(p)
				f = Frame{Function: p}
				if j := strings.LastIndex(p, " ("); j > 0 && strings.HasSuffix(p, ")") {
					f.Function, f.File = p[:j], p[j+2:len(p)-1]
				}
				seen[p] = f
			}
			s.Frames = append(s.Frames, f)
		}
		out = append(out, s)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: flame-graph line %d: %v", ErrReport, n+1, err)
	}
	return out, nil
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

// Profile is the peak stacks as a pprof heap profile (inuse_space,
// bytes), leaf first as pprof wants.
func Profile(ps []PeakStack) *gprof.Profile {
	p := &gprof.Profile{SampleType: []*gprof.ValueType{{Type: SampleType, Unit: "bytes"}}, DefaultSampleType: SampleType,
		PeriodType: &gprof.ValueType{Type: "space", Unit: "bytes"}, Period: 1}
	funcs, locs := map[Frame]*gprof.Function{}, map[Frame]*gprof.Location{}
	for _, s := range ps {
		st := make([]*gprof.Location, len(s.Frames))
		for i, f := range s.Frames {
			l := locs[f]
			if l == nil {
				fn := funcs[f]
				if fn == nil {
					fn = &gprof.Function{ID: uint64(len(funcs) + 1), Name: f.Function, SystemName: f.Function, Filename: f.File}
					funcs[f] = fn
					p.Function = append(p.Function, fn)
				}
				l = &gprof.Location{ID: uint64(len(locs) + 1), Line: []gprof.Line{{Function: fn}}}
				locs[f] = l
				p.Location = append(p.Location, l)
			}
			st[len(s.Frames)-1-i] = l
		}
		p.Sample = append(p.Sample, &gprof.Sample{Location: st, Value: []int64{s.Bytes}})
	}
	return p
}

// stackRows hands the peak stacks, as a heap profile, to the profile
// extractor, so that hotspots, callers and stacks read heaptrack's bytes
// as they read a Go heap profile's.
func stackRows(ctx context.Context, ps []PeakStack, in adapter.ExtractInput, sink adapter.Sink, res *adapter.Extraction) error {
	if len(ps) == 0 {
		return nil
	}
	dir, err := os.MkdirTemp("", "flameox-heaptrack-")
	if err != nil {
		return fault.Wrap(fault.InternalError, err, "heaptrack stacks of %s", in.ArtifactID)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "peak.pb.gz")
	f, err := os.Create(path)
	if err != nil {
		return fault.Wrap(fault.InternalError, err, "heaptrack stacks of %s", in.ArtifactID)
	}
	err = Profile(ps).Write(f)
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
