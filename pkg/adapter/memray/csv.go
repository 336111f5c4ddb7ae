package memray

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	gprof "github.com/google/pprof/profile"

	"github.com/flameox/flameox/pkg/config"
)

// Record is one row of `memray transform csv`: allocations of one
// allocator with one stack, leaf first.
type Record struct {
	Allocator string
	Count     int64
	Size      int64
	Thread    string
	Stack     []Frame
}

// Frame is one entry of a memray stack: function;file;line.
type Frame struct {
	Function, File string
	Line           int64
}

var csvHeader = []string{"allocator", "num_allocations", "size", "tid", "thread_name", "stack_trace"}

// ParseCSV reads memray's csv transform under lim: the rows
// (MaxSamples), the frames of one stack (MaxStackDepth) and of all stacks
// (MaxStackFrames), the bytes read (MaxDecompressedBytes). encoding/csv
// is the maintained parser of the format memray's csv module writes.
func ParseCSV(r io.Reader, lim config.Limits) ([]Record, error) {
	d := config.DefaultLimits()
	if lim.MaxSamples <= 0 {
		lim.MaxSamples = d.MaxSamples
	}
	if lim.MaxStackDepth <= 0 {
		lim.MaxStackDepth = d.MaxStackDepth
	}
	if lim.MaxStackFrames <= 0 {
		lim.MaxStackFrames = d.MaxStackFrames
	}
	if lim.MaxDecompressedBytes <= 0 {
		lim.MaxDecompressedBytes = d.MaxDecompressedBytes
	}
	lr := &io.LimitedReader{R: r, N: lim.MaxDecompressedBytes + 1}
	cr := csv.NewReader(lr)
	cr.FieldsPerRecord = len(csvHeader)
	cr.ReuseRecord = true
	head, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("memray csv: header: %w", err)
	}
	for i, h := range csvHeader {
		if head[i] != h {
			return nil, fmt.Errorf("memray csv: column %d is %q, want %q", i+1, head[i], h)
		}
	}
	var out []Record
	var frames int64
	for {
		row, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("memray csv: %w", err)
		}
		if lr.N <= 0 {
			return nil, fmt.Errorf("memray csv: more than %d bytes", lim.MaxDecompressedBytes)
		}
		if int64(len(out)) >= lim.MaxSamples {
			return nil, fmt.Errorf("memray csv: more than %d rows (limits.max_samples)", lim.MaxSamples)
		}
		line, _ := cr.FieldPos(0)
		n, err1 := strconv.ParseInt(row[1], 10, 64)
		size, err2 := strconv.ParseInt(row[2], 10, 64)
		if err1 != nil || err2 != nil || n < 0 || size < 0 {
			return nil, fmt.Errorf("memray csv line %d: num_allocations %q and size %q must be counts", line, row[1], row[2])
		}
		rec := Record{Allocator: row[0], Count: n, Size: size, Thread: row[4]}
		if row[5] != "" {
			parts := strings.Split(row[5], "|")
			if int64(len(parts)) > lim.MaxStackDepth {
				return nil, fmt.Errorf("memray csv line %d: %d frames, more than %d (limits.max_stack_depth)", line, len(parts), lim.MaxStackDepth)
			}
			frames += int64(len(parts))
			if frames > lim.MaxStackFrames {
				return nil, fmt.Errorf("memray csv: more than %d frames in all stacks (limits.max_stack_frames)", lim.MaxStackFrames)
			}
			rec.Stack = make([]Frame, len(parts))
			for i, p := range parts {
				rec.Stack[i] = parseFrame(p)
			}
		}
		out = append(out, rec)
	}
	return out, nil
}

// parseFrame splits "function;file;line"; the file may hold ';' so the
// function is the first field and the line the last.
func parseFrame(s string) Frame {
	first := strings.IndexByte(s, ';')
	last := strings.LastIndexByte(s, ';')
	if first < 0 || first == last {
		return Frame{Function: s}
	}
	f := Frame{Function: s[:first], File: s[first+1 : last]}
	if n, err := strconv.ParseInt(s[last+1:], 10, 64); err == nil && n > 0 {
		f.Line = n
	} else {
		f.File = s[first+1:]
	}
	return f
}

// sampleTypes of the profile flameox builds from memray's reports: the
// allocations live at the peak and those still live at exit.
var sampleTypes = []*gprof.ValueType{
	{Type: "peak_objects", Unit: "count"}, {Type: "peak_space", Unit: "bytes"},
	{Type: "retained_objects", Unit: "count"}, {Type: "retained_space", Unit: "bytes"},
}

// buildProfile turns the peak and leaks reports into one pprof profile:
// each row a sample with its stack, its values under the peak or the
// retained types.
func buildProfile(peak, leaks []Record) *gprof.Profile {
	p := &gprof.Profile{SampleType: sampleTypes, DefaultSampleType: "peak_space"}
	funcs := map[[2]string]*gprof.Function{}
	locs := map[Frame]*gprof.Location{}
	loc := func(f Frame) *gprof.Location {
		if l, ok := locs[f]; ok {
			return l
		}
		fn, ok := funcs[[2]string{f.Function, f.File}]
		if !ok {
			fn = &gprof.Function{ID: uint64(len(p.Function) + 1), Name: f.Function, SystemName: f.Function, Filename: f.File}
			funcs[[2]string{f.Function, f.File}] = fn
			p.Function = append(p.Function, fn)
		}
		l := &gprof.Location{ID: uint64(len(p.Location) + 1), Line: []gprof.Line{{Function: fn, Line: f.Line}}}
		locs[f] = l
		p.Location = append(p.Location, l)
		return l
	}
	add := func(recs []Record, at int) {
		for _, r := range recs {
			s := &gprof.Sample{Value: make([]int64, len(sampleTypes)), Label: map[string][]string{"allocator": {r.Allocator}}}
			s.Value[at], s.Value[at+1] = r.Count, r.Size
			stack := r.Stack
			if len(stack) == 0 {
				stack = []Frame{{Function: "<unknown>"}}
			}
			for _, f := range stack {
				s.Location = append(s.Location, loc(f))
			}
			if r.Thread != "" {
				s.Label["thread"] = []string{r.Thread}
			}
			p.Sample = append(p.Sample, s)
		}
	}
	add(peak, 0)
	add(leaks, 2)
	return p
}
