package mcpserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// The frame reader stands in front of the SDK on stdin. It splits input
// into lines, answers every line that is not one JSON-RPC 2.0 message MCP
// accepts with an error reply of its own, and hands the others on.
//
// Why not mcp.IOTransport: in go-sdk v1.8.0 any decoding error ends the
// session (mcp/transport.go: the read goroutine stops at the first error
// from json.Decoder or readBatch, and jsonrpc2's readIncoming treats it as
// the end of the stream), so one bad line exits the server with no reply:
//
//	printf '%s\n%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}' '{' |
//	  fox-mcp serve --project-root .   # exit 1, nothing on stdout
//
// ('not json', 'null', '[]', '[{…},{…}]', '{"jsonrpc":"1.0",…}', '{…,"id":{}}',
// a NUL byte, 100000 '[' and a line over the SDK's line limit do the same;
// '{"jsonrpc":"2.0","id":null,"method":"ping"}' gets no reply at all, as
// the SDK takes it for a notification.) The SDK's decoder is not
// line-based either: after '{' it reads the next line as the rest of the
// same value. When the SDK answers these frames and keeps reading, this
// reader can go and IOTransport come back (TestMalformedFrames says when).

// DefaultMaxFrameBytes bounds one inbound line (one JSON-RPC message, its
// newline excluded) when Options.MaxFrameBytes is zero. A longer line is
// answered with -32600 as soon as the bound is passed and the rest of it
// is read and dropped, never buffered.
const DefaultMaxFrameBytes = 16 << 20

// MaxFrameDepth bounds how deeply objects and arrays of one message nest;
// the SDK refuses deeper messages when it decodes them.
const MaxFrameDepth = 1000

// frameReadBuffer is the read buffer of the frame reader; a line longer
// than this is gathered chunk by chunk up to the frame bound.
const frameReadBuffer = 64 << 10

// maxExactID is the largest integer id the SDK returns unchanged (it
// decodes ids as float64).
const maxExactID = 1 << 53

// frame is what the reader made of one line: a message for the SDK, or the
// error reply to write in its place. Exactly one of the two is set.
type frame struct {
	msg   jsonrpc.Message
	reply []byte
}

// frameReader reads newline-delimited JSON-RPC messages with a bound on a
// line's length. Lines holding only whitespace are skipped.
type frameReader struct {
	br    *bufio.Reader
	limit int
	line  []byte // the line being gathered; its capacity stays <= limit
	skip  bool   // dropping the rest of an oversized line
	err   error  // the read error, returned once no line is left
}

func newFrameReader(r io.Reader, limit int) *frameReader {
	return newFrameReaderSize(r, limit, frameReadBuffer)
}

// newFrameReaderSize is newFrameReader with a read buffer of size bytes.
func newFrameReaderSize(r io.Reader, limit, size int) *frameReader {
	if limit <= 0 {
		limit = DefaultMaxFrameBytes
	}
	return &frameReader{br: bufio.NewReaderSize(r, size), limit: limit}
}

// Next returns the frame of the next line that is not blank, or the read
// error (io.EOF at the end of input) once there is none.
func (r *frameReader) Next() (frame, error) {
	for {
		line, tooLong, err := r.next()
		switch {
		case err != nil:
			return frame{}, err
		case tooLong:
			return rejectf(nil, jsonrpc.CodeInvalidRequest, "frame longer than %d bytes (the server's frame limit)", r.limit), nil
		case blank(line):
			continue
		}
		return classify(line), nil
	}
}

// next reads one line without its newline. The line is valid until the
// next call. tooLong reports a line that passed the limit; what is left of
// it is skipped before the next line is read.
func (r *frameReader) next() (line []byte, tooLong bool, err error) {
	for r.skip && r.err == nil {
		switch _, err := r.br.ReadSlice('\n'); {
		case err == nil:
			r.skip = false
		case !errors.Is(err, bufio.ErrBufferFull):
			r.err = err
		}
	}
	if r.err != nil {
		return nil, false, r.err
	}
	if cap(r.line) > frameReadBuffer {
		r.line = nil // let a long line's buffer go
	}
	r.line = r.line[:0]
	for {
		chunk, err := r.br.ReadSlice('\n')
		if err == nil {
			chunk = chunk[:len(chunk)-1]
		}
		if len(r.line)+len(chunk) > r.limit {
			r.line = nil
			switch {
			case errors.Is(err, bufio.ErrBufferFull):
				r.skip = true
			case err != nil:
				r.err = err
			}
			return nil, true, nil
		}
		r.line = r.grow(len(chunk))
		r.line = append(r.line, chunk...)
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err != nil:
			// The last line may lack its newline; the error comes next.
			r.err = err
			if len(r.line) == 0 {
				return nil, false, err
			}
		}
		return r.line, false, nil
	}
}

// grow makes room for n more bytes in r.line, never past the limit (the
// caller has checked that they fit).
func (r *frameReader) grow(n int) []byte {
	need := len(r.line) + n
	if need <= cap(r.line) {
		return r.line
	}
	c := max(2*cap(r.line), need, 512)
	grown := make([]byte, len(r.line), min(c, r.limit))
	copy(grown, r.line)
	return grown
}

// classify checks that line is one JSON-RPC 2.0 request, notification or
// response as MCP allows them (ids are strings or integers, never null;
// no batches, which MCP 2025-06-18 removed), and decodes it for the SDK.
func classify(line []byte) frame {
	if depth(line) > MaxFrameDepth {
		return rejectf(nil, jsonrpc.CodeInvalidRequest, "frame nested deeper than %d levels", MaxFrameDepth)
	}
	if !json.Valid(line) {
		return rejectf(nil, jsonrpc.CodeParseError, "parse error: the line is not valid JSON")
	}
	switch first(line) {
	case '{':
	case '[':
		if first(line[bytes.IndexByte(line, '[')+1:]) == ']' {
			return rejectf(nil, jsonrpc.CodeInvalidRequest, "invalid request: empty batch")
		}
		return rejectf(nil, jsonrpc.CodeInvalidRequest, "invalid request: batches are not supported; send one message per line")
	default:
		return rejectf(nil, jsonrpc.CodeInvalidRequest, "invalid request: a message is a JSON object")
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(line, &m); err != nil {
		return rejectf(nil, jsonrpc.CodeParseError, "parse error: %v", err)
	}
	id, hasID, idOK := messageID(m)
	echo := any(nil) // the id an error reply carries
	if idOK {
		echo = id
	}
	if !isString(m["jsonrpc"], "2.0") {
		return rejectf(echo, jsonrpc.CodeInvalidRequest, `invalid request: "jsonrpc" must be "2.0"`)
	}
	if method, ok := m["method"]; ok {
		switch {
		case !isString(method, ""):
			return rejectf(echo, jsonrpc.CodeInvalidRequest, `invalid request: "method" must be a string`)
		case hasID && !idOK:
			return rejectf(nil, jsonrpc.CodeInvalidRequest, `invalid request: "id" must be a string or an integer`)
		}
		if p, ok := m["params"]; ok && first(p) != '{' && first(p) != '[' && string(p) != "null" {
			return rejectf(echo, jsonrpc.CodeInvalidRequest, `invalid request: "params" must be an object`)
		}
	} else if !idOK || !validResponse(m) {
		return rejectf(nil, jsonrpc.CodeInvalidRequest, `invalid request: neither a request (no "method") nor a response`)
	}
	msg, err := jsonrpc.DecodeMessage(bytes.Clone(line))
	if err != nil {
		return rejectf(echo, jsonrpc.CodeInvalidRequest, "invalid request: %v", err)
	}
	return frame{msg: msg}
}

// messageID returns the message's id as a reply would carry it: hasID says
// the member is present, ok that it is a string or an integer the SDK
// keeps exact.
func messageID(m map[string]json.RawMessage) (id any, hasID, ok bool) {
	raw, hasID := m["id"]
	if !hasID {
		return nil, false, false
	}
	switch first(raw) {
	case '"':
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return nil, true, false
		}
		return s, true, true
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		n, err := strconv.ParseInt(string(bytes.TrimSpace(raw)), 10, 64)
		if err != nil || n > maxExactID || n < -maxExactID {
			return nil, true, false
		}
		return n, true, true
	}
	return nil, true, false
}

// validResponse reports whether m has exactly one of result and error,
// and an error, if any, with an integer code and a string message.
func validResponse(m map[string]json.RawMessage) bool {
	res, hasResult := m["result"]
	e, hasError := m["error"]
	if hasResult == hasError {
		return false
	}
	if hasResult {
		return len(res) > 0
	}
	var we struct {
		Code    json.RawMessage `json:"code"`
		Message json.RawMessage `json:"message"`
	}
	if first(e) != '{' || json.Unmarshal(e, &we) != nil || !isString(we.Message, "") {
		return false
	}
	_, err := strconv.ParseInt(string(we.Code), 10, 64)
	return err == nil
}

// isString reports whether raw is a JSON string, equal to want unless want
// is empty.
func isString(raw json.RawMessage, want string) bool {
	var s string
	if first(raw) != '"' || json.Unmarshal(raw, &s) != nil {
		return false
	}
	return want == "" || s == want
}

// rejectf is the frame of an error reply to id (nil: null).
func rejectf(id any, code int, format string, args ...any) frame {
	type wireError struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
	b, err := json.Marshal(struct {
		JSONRPC string    `json:"jsonrpc"`
		ID      any       `json:"id"`
		Error   wireError `json:"error"`
	}{"2.0", id, wireError{code, fmt.Sprintf(format, args...)}})
	if err != nil { // unreachable: an id is a string or an int64
		b = []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"internal error"}}`)
	}
	return frame{reply: b}
}

// depth is how deeply arrays and objects nest in b, strings skipped; it
// needs no valid JSON.
func depth(b []byte) int {
	d, deepest := 0, 0
	inString, escaped := false, false
	for _, c := range b {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			if d++; d > deepest {
				if deepest = d; d > MaxFrameDepth {
					return d // deep enough to refuse
				}
			}
		case (c == '}' || c == ']') && d > 0:
			d--
		}
	}
	return deepest
}

// first is the first byte of b that is not JSON whitespace, or -1.
func first(b []byte) int {
	for _, c := range b {
		if !isSpace(c) {
			return int(c)
		}
	}
	return -1
}

func blank(b []byte) bool { return first(b) < 0 }

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }
