package record

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math"
)

// Default budgets; see the package documentation.
const (
	DefaultMaxLineBytes = 4 << 20
	DefaultMaxDepth     = 64
)

// readSize is the size of the Reader's input buffer, and so the step in which
// it reads and discards an over-long line.
const readSize = 64 << 10

// An Option changes a budget of a Reader.
type Option func(*Reader)

// MaxLineBytes sets the line budget: the longest line accepted, in bytes,
// not counting "\n" and the "\r" before it. n <= 0 selects
// DefaultMaxLineBytes.
func MaxLineBytes(n int) Option {
	return func(r *Reader) {
		if n <= 0 {
			n = DefaultMaxLineBytes
		}
		r.maxLine = min(n, math.MaxInt/2)
	}
}

// MaxDepth sets the depth budget: the deepest JSON nesting accepted, the
// top-level object being at depth 1. n <= 0 selects DefaultMaxDepth.
func MaxDepth(n int) Option {
	return func(r *Reader) {
		if n <= 0 {
			n = DefaultMaxDepth
		}
		r.maxDepth = n
	}
}

// Reader reads records from a stream, one line at a time.
//
// Typical use:
//
//	r := record.NewReader(os.Stdin, "<stdin>")
//	for r.Scan() {
//		switch it := r.Record().(type) {
//		case *record.Raw:
//			// use it.Header, it.Decode, ...
//		case *record.SyntaxError:
//			fmt.Fprintln(os.Stderr, it) // and exit non-zero at the end
//		}
//	}
//	if err := r.Err(); err != nil { ... }
type Reader struct {
	br       *bufio.Reader
	file     string
	maxLine  int
	maxDepth int

	buf    []byte // line being assembled from several buffer-fulls
	lineNo int
	item   Item
	err    error
	done   bool
}

// NewReader returns a Reader reading r. fileName names the input in errors
// and positions, for example "<stdin>". The options set the budgets, which
// default to DefaultMaxLineBytes and DefaultMaxDepth.
func NewReader(r io.Reader, fileName string, opts ...Option) *Reader {
	rd := &Reader{
		br:       bufio.NewReaderSize(r, readSize),
		file:     fileName,
		maxLine:  DefaultMaxLineBytes,
		maxDepth: DefaultMaxDepth,
	}
	for _, o := range opts {
		o(rd)
	}
	return rd
}

// Scan advances to the next non-blank line, which is then available through
// Record. It returns false at the end of the input or on an I/O error; Err
// tells them apart. Malformed lines do not stop Scan.
func (r *Reader) Scan() bool {
	r.item = nil
	for !r.done {
		line, tooLong := r.readLine()
		if line == nil && !tooLong {
			continue // blank line or end of input
		}
		if tooLong {
			r.item = r.syntaxError(fmt.Sprintf("line longer than %d bytes", r.maxLine))
			return true
		}
		h, msg := parseLine(line, r.maxDepth)
		if msg != "" {
			r.item = r.syntaxError(msg)
			return true
		}
		r.item = &Raw{Header: h, Line: bytes.Clone(line), File: r.file, LineNo: r.lineNo}
		return true
	}
	return false
}

// Record returns the line read by the last successful call to Scan: a *Raw
// or a *SyntaxError. The Item belongs to the caller.
func (r *Reader) Record() Item { return r.item }

// Err returns the first error reading the input, or nil at a normal end of
// input. It never returns a *SyntaxError.
func (r *Reader) Err() error { return r.err }

func (r *Reader) syntaxError(msg string) *SyntaxError {
	return &SyntaxError{File: r.file, Line: r.lineNo, Msg: msg}
}

// readLine reads the next line and returns it without "\n" and a "\r" before
// it; nil for a blank line or at the end of input. If the line is over the
// budget, readLine consumes it without keeping it and reports tooLong. The
// line is valid until the next call. At end of input or on an I/O error it
// sets r.done (and r.err).
func (r *Reader) readLine() (line []byte, tooLong bool) {
	r.buf = r.buf[:0]
	limit := r.maxLine + len("\r\n")
	started := false
	var skip blankRun // over the budget: is the line blank all the same?
	for {
		chunk, err := r.br.ReadSlice('\n')
		if len(chunk) > 0 && !started {
			started = true
			r.lineNo++
		}
		switch {
		case tooLong:
			skip.add(chunk)
		case len(r.buf)+len(chunk) > limit:
			tooLong = true
			skip.add(r.buf)
			skip.add(chunk)
			r.buf = r.buf[:0]
		case err == nil && len(r.buf) == 0:
			line = chunk // whole line in one piece: no copy
		default:
			r.buf = append(r.buf, chunk...)
			line = r.buf
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil {
			r.done = true
			if err != io.EOF {
				r.err = err
				return nil, false // drop the incomplete line
			}
		}
		break
	}
	if tooLong {
		// The budget is for non-blank lines: a blank one is skipped
		// whatever its length, so that a tighter budget cannot turn it
		// into an error.
		return nil, !skip.blank()
	}
	line = bytes.TrimSuffix(line, []byte("\n"))
	line = bytes.TrimSuffix(line, []byte("\r"))
	if blank(line) {
		return nil, false
	}
	if len(line) > r.maxLine {
		return nil, true
	}
	return line, false
}

// blankRun follows, piece by piece, a line that readLine discards, to tell
// whether it is blank: spaces and tabs only, not counting its "\n" and one
// "\r" before it, as blank judges a whole line. A "\r" that ends a piece
// is held until the next piece shows whether "\n" follows it.
type blankRun struct {
	notBlank bool
	cr       bool // the last byte seen was a "\r"
}

func (b *blankRun) add(p []byte) {
	for _, c := range p {
		if b.notBlank {
			return
		}
		if b.cr {
			b.cr = false
			if c != '\n' {
				b.notBlank = true // a "\r" inside the line
				return
			}
		}
		switch c {
		case ' ', '\t', '\n':
		case '\r':
			b.cr = true
		default:
			b.notBlank = true
		}
	}
}

// blank reports whether the line was blank; a "\r" at the very end of the
// input is trimmed like the one before a "\n".
func (b *blankRun) blank() bool { return !b.notBlank }
