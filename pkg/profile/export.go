package profile

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/google/pprof/profile"
)

// Exports of a parsed profile into the formats other tools read: pprof
// protobuf (go tool pprof), collapsed stacks (FlameGraph.pl, inferno,
// speedscope) and speedscope's own JSON. pprof's writer is google/pprof's
// own; the other two are written here: no maintained Go package writes
// them (FlameGraph's format is one line per stack, speedscope's a small
// documented JSON schema, https://www.speedscope.app/file-format-schema.json).

// SampleIndex is the index of the sample type named typ in p, or of p's
// default (its DefaultSampleType, else the last type, as go tool pprof
// picks) when typ is "".
func SampleIndex(p *profile.Profile, typ string) (int, error) {
	if len(p.SampleType) == 0 {
		return 0, fmt.Errorf("the profile has no sample types")
	}
	if typ == "" {
		typ = p.DefaultSampleType
		if typ == "" {
			return len(p.SampleType) - 1, nil
		}
	}
	var names []string
	for i, st := range p.SampleType {
		if st.Type == typ {
			return i, nil
		}
		names = append(names, st.Type)
	}
	return 0, fmt.Errorf("no sample type %q (the profile has %s)", typ, strings.Join(names, ", "))
}

// stack is a sample's frames, root first: each location's inlined
// functions (pprof lists them innermost first) from caller to callee.
func stack(s *profile.Sample, buf []string) []string {
	buf = buf[:0]
	for i := len(s.Location) - 1; i >= 0; i-- {
		loc := s.Location[i]
		if len(loc.Line) == 0 {
			buf = append(buf, fmt.Sprintf("0x%x", loc.Address))
			continue
		}
		for j := len(loc.Line) - 1; j >= 0; j-- {
			name := "?"
			if f := loc.Line[j].Function; f != nil && f.Name != "" {
				name = f.Name
			}
			buf = append(buf, name)
		}
	}
	return buf
}

// collapsedName keeps a frame name on its line: ';' separates frames, so
// it becomes ':' (C++ and Rust names stay readable), and a newline ends
// the stack, so control characters become spaces.
func collapsedName(s string) string {
	if !strings.ContainsFunc(s, func(r rune) bool { return r == ';' || r < 0x20 || r == 0x7f }) {
		return s
	}
	return strings.Map(func(r rune) rune {
		switch {
		case r == ';':
			return ':'
		case r < 0x20 || r == 0x7f:
			return ' '
		}
		return r
	}, s)
}

// ExportStats says what an export wrote.
type ExportStats struct {
	SampleType string `json:"sample_type"`
	Unit       string `json:"unit"`
	Stacks     int    `json:"stacks"`
	Total      int64  `json:"total"`
	// Skipped counts samples whose value is zero or negative (a diff
	// profile's): collapsed stacks and speedscope weights are positive.
	Skipped int `json:"skipped"`
}

// WriteCollapsed writes the samples of sample type si as collapsed stacks:
// frames root to leaf joined by ';', a space, the summed value; one line
// per distinct stack, in byte order.
func WriteCollapsed(w io.Writer, p *profile.Profile, si int) (ExportStats, error) {
	st := ExportStats{SampleType: p.SampleType[si].Type, Unit: p.SampleType[si].Unit}
	sums := map[string]int64{}
	var buf []string
	for _, s := range p.Sample {
		v := s.Value[si]
		if v <= 0 {
			st.Skipped++
			continue
		}
		buf = stack(s, buf)
		for i := range buf {
			buf[i] = collapsedName(buf[i])
		}
		sums[strings.Join(buf, ";")] += v
		st.Total += v
	}
	keys := make([]string, 0, len(sums))
	for k := range sums {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	bw := bufio.NewWriter(w)
	for _, k := range keys {
		bw.WriteString(k)
		bw.WriteByte(' ')
		bw.WriteString(strconv.FormatInt(sums[k], 10))
		bw.WriteByte('\n')
	}
	st.Stacks = len(keys)
	return st, bw.Flush()
}

// SpeedscopeSchema is the $schema speedscope's files carry.
const SpeedscopeSchema = speedscopeSchema

type exFrame struct {
	Name string `json:"name"`
	File string `json:"file,omitempty"`
	Line int64  `json:"line,omitempty"`
}

type exProfile struct {
	Type       string  `json:"type"`
	Name       string  `json:"name"`
	Unit       string  `json:"unit"`
	StartValue int64   `json:"startValue"`
	EndValue   int64   `json:"endValue"`
	Samples    [][]int `json:"samples"`
	Weights    []int64 `json:"weights"`
}

type exFile struct {
	Schema string `json:"$schema"`
	Shared struct {
		Frames []exFrame `json:"frames"`
	} `json:"shared"`
	Profiles           []exProfile `json:"profiles"`
	Name               string      `json:"name"`
	ActiveProfileIndex int         `json:"activeProfileIndex"`
	Exporter           string      `json:"exporter"`
}

// speedscopeUnit maps a pprof unit to one of speedscope's ("none",
// "nanoseconds", "microseconds", "milliseconds", "seconds", "bytes").
func speedscopeUnit(u string) string {
	switch u {
	case "nanoseconds", "microseconds", "milliseconds", "seconds", "bytes":
		return u
	}
	return "none"
}

// WriteSpeedscope writes the samples of sample type si as one speedscope
// "sampled" profile: each sample a stack of indices into the shared
// frames (root first) with its value as weight.
func WriteSpeedscope(w io.Writer, p *profile.Profile, si int, name, exporter string) (ExportStats, error) {
	st := ExportStats{SampleType: p.SampleType[si].Type, Unit: p.SampleType[si].Unit}
	f := exFile{Schema: SpeedscopeSchema, Name: name, Exporter: exporter}
	f.Shared.Frames = []exFrame{}
	type key struct {
		name, file string
		line       int64
	}
	idx := map[key]int{}
	frame := func(k key) int {
		if i, ok := idx[k]; ok {
			return i
		}
		idx[k] = len(f.Shared.Frames)
		f.Shared.Frames = append(f.Shared.Frames, exFrame{Name: k.name, File: k.file, Line: k.line})
		return idx[k]
	}
	pr := exProfile{Type: "sampled", Name: p.SampleType[si].Type, Unit: speedscopeUnit(p.SampleType[si].Unit), Samples: [][]int{}, Weights: []int64{}}
	stacks := map[string]int{} // a stack's frames → its sample
	var b strings.Builder
	for _, s := range p.Sample {
		v := s.Value[si]
		if v <= 0 {
			st.Skipped++
			continue
		}
		var ids []int
		for i := len(s.Location) - 1; i >= 0; i-- {
			loc := s.Location[i]
			if len(loc.Line) == 0 {
				ids = append(ids, frame(key{name: fmt.Sprintf("0x%x", loc.Address)}))
				continue
			}
			for j := len(loc.Line) - 1; j >= 0; j-- {
				k := key{name: "?", line: loc.Line[j].Line}
				if fn := loc.Line[j].Function; fn != nil {
					k.name, k.file = fn.Name, fn.Filename
					if k.name == "" {
						k.name = "?"
					}
				}
				ids = append(ids, frame(k))
			}
		}
		b.Reset()
		for _, id := range ids {
			b.WriteString(strconv.Itoa(id))
			b.WriteByte(',')
		}
		if i, ok := stacks[b.String()]; ok {
			pr.Weights[i] += v
		} else {
			stacks[b.String()] = len(pr.Samples)
			pr.Samples = append(pr.Samples, ids)
			pr.Weights = append(pr.Weights, v)
		}
		st.Total += v
	}
	pr.EndValue = st.Total
	st.Stacks = len(pr.Samples)
	f.Profiles = []exProfile{pr}
	enc := json.NewEncoder(w)
	return st, enc.Encode(f)
}
