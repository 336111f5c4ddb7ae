package observe

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/flameox/flameox/pkg/adapter"
	"github.com/flameox/flameox/pkg/config"
	"github.com/flameox/flameox/pkg/digest"
	"github.com/flameox/flameox/pkg/evidence/schema"
	"github.com/flameox/flameox/pkg/fault"
)

// Extractor identity and the file a capture offers the workload.
const (
	ExtractorName    = "observe"
	ExtractorVersion = "1"
	// Kind is the artifact kind of an observations file.
	Kind = "semantic_observations"
	// File is the observations file a capture's output directory holds;
	// EnvVar names it to the workload.
	File   = "flameox-observations.jsonl"
	EnvVar = "FLAMEOX_OBSERVATIONS"
	// Format is the header's format number this reader knows.
	Format = 1
)

// maxLineBytes bounds one line: an observation is a name and a few values.
const maxLineBytes = 1 << 20

// Extractor reads observations files.
type Extractor struct{}

// NewExtractor returns the observations extractor.
func NewExtractor() *Extractor { return &Extractor{} }

func (*Extractor) Name() string    { return ExtractorName }
func (*Extractor) Version() string { return ExtractorVersion }

// Strict: a file with the SDK's header that does not parse is broken.
func (*Extractor) Strict() bool { return true }

// ArtifactKind: an import of an observations file that names no kind
// registers semantic observations.
func (*Extractor) ArtifactKind() string { return Kind }

// header is the first line's marker.
var header = []byte(`{"flameox_observations":`)

// Accepts decides by content: the SDK's header line first.
func (*Extractor) Accepts(in adapter.ExtractInput) bool {
	h := in.Head
	if len(h) == 0 {
		f, err := os.Open(in.Path)
		if err != nil {
			return false
		}
		defer f.Close()
		b := make([]byte, 64)
		n, _ := io.ReadFull(f, b)
		h = b[:n]
	}
	return bytes.HasPrefix(bytes.TrimLeft(h, " \t\r\n"), header)
}

// Observation is one distinct name, value and phase of a file.
type Observation struct {
	Name  string
	Phase string
	Value json.RawMessage // canonical JSON
	Count int64
	// FirstNs and LastNs are the SDK's monotonic clock at the first and
	// last time it was recorded.
	FirstNs, LastNs int64
}

// Phase is one phase path's time.
type Phase struct {
	Name    string
	Count   int64
	TotalNs int64
	MaxNs   int64
}

// Contents is what one observations file holds.
type Contents struct {
	Languages    []string
	Processes    int
	Observations []Observation
	Phases       []Phase
}

// ParseError is why a file is not an observations file.
type ParseError struct {
	Line   int
	Reason string
}

func (e *ParseError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("line %d: %s", e.Line, e.Reason)
	}
	return e.Reason
}

type event struct {
	Header     *int                       `json:"flameox_observations"`
	Language   string                     `json:"language"`
	T          string                     `json:"t"`
	Name       string                     `json:"name"`
	Values     map[string]json.RawMessage `json:"values"`
	Phase      string                     `json:"phase"`
	TsNs       int64                      `json:"ts_ns"`
	StartNs    int64                      `json:"start_ns"`
	DurationNs int64                      `json:"duration_ns"`
}

// Parse reads an observations file, bounded by lim: at most
// lim.MaxSamples lines and lim.MaxStrings distinct observations, each
// line at most 1 MiB, names and values at most lim.MaxStringBytes in all.
func Parse(r io.Reader, lim config.Limits) (*Contents, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxLineBytes)
	type key struct{ name, phase, value string }
	obs := map[key]*Observation{}
	phases := map[string]*Phase{}
	langs := map[string]bool{}
	c := &Contents{}
	var lines, strBytes int64
	seenHeader := false
	for sc.Scan() {
		lines++
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		if lim.MaxSamples > 0 && lines > lim.MaxSamples {
			return nil, &ParseError{Line: int(lines), Reason: fmt.Sprintf("more than %d lines (limits.max_samples)", lim.MaxSamples)}
		}
		var e event
		if err := json.Unmarshal(line, &e); err != nil {
			return nil, &ParseError{Line: int(lines), Reason: "not a JSON object: " + err.Error()}
		}
		if e.Header != nil {
			if *e.Header != Format {
				return nil, &ParseError{Line: int(lines), Reason: fmt.Sprintf("observations format %d; this flameox reads format %d", *e.Header, Format)}
			}
			seenHeader = true
			c.Processes++
			if e.Language != "" {
				langs[e.Language] = true
			}
			continue
		}
		if !seenHeader {
			return nil, &ParseError{Line: int(lines), Reason: `no {"flameox_observations": 1} header before the first event`}
		}
		if e.Name == "" {
			return nil, &ParseError{Line: int(lines), Reason: "an event without a name"}
		}
		switch e.T {
		case "observe":
			if len(e.Values) == 0 {
				e.Values = map[string]json.RawMessage{"": json.RawMessage("true")}
			}
			keys := make([]string, 0, len(e.Values))
			for k := range e.Values {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				name := e.Name
				if k != "" {
					name += "." + k
				}
				v, err := canonical(e.Values[k])
				if err != nil {
					return nil, &ParseError{Line: int(lines), Reason: fmt.Sprintf("value of %s: %v", name, err)}
				}
				kk := key{name, e.Phase, string(v)}
				o, ok := obs[kk]
				if !ok {
					strBytes += int64(len(name) + len(e.Phase) + len(v))
					if lim.MaxStringBytes > 0 && strBytes > lim.MaxStringBytes {
						return nil, &ParseError{Line: int(lines), Reason: fmt.Sprintf("more than %d bytes of names and values (limits.max_string_bytes)", lim.MaxStringBytes)}
					}
					if lim.MaxStrings > 0 && int64(len(obs)) >= lim.MaxStrings {
						return nil, &ParseError{Line: int(lines), Reason: fmt.Sprintf("more than %d distinct observations (limits.max_strings)", lim.MaxStrings)}
					}
					o = &Observation{Name: name, Phase: e.Phase, Value: v, FirstNs: e.TsNs}
					obs[kk] = o
				}
				o.Count++
				o.LastNs = e.TsNs
			}
		case "phase":
			if e.DurationNs < 0 {
				return nil, &ParseError{Line: int(lines), Reason: fmt.Sprintf("phase %q has a negative duration", e.Name)}
			}
			p, ok := phases[e.Name]
			if !ok {
				if lim.MaxStrings > 0 && int64(len(phases)) >= lim.MaxStrings {
					return nil, &ParseError{Line: int(lines), Reason: fmt.Sprintf("more than %d phases (limits.max_strings)", lim.MaxStrings)}
				}
				p = &Phase{Name: e.Name}
				phases[e.Name] = p
			}
			p.Count++
			p.TotalNs += e.DurationNs
			p.MaxNs = max(p.MaxNs, e.DurationNs)
		default:
			return nil, &ParseError{Line: int(lines), Reason: fmt.Sprintf("unknown event type %q", e.T)}
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, &ParseError{Line: int(lines) + 1, Reason: "a line longer than 1 MiB"}
		}
		return nil, &ParseError{Reason: err.Error()}
	}
	if !seenHeader {
		return nil, &ParseError{Reason: "empty: no header line"}
	}
	for l := range langs {
		c.Languages = append(c.Languages, l)
	}
	sort.Strings(c.Languages)
	for _, o := range obs {
		c.Observations = append(c.Observations, *o)
	}
	sort.Slice(c.Observations, func(i, j int) bool {
		a, b := c.Observations[i], c.Observations[j]
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		if a.Phase != b.Phase {
			return a.Phase < b.Phase
		}
		return string(a.Value) < string(b.Value)
	})
	for _, p := range phases {
		c.Phases = append(c.Phases, *p)
	}
	sort.Slice(c.Phases, func(i, j int) bool { return c.Phases[i].Name < c.Phases[j].Name })
	return c, nil
}

// canonical re-encodes a JSON value canonically (sorted keys, no
// insignificant space), so equal values compare equal.
func canonical(raw json.RawMessage) (json.RawMessage, error) {
	var v any
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // values are data, not HTML
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// Extract parses the file and writes its rows.
func (*Extractor) Extract(ctx context.Context, in adapter.ExtractInput, sink adapter.Sink) (*adapter.Extraction, error) {
	f, err := os.Open(in.Path)
	if err != nil {
		return nil, fault.Wrap(fault.ArtifactIntegrityFailed, err, "open %s", in.ArtifactID)
	}
	defer f.Close()
	c, err := Parse(f, in.Limits)
	if err != nil {
		fe := fault.Wrap(fault.ArtifactParseFailed, err, "observations file %s", in.ArtifactID).With("artifact_id", in.ArtifactID)
		var pe *ParseError
		if errors.As(err, &pe) {
			fe = fe.With("reason", pe.Reason)
			if pe.Line > 0 {
				fe = fe.With("line", strconv.Itoa(pe.Line))
			}
		}
		return nil, fe.Fix("The file is written by contrib/python/flameox_observe.py or contrib/go/observe; check that the workload's process was not killed mid-line.")
	}
	res := &adapter.Extraction{Extractor: ExtractorName, Version: ExtractorVersion, Rows: map[string]int64{},
		Limitations: []string{"observations are what the program said about itself through the SDK: they are as true as the code that records them, and say nothing of what it did not record"}}
	if len(c.Observations)+len(c.Phases) > 0 {
		w, err := sink.Table(schema.Observations)
		if err != nil {
			return nil, err
		}
		var art any
		if in.ArtifactID != "" {
			art = in.ArtifactID
		}
		row := func(kind, name, phase string, value any, idPart string) error {
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			if err := enc.Encode(value); err != nil {
				return fault.Wrap(fault.InternalError, err, "observation %s", name)
			}
			val := bytes.TrimRight(buf.Bytes(), "\n")
			id := digest.Bytes([]byte("observation/v1\x00" + in.RunID + "\x00" + in.ArtifactID + "\x00" + kind + "\x00" + name + "\x00" + idPart))
			var ctx any
			if phase != "" {
				ctx = phase
			}
			res.Rows[schema.Observations.Name]++
			// observation_id, run_id, artifact_id, kind, name, value_json,
			// file, line_from, line_to, context, evidence_level
			return w.AppendRow([]any{id, in.RunID, art, kind, name, string(val), nil, nil, nil, ctx, "observed"})
		}
		for _, o := range c.Observations {
			if err := row("observation", o.Name, o.Phase, map[string]any{"value": o.Value, "count": o.Count}, o.Phase+"\x00"+string(o.Value)); err != nil {
				return nil, err
			}
		}
		for _, p := range c.Phases {
			if err := row("phase", p.Name, p.Name, map[string]any{"count": p.Count, "total_ns": p.TotalNs, "max_ns": p.MaxNs}, ""); err != nil {
				return nil, err
			}
		}
	}
	mw := &adapter.Measurements{Sink: sink, RunID: in.RunID, ArtifactID: in.ArtifactID}
	for _, p := range c.Phases {
		v := p.TotalNs
		id := digest.Bytes([]byte("measurement/v1\x00" + in.RunID + "\x00" + in.ArtifactID + "\x00phase.wall_time\x00" + p.Name))
		if err := mw.Write(schema.Measurement{ID: id, Name: "phase.wall_time", Int: &v, Unit: "ns", Aggregation: "sum", Scope: "run",
			Subject: p.Name, Dimensions: map[string]string{"count": strconv.FormatInt(p.Count, 10), "source": "flameox SDK phase"}}); err != nil {
			return nil, err
		}
	}
	if mw.N > 0 {
		res.Rows[schema.Measurements.Name] += mw.N
	}
	if c.Processes > 1 {
		res.Limitations = append(res.Limitations, fmt.Sprintf("%d processes wrote to the file (%s); their observations are merged", c.Processes, strings.Join(c.Languages, ", ")))
	}
	return res, nil
}

var (
	_ adapter.Extractor = (*Extractor)(nil)
	_ adapter.Strict    = (*Extractor)(nil)
	_ adapter.Kinded    = (*Extractor)(nil)
)
