package record

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sync"

	"github.com/flameox/flameox/pkg/cli"
)

// Writer writes records to a stream, one line per call, each with a single
// Write to the underlying io.Writer and no buffering beyond that line. It is
// safe for concurrent use; lines from concurrent calls never interleave.
type Writer struct {
	mu  sync.Mutex
	w   io.Writer
	buf bytes.Buffer
}

// NewWriter returns a Writer writing to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Write marshals v compactly as one line and writes it. v must marshal to a
// JSON object with a valid header (usually a struct embedding Header) within
// DefaultMaxLineBytes and DefaultMaxDepth; otherwise Write writes nothing
// and returns an error. HTML characters are not escaped; the characters
// cli.EscapeJSON names (C1 controls, bidirectional controls) are, so that no
// stage of a pipeline hands a terminal a raw control from an artifact.
func (w *Writer) Write(v any) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Reset()
	enc := json.NewEncoder(&w.buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil { // Encode appends "\n"
		return fmt.Errorf("record: %w", err)
	}
	line := cli.EscapeJSON(w.buf.Bytes())
	if n := len(line) - 1; n > DefaultMaxLineBytes {
		return fmt.Errorf("record: %T encodes to %d bytes, over the %d-byte line budget", v, n, DefaultMaxLineBytes)
	}
	if _, msg := parseLine(line[:len(line)-1], DefaultMaxDepth); msg != "" {
		return fmt.Errorf("record: %T is not a valid record: %s", v, msg)
	}
	return w.write(line)
}

// WriteRaw writes raw.Line, followed by "\n", unchanged but for the escapes
// of cli.EscapeJSON (which keep its decoded value). It is how a filter
// passes on records it does not interpret. The line must be a well-formed
// record (as every Raw from a Reader is), but is not held to the budgets:
// the reader that accepted it already applied them.
func (w *Writer) WriteRaw(raw *Raw) error {
	if bytes.IndexByte(raw.Line, '\n') >= 0 {
		return errors.New("record: raw line contains a newline")
	}
	if _, msg := parseLine(raw.Line, math.MaxInt); msg != "" {
		return fmt.Errorf("record: raw line is not a valid record: %s", msg)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Reset()
	w.buf.Write(cli.EscapeJSON(raw.Line))
	w.buf.WriteByte('\n')
	return w.write(w.buf.Bytes())
}

// write writes line with one call to the underlying Writer.
func (w *Writer) write(line []byte) error {
	n, err := w.w.Write(line)
	if err == nil && n < len(line) {
		err = io.ErrShortWrite
	}
	return err
}
