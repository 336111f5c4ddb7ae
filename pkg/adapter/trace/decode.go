package trace

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/flameox/flameox/pkg/config"
)

// parseError is a malformed file: where (an event index or key) and what.
type parseError struct {
	at  string
	msg string
}

func (e *parseError) Error() string {
	if e.at == "" {
		return e.msg
	}
	return e.at + ": " + e.msg
}

// limitError is a file over one of the workspace's [limits].
type limitError struct {
	key           string // as config.toml spells it under [limits]
	max, observed int64
	what          string
}

func (e *limitError) Error() string {
	return fmt.Sprintf("more than %d %s: the file exceeds limit %s", e.max, e.what, e.key)
}

// Limit keys the reader counts against (pkg/profile names them).
const (
	limitBytes       = "max_decompressed_bytes"
	limitEvents      = "max_events"
	limitStringBytes = "max_string_bytes"
	limitDepth       = "max_stack_depth"
	limitFrames      = "max_stack_frames"
)

// withDefaults fills zero fields of l from config.DefaultLimits.
func withDefaults(l config.Limits) config.Limits {
	def := config.DefaultLimits()
	for _, f := range []struct{ v, d *int64 }{
		{&l.MaxDecompressedBytes, &def.MaxDecompressedBytes}, {&l.MaxEvents, &def.MaxEvents},
		{&l.MaxStringBytes, &def.MaxStringBytes}, {&l.MaxStackDepth, &def.MaxStackDepth},
		{&l.MaxStackFrames, &def.MaxStackFrames},
	} {
		if *f.v <= 0 {
			*f.v = *f.d
		}
	}
	return l
}

// rawEvent is one element of traceEvents as the decoder fills it; it is
// reused for every event (json.RawMessage keeps its buffer).
type rawEvent struct {
	Ph   string          `json:"ph"`
	Name string          `json:"name"`
	Cat  string          `json:"cat"`
	Ts   json.Number     `json:"ts"`
	Dur  json.Number     `json:"dur"`
	Pid  json.RawMessage `json:"pid"`
	Tid  json.RawMessage `json:"tid"`
	ID   json.RawMessage `json:"id"`
	Bp   string          `json:"bp"`
	S    string          `json:"s"`
	Args json.RawMessage `json:"args"`
}

func (e *rawEvent) reset() {
	e.Ph, e.Name, e.Cat, e.Ts, e.Dur, e.Bp, e.S = "", "", "", "", "", "", ""
	e.Pid, e.Tid, e.ID, e.Args = e.Pid[:0], e.Tid[:0], e.ID[:0], e.Args[:0]
}

// header is what the object format says beside its events.
type header struct {
	format          string // "object" or "array"
	displayTimeUnit string
	schemaVersion   string
	baseTimeNanos   string
	traceName       string
	devices         []string // deviceProperties names
	distributed     map[string]string
	unclosed        bool     // the array format's closing ] is missing (allowed)
	skipped         []string // top-level keys not read
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// open returns the JSON bytes of r: gunzipped when they start with the
// gzip magic (by content, never by name), bounded by lim's byte limit.
func open(r io.Reader) (io.Reader, bool, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	magic, _ := br.Peek(2)
	if len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		z, err := gzip.NewReader(br)
		if err != nil {
			return nil, true, &parseError{msg: "not a readable gzip stream: " + err.Error()}
		}
		z.Multistream(false)
		return z, true, nil
	}
	return br, false, nil
}

// read decodes a whole trace from r within lim into a builder's input.
func read(r io.Reader, lim config.Limits) (*builder, error) { return readUsing(r, lim, scanAll) }

// readUsing is read with the given event reader (tests pass the
// encoding/json one).
func readUsing(r io.Reader, lim config.Limits, decode func(io.Reader, *builder) error) (*builder, error) {
	lim = withDefaults(lim)
	src, gz, err := open(r)
	if err != nil {
		return nil, err
	}
	cr := &countingReader{r: io.LimitReader(src, lim.MaxDecompressedBytes+1)}
	b := newBuilder(lim)
	b.gzip = gz
	err = decode(cr, b)
	if cr.n > lim.MaxDecompressedBytes {
		return nil, &limitError{key: limitBytes, max: lim.MaxDecompressedBytes, observed: cr.n, what: "bytes of JSON"}
	}
	if err != nil {
		var pe *parseError
		var le *limitError
		if !errors.As(err, &pe) && !errors.As(err, &le) {
			err = &parseError{msg: describe(err)}
		}
		return nil, err
	}
	return b, nil
}

// describe turns the reader's and decoder's errors into words for a person.
func describe(err error) string {
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return "the file ends early (truncated JSON or gzip stream)"
	case errors.Is(err, gzip.ErrChecksum), errors.Is(err, gzip.ErrHeader):
		return "the gzip stream is corrupt: " + err.Error()
	}
	return err.Error()
}

// headerValue takes one top-level key of the object format other than
// traceEvents.
func (b *builder) headerValue(key string, v json.RawMessage) error {
	switch key {
	case "displayTimeUnit", "traceName", "schemaVersion", "baseTimeNanoseconds":
		s := scalar(v)
		switch key {
		case "displayTimeUnit":
			b.h.displayTimeUnit = s
		case "traceName":
			b.h.traceName = s
		case "schemaVersion":
			b.h.schemaVersion = s
		case "baseTimeNanoseconds":
			b.h.baseTimeNanos = s
		}
	case "deviceProperties":
		var devs []struct {
			Name string `json:"name"`
		}
		if err := json.Unmarshal(v, &devs); err != nil {
			return &parseError{at: key, msg: strings.TrimPrefix(err.Error(), "json: ")}
		}
		for _, d := range devs {
			b.h.devices = append(b.h.devices, clip(d.Name))
		}
	case "distributedInfo":
		var m map[string]json.RawMessage
		if err := json.Unmarshal(v, &m); err != nil {
			return &parseError{at: key, msg: strings.TrimPrefix(err.Error(), "json: ")}
		}
		b.h.distributed = map[string]string{}
		for k, v := range m {
			if s := scalar(v); s != "" {
				b.h.distributed[clip(k)] = clip(s)
			}
		}
	default:
		if len(b.h.skipped) < 20 {
			b.h.skipped = append(b.h.skipped, clip(key))
		}
	}
	return nil
}

// scalar is a JSON scalar as text: a string unquoted, a number as written;
// "" for anything else.
func scalar(v json.RawMessage) string {
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return ""
	}
	switch v[0] {
	case '"':
		var s string
		if json.Unmarshal(v, &s) == nil {
			return s
		}
	case '{', '[', 'n':
		return ""
	}
	return string(v)
}

// idText is a pid, tid or id as text: a string's content or a number as
// written; a missing one is "".
func idText(v json.RawMessage) string {
	if len(v) > 0 && v[0] == '"' {
		return scalar(v)
	}
	return string(bytes.TrimSpace(v))
}

// maxClip bounds the header strings kept (names of devices, keys).
const maxClip = 256

func clip(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) > maxClip {
		s = strings.ToValidUTF8(s[:maxClip], "") + "…"
	}
	return s
}

// maxTimeMicros bounds a timestamp (in microseconds) so that it fits in
// int64 nanoseconds with room for a duration added to it.
const maxTimeMicros = 4e15

// micros parses a ts or dur (microseconds, the format's unit, int or
// float) into nanoseconds exactly: the decimal digits are read as written,
// not through a float64, whose 53 bits cannot hold Kineto's nanosecond
// timestamps (a 16-digit microsecond count with three decimals). ok is
// false when n is empty; an error when it is not a finite number in range.
func micros(n json.Number) (ns int64, ok bool, err error) {
	s := string(n)
	if s == "" {
		return 0, false, nil
	}
	neg := false
	t := s
	if t[0] == '-' {
		neg, t = true, t[1:]
	}
	intPart, frac, dot := strings.Cut(t, ".")
	if !strings.ContainsAny(t, "eE") && digits(intPart) && (!dot || digits(frac)) && len(intPart) <= 16 && intPart != "" {
		v, _ := strconv.ParseInt(intPart, 10, 64)
		if float64(v) > maxTimeMicros {
			return 0, true, fmt.Errorf("%s µs is out of range", s)
		}
		ns = v * 1000
		var f int64
		for i := 0; i < 3; i++ {
			f *= 10
			if i < len(frac) {
				f += int64(frac[i] - '0')
			}
		}
		if len(frac) > 3 && frac[3] >= '5' {
			f++
		}
		ns += f
		if neg {
			ns = -ns
		}
		return ns, true, nil
	}
	v, perr := strconv.ParseFloat(s, 64)
	if perr != nil || math.IsNaN(v) || math.IsInf(v, 0) || math.Abs(v) > maxTimeMicros {
		return 0, true, fmt.Errorf("%q is not a time in range", s)
	}
	return int64(math.Round(v * 1000)), true, nil
}

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
