package profile

import (
	"bufio"
	"bytes"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/google/pprof/profile"
)

// This file holds the builder that every converter uses to turn foreign
// stacks into pprof Locations, and the folded-stacks converter, its simplest
// user.

// frame is one stack frame of a foreign format before it becomes a pprof
// Location. A frame without a name is unsymbolized: it becomes a Location
// with an address and a module but no Line.
type frame struct {
	name    string // function name as shown ("" = unsymbolized)
	sysName string // raw (mangled) name, if different
	file    string
	line    int64
	addr    uint64
	module  string // dso / binary / map file; "" = unknown
}

// builder interns functions, locations and mappings while a converter adds
// samples, so that equal frames share one Location as pprof expects.
type builder struct {
	p     *profile.Profile
	funcs map[[3]string]*profile.Function
	locs  map[frame]*profile.Location
	maps  map[string]*profile.Mapping
	// unsymbolized counts locations without a function name.
	unsymbolized int
	// What the builder creates is counted against the limits; err is the
	// first count over its limit (callers check it after each sample).
	format               Format
	nLocs, nFuncs, nMaps counter
	strBytes             counter
	err                  error
}

func newBuilder(f Format, l Limits, types ...*profile.ValueType) *builder {
	return &builder{
		p:        &profile.Profile{SampleType: types},
		funcs:    map[[3]string]*profile.Function{},
		locs:     map[frame]*profile.Location{},
		maps:     map[string]*profile.Mapping{},
		format:   f,
		nLocs:    newCounter(l.MaxLocations, LimitLocations, "distinct "+string(f)+" frames (locations)"),
		nFuncs:   newCounter(l.MaxFunctions, LimitFunctions, "distinct "+string(f)+" functions"),
		nMaps:    newCounter(l.MaxMappings, LimitMappings, "distinct "+string(f)+" modules (mappings)"),
		strBytes: newCounter(l.MaxStringBytes, LimitStringBytes, "bytes of "+string(f)+" names, files and modules"),
	}
}

// count adds k to c, keeping the first error.
func (b *builder) count(c *counter, k int64) {
	if err := c.add(b.format, k); err != nil && b.err == nil {
		b.err = err
	}
}

func (b *builder) mapping(module string) *profile.Mapping {
	if module == "" {
		return nil
	}
	if m, ok := b.maps[module]; ok {
		return m
	}
	b.count(&b.nMaps, 1)
	b.count(&b.strBytes, int64(len(module)))
	m := &profile.Mapping{ID: uint64(len(b.p.Mapping) + 1), File: module, HasFunctions: true}
	b.maps[module] = m
	b.p.Mapping = append(b.p.Mapping, m)
	return m
}

func (b *builder) location(f frame) *profile.Location {
	if l, ok := b.locs[f]; ok {
		return l
	}
	b.count(&b.nLocs, 1)
	l := &profile.Location{ID: uint64(len(b.p.Location) + 1), Address: f.addr, Mapping: b.mapping(f.module)}
	if f.name == "" {
		b.unsymbolized++
		if l.Mapping != nil {
			l.Mapping.HasFunctions = false
		}
	} else {
		key := [3]string{f.name, f.sysName, f.file}
		fn, ok := b.funcs[key]
		if !ok {
			sys := f.sysName
			if sys == "" {
				sys = f.name
			}
			b.count(&b.nFuncs, 1)
			b.count(&b.strBytes, int64(len(f.name)+len(f.sysName)+len(f.file)))
			fn = &profile.Function{ID: uint64(len(b.p.Function) + 1), Name: f.name, SystemName: sys, Filename: f.file}
			b.funcs[key] = fn
			b.p.Function = append(b.p.Function, fn)
		}
		l.Line = []profile.Line{{Function: fn, Line: f.line}}
	}
	b.locs[f] = l
	b.p.Location = append(b.p.Location, l)
	return l
}

// splitCollapsed parses one folded line, "root;…;leaf count": the stack is
// everything before the last space and starts with a non-space; the count is
// a non-negative integer. As in flamegraph.pl (Perl's split), trailing empty
// frames are dropped; an empty frame elsewhere is an unknown frame.
//
// A line that holds only a count (" 1") is a sample without any frame, as
// py-spy's raw output writes for samples with no Python frame; it returns
// no frames and ok.
func splitCollapsed(line string) (frames []string, count int64, ok bool) {
	line = strings.TrimRight(line, " \t\r")
	if t := strings.TrimLeft(line, " \t"); t != line && t != "" {
		count, err := strconv.ParseInt(t, 10, 64)
		return nil, count, err == nil && count >= 0
	}
	i := strings.LastIndexAny(line, " \t")
	if i <= 0 || line[0] == ' ' || line[0] == '\t' {
		return nil, 0, false
	}
	count, err := strconv.ParseInt(line[i+1:], 10, 64)
	if err != nil || count < 0 {
		return nil, 0, false
	}
	frames = strings.Split(strings.TrimRight(line[:i], " \t"), ";")
	for len(frames) > 0 && frames[len(frames)-1] == "" {
		frames = frames[:len(frames)-1]
	}
	return frames, count, len(frames) > 0
}

// looksCollapsed: every non-blank line is "stack count" and at least one
// stack has two frames, so that a stray line such as "version 2" or a text
// that merely contains semicolons is not taken for folded stacks.
func looksCollapsed(lines []string) bool {
	nested := false
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		frames, _, ok := splitCollapsed(l)
		if !ok {
			return false
		}
		nested = nested || len(frames) > 1
	}
	return nested
}

// parseCollapsedReader reads folded stacks line by line, counting lines
// (samples), frames and distinct names against the limits as it goes.
func parseCollapsedReader(r *bufio.Reader, lim Limits) (*Profile, error) {
	b := newBuilder(FormatCollapsed, lim, &profile.ValueType{Type: "samples", Unit: "count"})
	samples := newCounter(lim.MaxSamples, LimitSamples, "collapsed stack lines")
	total := newCounter(lim.MaxStackFrames, LimitStackFrames, "frames in all collapsed stack lines")
	nested := false
	empty := int64(0)
	// Names are interned here, each copied out of its line once, so that a
	// kept name does not keep its whole line alive.
	byName := map[string]*profile.Location{}
	var leafFirst []*profile.Location
	var long []byte
	for n := 1; ; n++ {
		raw, err := readLine(r, &long, lim.MaxStringBytes, FormatCollapsed, n, ';', lim.MaxStackDepth)
		if err != nil && err != io.EOF {
			return nil, err
		}
		if len(raw) > 0 {
			line := string(bytes.TrimSuffix(bytes.TrimSuffix(raw, []byte("\n")), []byte("\r")))
			if strings.TrimSpace(line) != "" {
				if d := int64(strings.Count(line, ";") + 1); d > lim.MaxStackDepth {
					return nil, tooMany(FormatCollapsed, LimitStackDepth, lim.MaxStackDepth, d, "frames in one collapsed stack line")
				}
				frames, count, ok := splitCollapsed(line)
				if !ok {
					return nil, failf(FormatCollapsed, n, "not a \"stack count\" line: %.80q", line)
				}
				if err := samples.add(FormatCollapsed, 1); err != nil {
					return nil, err
				}
				if err := total.add(FormatCollapsed, int64(len(frames))); err != nil {
					return nil, err
				}
				nested = nested || len(frames) > 1
				if len(frames) == 0 {
					empty += count
				}
				leafFirst = leafFirst[:0]
				for j := len(frames) - 1; j >= 0; j-- {
					l, ok := byName[frames[j]]
					if !ok {
						name := strings.Clone(frames[j])
						l = b.location(frame{name: name}) // "" = unknown frame
						byName[name] = l
					}
					leafFirst = append(leafFirst, l)
				}
				if b.err != nil {
					return nil, b.err
				}
				b.p.Sample = append(b.p.Sample, &profile.Sample{Location: slices.Clone(leafFirst), Value: []int64{count}})
			}
		}
		if err == io.EOF {
			break
		}
	}
	if len(b.p.Sample) == 0 {
		return nil, failf(FormatCollapsed, 0, "no stacks")
	}
	if !nested {
		return nil, failf(FormatCollapsed, 0, "no line has more than one frame: not folded stacks")
	}
	out := &Profile{P: b.p, Format: FormatCollapsed, Limitations: []string{
		"folded stacks carry frame names only: no addresses, modules, source files, threads or timestamps",
		"annotations such as _[k], _[j] and comm-PID root frames are kept as part of the names",
	}}
	if b.unsymbolized > 0 {
		out.Limitations = append(out.Limitations, "empty frame names inside stacks are kept as unknown (unsymbolized) frames")
	}
	if empty > 0 {
		out.Limitations = append(out.Limitations, strconv.FormatInt(empty, 10)+" samples have no frame: they count in totals but in no function")
	}
	return out, nil
}

// readLine returns the next line of r, newline included, or io.EOF with
// the last bytes. A line longer than r's buffer is gathered in *long, up
// to maxLen bytes: a longer line fails (limit max_string_bytes, as no line
// holds more than names). With sep, a long line also fails as soon as it
// holds more than maxSep separators (a stack deeper than max_stack_depth),
// before the rest of it is read.
func readLine(r *bufio.Reader, long *[]byte, maxLen int64, f Format, n int, sep byte, maxSep int64) ([]byte, error) {
	raw, err := r.ReadSlice('\n')
	if err != bufio.ErrBufferFull {
		return raw, err
	}
	*long = append((*long)[:0], raw...)
	seps := int64(0)
	for err == bufio.ErrBufferFull {
		if sep != 0 {
			if seps += int64(bytes.Count(raw, []byte{sep})); seps >= maxSep {
				pe := tooMany(f, LimitStackDepth, maxSep, seps+1, "frames in one "+string(f)+" line")
				pe.Line = n
				return nil, pe
			}
		}
		raw, err = r.ReadSlice('\n')
		if int64(len(*long)+len(raw)) > maxLen {
			pe := tooMany(f, LimitStringBytes, maxLen, int64(len(*long)+len(raw)), "bytes in one line")
			pe.Line = n
			return nil, pe
		}
		if len(*long)+len(raw) > cap(*long) { // double, but never past max
			*long = slices.Grow(*long, int(min(int64(max(cap(*long), len(raw))), maxLen-int64(len(*long)))))
		}
		*long = append(*long, raw...)
	}
	return *long, err
}
