// Package profile imports CPU profiles from the collectors people already use
// (pprof protobuf, `perf script` text, speedscope JSON and folded/collapsed
// stacks) into one data model: pprof's own, github.com/google/pprof/profile.
//
// Why one model, and why pprof's: flameox must agree exactly with
// `go tool pprof` on the same data. Converting every format into a
// *profile.Profile means there is a single set of flat/cumulative rules
// (pprof's, implemented by [Top]) instead of one per format, and any
// converted profile can be written out and checked with the real tool.
//
// Formats are recognised by content, never by file name ([Detect]). Gzip is
// unwrapped first. A file that cannot be identified, or that is empty,
// truncated or malformed, fails with a *[ParseError]; nothing is guessed.
//
// Conventions of the conversion:
//   - perf script: one sample type per event name ("cycles/count",
//     "task-clock/nanoseconds" when perf printed the period column; the value
//     is then the period, otherwise 1 per sample). A sample carries its value
//     only in its own event's column and zero elsewhere, so events are never
//     summed together. Labels: string "thread" (comm); numeric "thread_id"
//     and "pid" (pid only when perf printed pid/tid).
//   - speedscope: "samples/count" (1 per sample, sampled profiles only) and a
//     weight type per unit family ("time/nanoseconds", "space/bytes",
//     "weight/count"); time is converted to integer nanoseconds. Evented
//     profiles become one sample per distinct open stack, weighted by the time
//     it was open. Labels: string "thread" (profile name); numeric
//     "profile_index", and "thread_id" and "pid" when the name carries them
//     (py-spy).
//   - collapsed: "samples/count", one sample per line, names kept verbatim
//     (including _[k]/_[j] annotations and comm-PID roots).
//
// A pprof input is kept as it is, labels included (parca-agent, for one,
// writes string labels "thread_id" and "thread_name").
//
// Unsymbolized frames are locations without Line entries; native frames keep
// their address and their module as the location's Mapping.
package profile

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/google/pprof/profile"
)

// Format is an input format recognised by content.
type Format string

// The formats this package reads.
const (
	FormatUnknown    Format = "unknown"
	FormatPprof      Format = "pprof"
	FormatPerfScript Format = "perf-script"
	FormatSpeedscope Format = "speedscope"
	FormatCollapsed  Format = "collapsed"
)

// detectPrefix is how much of the input Parse looks at to choose a parser.
const detectPrefix = 64 << 10

// DefaultMaxBytes caps the (decompressed) input when Options.MaxBytes is 0.
const DefaultMaxBytes = 1 << 30

// Options tune Parse. The zero value is ready to use.
type Options struct {
	MaxBytes    int64 // cap on input bytes after decompression; 0 = DefaultMaxBytes
	KeepMangled bool  // do not demangle Rust/C++ symbols in perf script
}

// Profile is an imported profile in pprof's model plus what the import learnt.
type Profile struct {
	P           *profile.Profile
	Format      Format
	Events      []string // perf script event names, in order of first appearance
	Limitations []string // what the conversion could not keep or had to assume
	Producer    string   // e.g. "py-spy 0.4.1", "perf 4.13.0", "go", "pyinstrument"
}

// Sentinels carried by ParseError.Err, for errors.Is.
var (
	ErrUnknownFormat = errors.New("unrecognized profile format")
	ErrTooLarge      = errors.New("profile input too large")
)

// ParseError reports input that is not a profile this package can read. The
// caller maps it to ARTIFACT_PARSE_FAILED (or ARTIFACT_TOO_LARGE for
// ErrTooLarge).
type ParseError struct {
	Format Format // the format detected, FormatUnknown if none
	Reason string
	Line   int   // 1-based line in the (decompressed) text, 0 if not applicable
	Offset int64 // byte offset in the (decompressed) input, -1 if unknown
	Err    error // underlying error, if any
}

func (e *ParseError) Error() string {
	msg := "parse " + string(e.Format) + " profile"
	if e.Line > 0 {
		msg += fmt.Sprintf(": line %d", e.Line)
	} else if e.Offset >= 0 {
		msg += fmt.Sprintf(": offset %d", e.Offset)
	}
	return msg + ": " + e.Reason
}

func (e *ParseError) Unwrap() error { return e.Err }

func failf(f Format, line int, format string, args ...any) *ParseError {
	return &ParseError{Format: f, Line: line, Offset: -1, Reason: fmt.Sprintf(format, args...)}
}

// Parse reads a whole profile from r, detects its format by content and
// converts it into pprof's model. Input that is not a readable profile fails
// with a *ParseError; an error from r itself is returned wrapped, as is.
func Parse(r io.Reader, opts Options) (*Profile, error) {
	limit := opts.MaxBytes
	if limit <= 0 {
		limit = DefaultMaxBytes
	}
	data, err := readCapped(r, limit)
	var pe *ParseError
	if errors.As(err, &pe) {
		return nil, pe
	} else if err != nil {
		return nil, fmt.Errorf("profile: read: %w", err)
	}
	if len(data) == 0 {
		return nil, failf(FormatUnknown, 0, "empty input")
	}
	if isGzip(data) {
		inner, gerr := readCapped(gzipReader(data), limit)
		if gerr != nil {
			if errors.As(gerr, &pe) {
				return nil, pe
			}
			return nil, &ParseError{Format: detect(inner, false), Offset: -1, Err: gerr,
				Reason: "gzip stream is truncated or corrupt: " + gerr.Error()}
		}
		if len(inner) == 0 {
			return nil, failf(FormatUnknown, 0, "empty input inside gzip")
		}
		data = inner
	}
	// Detect on a prefix; each parser validates the whole input. A speedscope
	// file may name its shared frames after the prefix, so JSON is re-checked
	// in full.
	f := detect(data[:min(len(data), detectPrefix)], false)
	if f == FormatUnknown && len(data) > detectPrefix && isJSONObject(data) && looksSpeedscope(data) {
		f = FormatSpeedscope
	}
	var p *Profile
	switch f {
	case FormatPprof:
		p, err = parsePprof(data)
	case FormatPerfScript:
		p, err = parsePerf(data, opts)
	case FormatSpeedscope:
		p, err = parseSpeedscope(data)
	case FormatCollapsed:
		p, err = parseCollapsed(data)
	default:
		return nil, &ParseError{Format: FormatUnknown, Offset: 0, Err: ErrUnknownFormat,
			Reason: "not pprof, perf script, speedscope or collapsed stacks"}
	}
	if err != nil {
		return nil, err
	}
	if err := p.P.CheckValid(); err != nil {
		return nil, &ParseError{Format: p.Format, Offset: -1, Err: err, Reason: "invalid result: " + err.Error()}
	}
	return p, nil
}

// readCapped reads at most limit bytes; more is an ErrTooLarge ParseError.
// On a read error it returns what it read so far.
func readCapped(r io.Reader, limit int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if int64(len(data)) > limit {
		return nil, &ParseError{Format: FormatUnknown, Offset: limit, Err: ErrTooLarge,
			Reason: fmt.Sprintf("input exceeds %d bytes", limit)}
	}
	return data, err
}

func isGzip(b []byte) bool { return len(b) >= 2 && b[0] == 0x1f && b[1] == 0x8b }

// gzipReader returns a reader over the decompressed stream, or one that
// fails with the header error.
func gzipReader(b []byte) io.Reader {
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return errReader{err}
	}
	return zr
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// parsePprof decodes a protobuf profile. Legacy pprof text formats are not
// accepted: they are detected as text and rejected as unknown.
func parsePprof(data []byte) (p *Profile, err error) {
	defer func() {
		if r := recover(); r != nil {
			p, err = nil, failf(FormatPprof, 0, "protobuf decoder failed: %v", r)
		}
	}()
	pp, perr := profile.ParseUncompressed(data)
	if perr != nil {
		return nil, &ParseError{Format: FormatPprof, Offset: -1, Err: perr, Reason: "not a valid pprof protobuf: " + perr.Error()}
	}
	if len(pp.SampleType) == 0 {
		return nil, failf(FormatPprof, 0, "protobuf has no sample types")
	}
	out := &Profile{P: pp, Format: FormatPprof, Producer: pprofProducer(pp)}
	unsymbolized := 0
	for _, l := range pp.Location {
		if len(l.Line) == 0 || l.Line[0].Function == nil || l.Line[0].Function.Name == "" {
			unsymbolized++
		}
	}
	if unsymbolized > 0 {
		out.Limitations = append(out.Limitations, fmt.Sprintf("%d locations are unsymbolized (address or module only)", unsymbolized))
	}
	return out, nil
}

// pprofProducer names the writer of a pprof file from its layout: "fgprof"
// (wallclock period), "go" (runtime/pprof's sample types over a Go program),
// else "pprof". Agents such as parca-agent write other layouts.
func pprofProducer(p *profile.Profile) string {
	var types []string
	for _, st := range p.SampleType {
		types = append(types, st.Type+"/"+st.Unit)
	}
	layout := strings.Join(types, ",")
	if layout == "samples/count,time/nanoseconds" && p.PeriodType != nil && p.PeriodType.Type == "wallclock" {
		return "fgprof"
	}
	switch layout {
	case "samples/count,cpu/nanoseconds", "contentions/count,delay/nanoseconds", "goroutine/count",
		"alloc_objects/count,alloc_space/bytes,inuse_objects/count,inuse_space/bytes":
		for _, f := range p.Function {
			if strings.HasPrefix(f.Name, "runtime.") {
				return "go"
			}
		}
	}
	return "pprof"
}
