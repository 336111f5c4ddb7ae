package profile

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"

	"github.com/google/pprof/profile"
	"github.com/klauspost/compress/gzip"
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

// FormatPprofLegacy is every format pprof reads besides its protobuf:
// legacy heap, growth, contention, thread and count text, Java profiles
// and the gperftools binary CPU profile (legacy.go).
const FormatPprofLegacy Format = "pprof-legacy"

// detectPrefix is how much of the input Parse looks at to choose a parser.
const detectPrefix = 64 << 10

// DefaultMaxBytes caps the (decompressed) input when Options.MaxBytes is 0.
const DefaultMaxBytes = 1 << 30

// Options tune Parse. The zero value is ready to use.
type Options struct {
	// MaxBytes caps the input bytes after decompression when
	// Limits.MaxDecompressedBytes is 0; 0 = DefaultMaxBytes.
	MaxBytes int64
	// Limits bound what decoding allocates; zero fields take
	// DefaultLimits.
	Limits      Limits
	KeepMangled bool // do not demangle Rust/C++ symbols in perf script
}

// limits returns the effective limits of opts.
func (o Options) limits() Limits {
	l := o.Limits
	if l.MaxDecompressedBytes <= 0 {
		l.MaxDecompressedBytes = o.MaxBytes
	}
	return l.withDefaults()
}

// Profile is an imported profile in pprof's model plus what the import learnt.
type Profile struct {
	P           *profile.Profile
	Format      Format
	Events      []string // perf script event names, in order of first appearance
	Limitations []string // what the conversion could not keep or had to assume
	Producer    string   // e.g. "py-spy 0.4.1", "perf 4.13.0", "go", "pyinstrument"
	// Counts, when set, holds for each P.Sample how many samples the
	// parser merged into it (perf script merges samples that share event,
	// thread and callchain). Nil means each record is one sample record,
	// as pprof counts them.
	Counts []int64
	// checked says P already passed pprof's CheckValid (fromPprof runs it
	// on what pprof's decoder returned), so Parse need not run it again.
	checked bool
}

// Totals is [Totals] over p's records, counting merged samples (Counts)
// as the samples they stand for.
func (p *Profile) Totals(sampleIndex int) (total, samples int64) {
	if p.Counts == nil {
		return Totals(p.P, sampleIndex)
	}
	if p.P == nil || sampleIndex < 0 || sampleIndex >= len(p.P.SampleType) {
		return 0, 0
	}
	for i, s := range p.P.Sample {
		if sampleIndex < len(s.Value) && s.Value[sampleIndex] != 0 {
			total += abs(s.Value[sampleIndex])
			samples += p.Counts[i]
		}
	}
	return total, samples
}

// Count is how many samples record i stands for (1 unless Counts says).
func (p *Profile) Count(i int) int64 {
	if p.Counts == nil {
		return 1
	}
	return p.Counts[i]
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
// perf script text is parsed as it streams in; the other formats are read
// whole first (their decoders need all of it).
//
// What decoding allocates is bounded by opts.Limits: input over a limit
// fails with a *ParseError wrapping ErrTooLarge and a *LimitError naming
// the limit, before the memory is allocated.
func Parse(r io.Reader, opts Options) (*Profile, error) {
	lim := opts.limits()
	opts.Limits = lim
	limit := lim.MaxDecompressedBytes
	in := bufio.NewReaderSize(&cappedReader{r: r, left: limit}, 64<<10)
	magic, err := in.Peek(2)
	if len(magic) == 0 {
		if err != nil && err != io.EOF {
			return nil, readFailure(err, nil, FormatUnknown)
		}
		return nil, failf(FormatUnknown, 0, "empty input")
	}
	var src io.Reader = in
	zipped := isGzip(magic)
	hint := sizeHint(r, zipped, limit)
	if zipped {
		zr, err := gzip.NewReader(in)
		if err != nil {
			return nil, readFailure(gzipFailure(err), nil, FormatUnknown)
		}
		src = &cappedReader{r: gzipErrors{zr}, left: limit}
	}
	body := bufio.NewReaderSize(src, 256<<10)
	head, err := body.Peek(detectPrefix)
	if err != nil && err != io.EOF && err != bufio.ErrBufferFull {
		return nil, readFailure(err, head, FormatUnknown)
	}
	if len(head) == 0 {
		if zipped {
			return nil, failf(FormatUnknown, 0, "empty input inside gzip")
		}
		return nil, failf(FormatUnknown, 0, "empty input")
	}
	// Detect on a prefix; each parser validates the whole input. A speedscope
	// file may name its shared frames after the prefix, so JSON is re-checked
	// in full.
	//
	// The text formats and pprof are read as they stream in, their counts
	// checked against the limits line by line or field by field, so that a
	// bomb fails after a few MB instead of after inflating in full. JSON is
	// read whole (encoding/json needs it), then counted before decoding.
	f := detect(head, false)
	var p *Profile
	switch {
	case f == FormatPerfScript:
		p, err = parsePerf(body, opts)
	case f == FormatCollapsed:
		p, err = parseCollapsedReader(body, lim)
	case f == FormatPprof:
		p, err = readPprof(body, lim, hint)
	case f == FormatPprofLegacy:
		var data []byte
		if data, err = readAll(body, limit); err == nil {
			p, err = parseLegacy(data, lim)
		}
	case f == FormatSpeedscope || isJSONObject(head) && len(head) >= detectPrefix:
		var data []byte
		data, err = readAll(body, limit)
		if err != nil {
			return nil, readFailure(err, data, FormatUnknown)
		}
		if f == FormatUnknown && looksSpeedscope(data) {
			f = FormatSpeedscope
		}
		if f != FormatSpeedscope {
			return nil, unknownFormat()
		}
		if p, err = parseSpeedscope(data, lim); err != nil {
			return nil, err // its own verdict, "not speedscope" (unknown) included
		}
	default:
		return nil, unknownFormat()
	}
	if err != nil {
		return nil, readFailure(err, nil, f)
	}
	if p.checked {
		return p, nil
	}
	if err := checkValid(p.P); err != nil {
		return nil, &ParseError{Format: p.Format, Offset: -1, Err: err, Reason: "invalid result: " + err.Error()}
	}
	return p, nil
}

func unknownFormat() *ParseError {
	return &ParseError{Format: FormatUnknown, Offset: 0, Err: ErrUnknownFormat,
		Reason: "not pprof (protobuf or legacy), perf script, speedscope or collapsed stacks"}
}

// sizeHint is how many bytes r will decompress to, when r is a file: its
// size, or for gzip the size its trailer records (ISIZE, the last member's
// length mod 2^32), so that the reader's buffer is allocated once rather
// than grown by doubling (a 10^6-location profile's 75 MB took 0.22 s of
// copies and fresh pages that way; docs/performance.md). The hint only
// sizes a buffer: it is capped at limit and, for gzip, at 64 times the
// compressed size (pprof files inflate 3-5 times, text up to 20), so a
// forged trailer cannot make a small file allocate much; a larger real
// size grows the buffer as before. 0 when unknown.
func sizeHint(r io.Reader, zipped bool, limit int64) int64 {
	f, ok := r.(interface {
		io.ReaderAt
		Stat() (fs.FileInfo, error)
	})
	if !ok {
		return 0
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return 0
	}
	size := fi.Size()
	if zipped {
		var tail [4]byte
		if size < 18 { // a gzip header and trailer
			return 0
		}
		if _, err := f.ReadAt(tail[:], size-4); err != nil {
			return 0
		}
		size = min(int64(binary.LittleEndian.Uint32(tail[:])), 64*size)
	}
	return min(size, limit)
}

// readAll reads r whole; r fails by itself past limit (cappedReader), so
// the buffer is never grown past it.
func readAll(r io.Reader, limit int64) ([]byte, error) {
	buf := make([]byte, 0, min(limit+1, 1<<20))
	for {
		buf = grow(buf, limit)
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

// grow makes room in a full buf, doubling it but never past limit+1 bytes
// (the reader fails at limit+1). It allocates the new capacity exactly:
// append's growth would round a 1 GiB limit up to 1.3 GiB.
func grow(buf []byte, limit int64) []byte {
	if len(buf) < cap(buf) {
		return buf
	}
	n := max(int64(cap(buf))+1, min(2*int64(cap(buf)), limit+1))
	nb := make([]byte, len(buf), n)
	copy(nb, buf)
	return nb
}

// readFailure returns a *ParseError as is (naming the format when it was
// found: given, or detected on what was read) and wraps any other error
// from the reader.
func readFailure(err error, seen []byte, f Format) error {
	var pe *ParseError
	if !errors.As(err, &pe) {
		return fmt.Errorf("profile: read: %w", err)
	}
	if pe.Format == FormatUnknown && !errors.Is(pe, ErrTooLarge) {
		if f == FormatUnknown {
			f = detect(seen[:min(len(seen), detectPrefix)], false)
		}
		pe.Format = f
	}
	return pe
}

// cappedReader fails with an ErrTooLarge ParseError once more than left
// bytes come from r.
type cappedReader struct {
	r    io.Reader
	left int64
	read int64
}

func (c *cappedReader) Read(p []byte) (int, error) {
	if int64(len(p)) > c.left+1 {
		p = p[:c.left+1]
	}
	n, err := c.r.Read(p)
	if int64(n) > c.left {
		max := c.read + c.left
		return 0, &ParseError{Format: FormatUnknown, Offset: max,
			Err:    &LimitError{Limit: LimitDecompressedBytes, Max: max, Observed: max + 1, What: "bytes of (decompressed) input"},
			Reason: fmt.Sprintf("input exceeds %d bytes", max)}
	}
	c.left -= int64(n)
	c.read += int64(n)
	return n, err
}

// gzipErrors turns the decompressor's failures into ParseErrors.
type gzipErrors struct{ r io.Reader }

func (g gzipErrors) Read(p []byte) (int, error) {
	n, err := g.r.Read(p)
	var pe *ParseError
	if err != nil && err != io.EOF && !errors.As(err, &pe) {
		err = gzipFailure(err)
	}
	return n, err
}

func gzipFailure(err error) error {
	if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return &ParseError{Format: FormatUnknown, Offset: -1, Err: err,
		Reason: "gzip stream is truncated or corrupt: " + err.Error()}
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

// parsePprof decodes a protobuf profile. Legacy formats are read by
// parseLegacy (legacy.go).
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
	return fromPprof(pp, FormatPprof)
}

// fromPprof is the one path from pprof's decoded model to a Profile, for
// the protobuf and for the legacy formats alike.
func fromPprof(pp *profile.Profile, f Format) (*Profile, error) {
	if len(pp.SampleType) == 0 {
		return nil, failf(f, 0, "profile has no sample types")
	}
	// pprof's decoder accepts what its own consistency check refuses (a
	// location with the reserved id 0, a sample of the wrong length): such
	// a profile would be stored as if it were readable.
	if err := checkValid(pp); err != nil {
		return nil, failf(f, 0, "profile is not consistent: %v", err)
	}
	out := &Profile{P: pp, Format: f, Producer: pprofProducer(pp), checked: true}
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
