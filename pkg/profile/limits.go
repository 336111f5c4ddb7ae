package profile

import (
	"errors"
	"fmt"
)

// Limits bound what decoding allocates, not only the bytes it reads: a
// small gzip file can inflate into hundreds of millions of empty strings,
// locations or frames, each of which costs a decoder far more memory than
// the two bytes that encode it. Every parser counts what it is about to
// allocate against these limits and fails with a *ParseError wrapping
// ErrTooLarge (and naming the limit, see LimitError) before it allocates
// more. A zero field takes its DefaultLimits value.
//
// The type is also config.toml's `[limits]` section (pkg/config aliases it,
// so the parser and the configuration cannot drift); docs/configuration.md
// says what each key counts in each format.
type Limits struct {
	MaxDecompressedBytes int64 `toml:"max_decompressed_bytes"` // input bytes after gunzip
	MaxStrings           int64 `toml:"max_strings"`            // pprof string table entries and comments; distinct perf callchain lines
	MaxStringBytes       int64 `toml:"max_string_bytes"`       // total bytes of the strings kept (names, files, labels)
	MaxLocations         int64 `toml:"max_locations"`          // pprof locations and their line entries; speedscope frames; distinct perf/collapsed frames
	MaxFunctions         int64 `toml:"max_functions"`          // pprof functions; distinct function names of the text formats
	MaxMappings          int64 `toml:"max_mappings"`           // pprof mappings; distinct perf modules
	MaxSamples           int64 `toml:"max_samples"`            // pprof samples; speedscope samples and profiles; collapsed lines; distinct perf stacks
	MaxSampleTypes       int64 `toml:"max_sample_types"`       // pprof sample types and values per sample; perf events; speedscope profiles' unit families
	MaxLabels            int64 `toml:"max_labels"`             // pprof sample labels, in all samples
	MaxStackDepth        int64 `toml:"max_stack_depth"`        // frames in one stack (one sample, one line, one open evented stack)
	MaxStackFrames       int64 `toml:"max_stack_frames"`       // frames in all stacks together
	MaxEvents            int64 `toml:"max_events"`             // speedscope open/close events, in all profiles
	MaxJSONDepth         int64 `toml:"max_json_depth"`         // nesting of JSON arrays and objects
}

// DefaultLimits returns the defaults: generous enough for every real
// profile seen (a 10^6-location pprof imports within them) and small enough
// that what they admit fits in a few GiB of memory. docs/performance.md
// records what the bomb corpus costs under them.
func DefaultLimits() Limits {
	return Limits{
		MaxDecompressedBytes: DefaultMaxBytes,
		MaxStrings:           8 << 20,
		MaxStringBytes:       512 << 20,
		MaxLocations:         4 << 20,
		MaxFunctions:         4 << 20,
		MaxMappings:          1 << 20,
		MaxSamples:           4 << 20,
		MaxSampleTypes:       1024,
		MaxLabels:            16 << 20,
		MaxStackDepth:        64 << 10,
		MaxStackFrames:       128 << 20,
		MaxEvents:            8 << 20,
		MaxJSONDepth:         64,
	}
}

// withDefaults fills zero fields from DefaultLimits.
func (l Limits) withDefaults() Limits {
	def := DefaultLimits()
	d := def.fields()
	for i, f := range l.fields() {
		if *f.v <= 0 {
			*f.v = *d[i].v
		}
	}
	return l
}

// Limit is one field of Limits: its `[limits]` key and value.
type Limit struct {
	Name  string
	Value int64
}

// Each lists the limits in a stable order, each with its `[limits]` key.
func (l Limits) Each() []Limit {
	fs := l.fields()
	out := make([]Limit, len(fs))
	for i, f := range fs {
		out[i] = Limit{Name: f.name, Value: *f.v}
	}
	return out
}

type field struct {
	name string
	v    *int64
}

// fields points at each field of l, with its key.
func (l *Limits) fields() []field {
	return []field{
		{LimitDecompressedBytes, &l.MaxDecompressedBytes}, {LimitStrings, &l.MaxStrings},
		{LimitStringBytes, &l.MaxStringBytes}, {LimitLocations, &l.MaxLocations},
		{LimitFunctions, &l.MaxFunctions}, {LimitMappings, &l.MaxMappings}, {LimitSamples, &l.MaxSamples},
		{LimitSampleTypes, &l.MaxSampleTypes}, {LimitLabels, &l.MaxLabels},
		{LimitStackDepth, &l.MaxStackDepth}, {LimitStackFrames, &l.MaxStackFrames},
		{LimitEvents, &l.MaxEvents}, {LimitJSONDepth, &l.MaxJSONDepth},
	}
}

// Limit names, as config.toml spells them under [limits].
const (
	LimitDecompressedBytes = "max_decompressed_bytes"
	LimitStrings           = "max_strings"
	LimitStringBytes       = "max_string_bytes"
	LimitLocations         = "max_locations"
	LimitFunctions         = "max_functions"
	LimitMappings          = "max_mappings"
	LimitSamples           = "max_samples"
	LimitSampleTypes       = "max_sample_types"
	LimitLabels            = "max_labels"
	LimitStackDepth        = "max_stack_depth"
	LimitStackFrames       = "max_stack_frames"
	LimitEvents            = "max_events"
	LimitJSONDepth         = "max_json_depth"
)

// LimitError is the detail of an ErrTooLarge ParseError: which limit was
// exceeded, its value, and the count reached when decoding stopped. Decoding
// stops at the first item over the limit, so Observed is a lower bound of
// what the whole input holds.
type LimitError struct {
	Limit    string // a Limit* name
	Max      int64
	Observed int64
	What     string // what was counted, e.g. "pprof string table entries"
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("%s: more than %d %s (limit %s)", ErrTooLarge, e.Max, e.What, e.Limit)
}

// Is makes errors.Is(err, ErrTooLarge) hold for a LimitError.
func (e *LimitError) Is(target error) bool { return target == ErrTooLarge }

// tooMany returns the ParseError for a count over a limit.
func tooMany(f Format, limit string, max, observed int64, what string) *ParseError {
	le := &LimitError{Limit: limit, Max: max, Observed: observed, What: what}
	return &ParseError{Format: f, Offset: -1, Err: le,
		Reason: fmt.Sprintf("more than %d %s: the input exceeds limit %s", max, what, limit)}
}

// AsLimit returns the LimitError inside err, if any.
func AsLimit(err error) (*LimitError, bool) {
	var le *LimitError
	ok := errors.As(err, &le)
	return le, ok
}

// counter counts one kind of item against its limit.
type counter struct {
	n, max int64
	limit  string
	what   string
}

func newCounter(max int64, limit, what string) counter {
	return counter{max: max, limit: limit, what: what}
}

// add counts k more items, failing once the total passes the limit.
func (c *counter) add(f Format, k int64) error {
	c.n += k
	if c.n > c.max {
		return tooMany(f, c.limit, c.max, c.n, c.what)
	}
	return nil
}
