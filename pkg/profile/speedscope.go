package profile

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/google/pprof/profile"
)

// The parts of the speedscope file format (speedscope's file-format-spec.ts)
// that carry data. Unknown fields are ignored.
//
// The arrays are kept raw (rawJSON) and decoded one by one after
// countArray has counted their elements against the limits: decoding them
// straight into Go slices would let a few MB of gzipped "[]," allocate GBs
// of slice headers before any count could be checked.
type ssFile struct {
	Schema   string `json:"$schema"`
	Exporter string `json:"exporter"`
	Shared   *struct {
		Frames rawJSON `json:"frames"`
	} `json:"shared"`
	Profiles rawJSON `json:"profiles"`
}

// rawJSON is a JSON value kept undecoded. Unlike json.RawMessage it does
// not copy the bytes: it points into the document, which parseSpeedscope
// owns and never modifies, and which json.Unmarshal (unlike a Decoder,
// whose buffer is reused) passes to UnmarshalJSON itself. So a document
// is held once, not twice.
type rawJSON []byte

func (r *rawJSON) UnmarshalJSON(b []byte) error {
	*r = b[:len(b):len(b)]
	return nil
}

type ssFrame struct {
	Name *string  `json:"name"`
	File string   `json:"file"`
	Line *float64 `json:"line"`
}

type ssProfile struct {
	Type       string  `json:"type"`
	Name       string  `json:"name"`
	Unit       string  `json:"unit"`
	StartValue float64 `json:"startValue"`
	EndValue   float64 `json:"endValue"`
	Samples    rawJSON `json:"samples"`
	Weights    rawJSON `json:"weights"`
	Events     rawJSON `json:"events"`
}

type ssEvent struct {
	Type  string  `json:"type"`
	At    float64 `json:"at"`
	Frame int     `json:"frame"`
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

func parseSpeedscope(data []byte, lim Limits) (*Profile, error) {
	if d := jsonDepth(data, lim.MaxJSONDepth); d > lim.MaxJSONDepth {
		return nil, tooMany(FormatSpeedscope, LimitJSONDepth, lim.MaxJSONDepth, d, "levels of JSON nesting")
	}
	var f ssFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, jsonFailure(err)
	}
	if f.Schema != speedscopeSchema && (f.Shared == nil || isNull(f.Shared.Frames) || isNull(f.Profiles)) {
		return nil, &ParseError{Format: FormatUnknown, Offset: 0, Err: ErrUnknownFormat,
			Reason: "JSON document is not speedscope (no $schema, shared.frames or profiles)"}
	}
	c := &ssConverter{typeIdx: map[profile.ValueType]int{}, countIdx: -1, lim: lim,
		samples:  newCounter(lim.MaxSamples, LimitSamples, "speedscope samples and profiles"),
		weights:  newCounter(lim.MaxSamples, LimitSamples, "speedscope sample weights"),
		frames:   newCounter(lim.MaxStackFrames, LimitStackFrames, "frames in all speedscope stacks"),
		events:   newCounter(lim.MaxEvents, LimitEvents, "speedscope events"),
		strBytes: newCounter(lim.MaxStringBytes, LimitStringBytes, "bytes of speedscope names and files"),
	}
	var rawFrames rawJSON
	hasShared := f.Shared != nil
	if hasShared {
		rawFrames, f.Shared = f.Shared.Frames, nil
	}
	nFrames, _, err := countArray(rawFrames, false)
	if err != nil {
		return nil, err
	}
	if nFrames > lim.MaxLocations {
		return nil, tooMany(FormatSpeedscope, LimitLocations, lim.MaxLocations, nFrames, "speedscope frames")
	}
	nProfiles, _, err := countArray(f.Profiles, false)
	if err != nil {
		return nil, err
	}
	if err := c.samples.add(FormatSpeedscope, nProfiles); err != nil {
		return nil, err
	}
	var ssFrames []ssFrame
	var profiles []ssProfile
	if err := json.Unmarshal(orNull(rawFrames), &ssFrames); err != nil {
		return nil, jsonFailure(err)
	}
	if err := json.Unmarshal(orNull(f.Profiles), &profiles); err != nil {
		return nil, jsonFailure(err)
	}
	rawFrames, f.Profiles = nil, nil // decoded: let the copies go
	if !hasShared || len(profiles) == 0 {
		return nil, failf(FormatSpeedscope, 0, "speedscope file has no shared frames or no profiles")
	}
	frames := make([]frame, len(ssFrames))
	for i, fr := range ssFrames {
		if fr.Name == nil {
			return nil, failf(FormatSpeedscope, 0, "frame %d has no name", i)
		}
		if err := c.strBytes.add(FormatSpeedscope, int64(len(*fr.Name)+len(fr.File))); err != nil {
			return nil, err
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
	c.frameTab = frames
	c.locOf = make([]*profile.Location, len(frames))
	for _, p := range profiles {
		if err := c.strBytes.add(FormatSpeedscope, int64(len(p.Name))); err != nil {
			return nil, err
		}
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
	c.b = newBuilder(FormatSpeedscope, lim)
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
	for i := range profiles {
		if err := c.profile(i, &profiles[i], out); err != nil {
			return nil, err
		}
		profiles[i] = ssProfile{} // its raw arrays are no longer needed
	}
	if c.empty > 0 {
		out.Limitations = append(out.Limitations, fmt.Sprintf(
			"%d samples have an empty stack: they count in totals but in no function", c.empty))
	}
	out.P = c.b.p
	return out, nil
}

func jsonFailure(err error) *ParseError {
	pe := &ParseError{Format: FormatSpeedscope, Offset: -1, Err: err, Reason: "invalid JSON: " + err.Error()}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		pe.Offset = se.Offset
	}
	return pe
}

func isNull(raw rawJSON) bool { return raw == nil || string(raw) == "null" }

func orNull(raw rawJSON) rawJSON {
	if raw == nil {
		return rawJSON("null")
	}
	return raw
}

type ssConverter struct {
	frameTab []frame
	locOf    []*profile.Location // by frame index, made on first use
	b        *builder
	lim      Limits
	// what the conversion keeps, counted against the limits
	samples, weights, frames, events, strBytes counter
	types                                      []profile.ValueType // weight types, after "samples/count" if countIdx == 0
	typeIdx                                    map[profile.ValueType]int
	countIdx                                   int // 0 if some profile is sampled, else -1
	empty                                      int // samples with an empty stack
}

// profile converts one speedscope profile (one thread, in py-spy's files)
// into samples labelled with that thread.
func (c *ssConverter) profile(idx int, p *ssProfile, out *Profile) error {
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
	// add appends a sample whose stack lists frame indexes root first.
	add := func(stack []int, w int64) error {
		if len(stack) == 0 {
			c.empty++
		}
		locs := make([]*profile.Location, len(stack))
		for j, fi := range stack {
			if fi < 0 || fi >= len(c.frameTab) {
				return failf(FormatSpeedscope, 0, "profile %q: frame index %d out of range", p.Name, fi)
			}
			if c.locOf[fi] == nil {
				c.locOf[fi] = c.b.location(c.frameTab[fi])
			}
			locs[len(stack)-1-j] = c.locOf[fi]
		}
		if c.b.err != nil {
			return c.b.err
		}
		vals := make([]int64, len(c.b.p.SampleType))
		vals[col] = w
		if p.Type == "sampled" {
			vals[c.countIdx] = 1
		}
		c.b.p.Sample = append(c.b.p.Sample, &profile.Sample{Location: locs, Value: vals, Label: labels, NumLabel: num})
		return nil
	}
	if span, err := scaled(p.EndValue-p.StartValue, "duration"); err == nil && fam.vt.Unit == "nanoseconds" {
		c.b.p.DurationNanos = max(c.b.p.DurationNanos, span)
	}
	if p.Type == "sampled" {
		nSamples, nFrames, err := countArray(p.Samples, true)
		if err != nil {
			return err
		}
		if err := c.samples.add(FormatSpeedscope, nSamples); err != nil {
			return err
		}
		if nFrames.max > c.lim.MaxStackDepth {
			return tooMany(FormatSpeedscope, LimitStackDepth, c.lim.MaxStackDepth, nFrames.max, "frames in one speedscope sample")
		}
		if err := c.frames.add(FormatSpeedscope, nFrames.total); err != nil {
			return err
		}
		nWeights, _, err := countArray(p.Weights, false)
		if err != nil {
			return err
		}
		if err := c.weights.add(FormatSpeedscope, nWeights); err != nil {
			return err
		}
		var samples [][]int
		var weights []float64
		if err := json.Unmarshal(orNull(p.Samples), &samples); err != nil {
			return jsonFailure(err)
		}
		if err := json.Unmarshal(orNull(p.Weights), &weights); err != nil {
			return jsonFailure(err)
		}
		if len(samples) != len(weights) {
			return failf(FormatSpeedscope, 0, "profile %q: %d samples but %d weights", p.Name, len(samples), len(weights))
		}
		for i, s := range samples {
			w, err := scaled(weights[i], "weight")
			if err != nil {
				return err
			}
			if err := add(s, w); err != nil {
				return err
			}
		}
		return nil
	}
	nEvents, _, err := countArray(p.Events, false)
	if err != nil {
		return err
	}
	if err := c.events.add(FormatSpeedscope, nEvents); err != nil {
		return err
	}
	var events []ssEvent
	if err := json.Unmarshal(orNull(p.Events), &events); err != nil {
		return jsonFailure(err)
	}
	return c.evented(p, events, scaled, add, out)
}

// evented replays open/close events; each distinct open stack becomes one
// sample weighted by the total time it was open.
//
// Open stacks are nodes of a tree (a stack is its innermost frame's node
// under the stack it was opened on), so that each event costs one step
// whatever the depth, and each distinct stack is spelt out once, at the
// end, after its frames have been counted against max_stack_frames.
func (c *ssConverter) evented(p *ssProfile, events []ssEvent, scaled func(float64, string) (int64, error), add func([]int, int64) error, out *Profile) error {
	type node struct {
		parent int32 // -1 for a root frame
		frame  int
		depth  int32
	}
	var (
		nodes    []node
		child    = map[[2]int]int32{} // (parent node, frame) -> node
		weight   []int64              // by node
		charged  []bool               // by node
		order    []int32              // charged nodes, in first-charge order
		stack    []int32              // open nodes, root first
		last     int64
		maxDepth = c.lim.MaxStackDepth
	)
	charge := func(at int64) {
		if len(stack) > 0 && at > last {
			top := stack[len(stack)-1]
			if !charged[top] {
				charged[top] = true
				order = append(order, top)
			}
			weight[top] += at - last
		}
		last = at
	}
	prevAt := math.Inf(-1)
	for i, e := range events {
		if e.At < prevAt {
			return failf(FormatSpeedscope, 0, "profile %q: event %d goes back in time", p.Name, i)
		}
		prevAt = e.At
		if e.Frame < 0 || e.Frame >= len(c.frameTab) {
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
			if int64(len(stack)) >= maxDepth {
				return tooMany(FormatSpeedscope, LimitStackDepth, maxDepth, int64(len(stack))+1, "frames open at once in a speedscope evented profile")
			}
			parent := int32(-1)
			if len(stack) > 0 {
				parent = stack[len(stack)-1]
			}
			k := [2]int{int(parent), e.Frame}
			n, ok := child[k]
			if !ok {
				n = int32(len(nodes))
				nodes = append(nodes, node{parent: parent, frame: e.Frame, depth: int32(len(stack) + 1)})
				weight, charged = append(weight, 0), append(charged, false)
				child[k] = n
			}
			stack = append(stack, n)
		case "C":
			if len(stack) == 0 || nodes[stack[len(stack)-1]].frame != e.Frame {
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
	if err := c.samples.add(FormatSpeedscope, int64(len(order))); err != nil {
		return err
	}
	var frames []int
	for _, n := range order {
		if err := c.frames.add(FormatSpeedscope, int64(nodes[n].depth)); err != nil {
			return err
		}
		frames = frames[:0]
		for m := n; m >= 0; m = nodes[m].parent {
			frames = append(frames, nodes[m].frame)
		}
		slices.Reverse(frames) // root first
		if err := add(frames, weight[n]); err != nil {
			return err
		}
	}
	out.Limitations = append(out.Limitations, fmt.Sprintf(
		"profile %q is evented: weights are the time each stack was open (from O/C events), there are no sample counts", p.Name))
	return nil
}

// arrayCount is what countArray found inside the elements of an array.
type arrayCount struct {
	total int64 // elements of all the inner arrays
	max   int64 // elements of the largest inner array
}

// countArray counts the elements of the JSON array raw (valid JSON, as
// json.Unmarshal has checked the document) without decoding them, and with
// inner, those of the arrays that are its elements. null counts 0; any
// other value than an array also counts 0, and fails when it is decoded.
func countArray(raw rawJSON, inner bool) (int64, arrayCount, error) {
	var n int64
	var in arrayCount
	var cur int64 // elements of the current inner array
	depth := 0
	inString, escaped, expect := false, false, false // expect: the next value starts an element
	for _, ch := range raw {
		if inString {
			switch {
			case escaped:
				escaped = false
			case ch == '\\':
				escaped = true
			case ch == '"':
				inString = false
			}
			continue
		}
		switch ch {
		case ' ', '\t', '\n', '\r':
			continue
		}
		if depth == 0 {
			if ch != '[' {
				return 0, arrayCount{}, nil
			}
			depth, expect = 1, true
			continue
		}
		if depth == 1 && expect && ch != ']' {
			n++
		}
		if depth == 2 && inner && expect && ch != ']' {
			cur++
		}
		expect = false
		switch ch {
		case '"':
			inString = true
		case '[', '{':
			depth++
			if depth == 2 && inner && ch == '[' {
				cur = 0
			}
			expect = ch == '['
		case ']', '}':
			if depth == 2 && inner && ch == ']' {
				in.total += cur
				in.max = max(in.max, cur)
			}
			depth--
		case ',':
			expect = depth <= 2
		}
		if depth == 0 {
			break
		}
	}
	return n, in, nil
}

// jsonDepth is the deepest nesting of arrays and objects in data, counted
// up to stop+1.
func jsonDepth(data []byte, stop int64) int64 {
	var depth, deepest int64
	inString, escaped := false, false
	for _, ch := range data {
		if inString {
			switch {
			case escaped:
				escaped = false
			case ch == '\\':
				escaped = true
			case ch == '"':
				inString = false
			}
			continue
		}
		switch ch {
		case '"':
			inString = true
		case '[', '{':
			depth++
			if depth > deepest {
				deepest = depth
				if deepest > stop {
					return deepest
				}
			}
		case ']', '}':
			depth--
		}
	}
	return deepest
}
