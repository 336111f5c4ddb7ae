package profile

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/google/pprof/profile"
)

// The parts of the speedscope file format (speedscope's file-format-spec.ts)
// that carry data. Unknown fields are ignored.
type ssFile struct {
	Schema   string `json:"$schema"`
	Exporter string `json:"exporter"`
	Shared   *struct {
		Frames []ssFrame `json:"frames"`
	} `json:"shared"`
	Profiles []ssProfile `json:"profiles"`
}

type ssFrame struct {
	Name *string  `json:"name"`
	File string   `json:"file"`
	Line *float64 `json:"line"`
}

type ssProfile struct {
	Type       string    `json:"type"`
	Name       string    `json:"name"`
	Unit       string    `json:"unit"`
	StartValue float64   `json:"startValue"`
	EndValue   float64   `json:"endValue"`
	Samples    [][]int   `json:"samples"`
	Weights    []float64 `json:"weights"`
	Events     []struct {
		Type  string  `json:"type"`
		At    float64 `json:"at"`
		Frame int     `json:"frame"`
	} `json:"events"`
}

// unitFamily maps a speedscope unit to the pprof sample type it becomes and
// the factor that turns a value into that type's unit.
var unitFamily = map[string]struct {
	vt    profile.ValueType
	scale float64
}{
	"nanoseconds":  {profile.ValueType{Type: "time", Unit: "nanoseconds"}, 1},
	"microseconds": {profile.ValueType{Type: "time", Unit: "nanoseconds"}, 1e3},
	"milliseconds": {profile.ValueType{Type: "time", Unit: "nanoseconds"}, 1e6},
	"seconds":      {profile.ValueType{Type: "time", Unit: "nanoseconds"}, 1e9},
	"bytes":        {profile.ValueType{Type: "space", Unit: "bytes"}, 1},
	"none":         {profile.ValueType{Type: "weight", Unit: "count"}, 1},
}

// pySpyThread reads py-spy's profile names: [Process N ]Thread ID ["name"].
var pySpyThread = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(?:Process (\d+) )?Thread (0x[0-9A-Fa-f]+|\d+)\b`) })

func parseSpeedscope(data []byte) (*Profile, error) {
	var f ssFile
	if err := json.Unmarshal(data, &f); err != nil {
		pe := &ParseError{Format: FormatSpeedscope, Offset: -1, Err: err, Reason: "invalid JSON: " + err.Error()}
		var se *json.SyntaxError
		if errors.As(err, &se) {
			pe.Offset = se.Offset
		}
		return nil, pe
	}
	if f.Schema != speedscopeSchema && (f.Shared == nil || f.Shared.Frames == nil || f.Profiles == nil) {
		return nil, &ParseError{Format: FormatUnknown, Offset: 0, Err: ErrUnknownFormat,
			Reason: "JSON document is not speedscope (no $schema, shared.frames or profiles)"}
	}
	if f.Shared == nil || len(f.Profiles) == 0 {
		return nil, failf(FormatSpeedscope, 0, "speedscope file has no shared frames or no profiles")
	}
	frames := make([]frame, len(f.Shared.Frames))
	for i, fr := range f.Shared.Frames {
		if fr.Name == nil {
			return nil, failf(FormatSpeedscope, 0, "frame %d has no name", i)
		}
		frames[i] = frame{name: *fr.Name, file: fr.File}
		if fr.Line != nil {
			if *fr.Line < 0 || *fr.Line != math.Trunc(*fr.Line) || *fr.Line > math.MaxInt32 {
				return nil, failf(FormatSpeedscope, 0, "frame %d has a bad line %v", i, *fr.Line)
			}
			frames[i].line = int64(*fr.Line)
		}
		if frames[i].name == "" {
			frames[i].name = "(anonymous)" // an empty name would read as unsymbolized
		}
	}
	c := &ssConverter{frames: frames, typeIdx: map[profile.ValueType]int{}, countIdx: -1}
	for _, p := range f.Profiles {
		fam, ok := unitFamily[p.Unit]
		if !ok {
			return nil, failf(FormatSpeedscope, 0, "profile %q has unknown unit %q", p.Name, p.Unit)
		}
		if p.Type != "sampled" && p.Type != "evented" {
			return nil, failf(FormatSpeedscope, 0, "profile %q has unknown type %q", p.Name, p.Type)
		}
		if p.Type == "sampled" && c.countIdx < 0 {
			c.countIdx = 0
		}
		if _, ok := c.typeIdx[fam.vt]; !ok {
			c.typeIdx[fam.vt] = len(c.types)
			c.types = append(c.types, fam.vt)
		}
	}
	c.b = newBuilder()
	if c.countIdx == 0 {
		c.b.p.SampleType = append(c.b.p.SampleType, &profile.ValueType{Type: "samples", Unit: "count"})
	}
	for _, vt := range c.types {
		c.b.p.SampleType = append(c.b.p.SampleType, &vt)
	}
	out := &Profile{Format: FormatSpeedscope, Producer: "speedscope",
		Limitations: []string{"speedscope frames carry name, file and line only: no addresses or modules"}}
	if f.Exporter != "" {
		out.Producer = strings.Replace(f.Exporter, "@", " ", 1)
	}
	for i, p := range f.Profiles {
		if err := c.profile(i, p, out); err != nil {
			return nil, err
		}
	}
	if c.empty > 0 {
		out.Limitations = append(out.Limitations, fmt.Sprintf(
			"%d samples have an empty stack: they count in totals but in no function", c.empty))
	}
	out.P = c.b.p
	return out, nil
}

type ssConverter struct {
	frames   []frame
	b        *builder
	types    []profile.ValueType // weight types, after "samples/count" if countIdx == 0
	typeIdx  map[profile.ValueType]int
	countIdx int // 0 if some profile is sampled, else -1
	empty    int // samples with an empty stack
}

// profile converts one speedscope profile (one thread, in py-spy's files)
// into samples labelled with that thread.
func (c *ssConverter) profile(idx int, p ssProfile, out *Profile) error {
	fam := unitFamily[p.Unit]
	col := c.typeIdx[fam.vt] + c.countIdx + 1
	scaled := func(v float64, what string) (int64, error) {
		x := math.Round(v * fam.scale)
		if math.IsNaN(x) || x < 0 || x > math.MaxInt64/2 {
			return 0, failf(FormatSpeedscope, 0, "profile %q: %s %v out of range", p.Name, what, v)
		}
		return int64(x), nil
	}
	labels := map[string][]string{"thread": {p.Name}}
	num := map[string][]int64{"profile_index": {int64(idx)}}
	if m := pySpyThread().FindStringSubmatch(p.Name); m != nil {
		if tid, err := strconv.ParseInt(m[2], 0, 64); err == nil {
			num["thread_id"] = []int64{tid}
		}
		if m[1] != "" {
			pid, _ := strconv.ParseInt(m[1], 10, 64)
			num["pid"] = []int64{pid}
		}
	}
	add := func(stack []int, w int64) error {
		if len(stack) == 0 {
			c.empty++
		}
		leafFirst := make([]frame, len(stack))
		for j, fi := range stack {
			if fi < 0 || fi >= len(c.frames) {
				return failf(FormatSpeedscope, 0, "profile %q: frame index %d out of range", p.Name, fi)
			}
			leafFirst[len(stack)-1-j] = c.frames[fi]
		}
		vals := make([]int64, len(c.b.p.SampleType))
		vals[col] = w
		if p.Type == "sampled" {
			vals[c.countIdx] = 1
		}
		c.b.p.Sample = append(c.b.p.Sample, &profile.Sample{Location: c.b.stack(leafFirst), Value: vals, Label: labels, NumLabel: num})
		return nil
	}
	if span, err := scaled(p.EndValue-p.StartValue, "duration"); err == nil && fam.vt.Unit == "nanoseconds" {
		c.b.p.DurationNanos = max(c.b.p.DurationNanos, span)
	}
	if p.Type == "sampled" {
		if len(p.Samples) != len(p.Weights) {
			return failf(FormatSpeedscope, 0, "profile %q: %d samples but %d weights", p.Name, len(p.Samples), len(p.Weights))
		}
		for i, s := range p.Samples {
			w, err := scaled(p.Weights[i], "weight")
			if err != nil {
				return err
			}
			if err := add(s, w); err != nil {
				return err
			}
		}
		return nil
	}
	return c.evented(p, scaled, add, out)
}

// evented replays open/close events; each distinct open stack becomes one
// sample weighted by the total time it was open.
func (c *ssConverter) evented(p ssProfile, scaled func(float64, string) (int64, error), add func([]int, int64) error, out *Profile) error {
	var stack []int
	weights := map[string]int64{}
	var order []string
	stacks := map[string][]int{}
	var last int64
	charge := func(at int64) {
		if len(stack) > 0 && at > last {
			k := fmt.Sprint(stack)
			if _, ok := weights[k]; !ok {
				order = append(order, k)
				stacks[k] = append([]int(nil), stack...)
			}
			weights[k] += at - last
		}
		last = at
	}
	prevAt := math.Inf(-1)
	for i, e := range p.Events {
		if e.At < prevAt {
			return failf(FormatSpeedscope, 0, "profile %q: event %d goes back in time", p.Name, i)
		}
		prevAt = e.At
		if e.Frame < 0 || e.Frame >= len(c.frames) {
			return failf(FormatSpeedscope, 0, "profile %q: event %d names frame %d, out of range", p.Name, i, e.Frame)
		}
		at, err := scaled(e.At, "event time")
		if err != nil {
			return err
		}
		if i == 0 {
			last = at
		}
		charge(at)
		switch e.Type {
		case "O":
			stack = append(stack, e.Frame)
		case "C":
			if len(stack) == 0 || stack[len(stack)-1] != e.Frame {
				return failf(FormatSpeedscope, 0, "profile %q: event %d closes frame %d, which is not the innermost open frame", p.Name, i, e.Frame)
			}
			stack = stack[:len(stack)-1]
		default:
			return failf(FormatSpeedscope, 0, "profile %q: event %d has unknown type %q", p.Name, i, e.Type)
		}
	}
	if len(stack) > 0 {
		if end, err := scaled(p.EndValue, "endValue"); err == nil {
			charge(end)
		}
		out.Limitations = append(out.Limitations, fmt.Sprintf("profile %q: frames still open at the end were closed at endValue", p.Name))
	}
	for _, k := range order {
		if err := add(stacks[k], weights[k]); err != nil {
			return err
		}
	}
	out.Limitations = append(out.Limitations, fmt.Sprintf(
		"profile %q is evented: weights are the time each stack was open (from O/C events), there are no sample counts", p.Name))
	return nil
}
