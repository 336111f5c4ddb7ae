package setup

// A JSON (and JSONC: comments and trailing commas) reader that keeps the
// byte offset of every object, member and value, so an edit is a splice of
// text at one place and every other byte of the file stays as it was.
//
// Why not a library: encoding/json and BurntSushi-style decoders give
// values, not offsets, so writing back means re-marshalling the whole file
// (key order, indentation, number spelling, comments all lost).
// tailscale/hujson keeps comments and offsets too, but its Patch inserts
// values without the file's indentation and its Format re-indents the whole
// file; it is also a v0 pseudo-version module outside our package list. The
// grammar is small and its errors must name line and column, so the reader
// is here, fuzzed (FuzzJSONC) against encoding/json.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// maxDepth bounds nesting, and so the reader's recursion and allocation.
const maxDepth = 200

type kind byte

const (
	kObject kind = iota
	kArray
	kString
	kNumber
	kLiteral
)

// node is one value: [start, end) in the source.
type node struct {
	kind       kind
	start, end int
	members    []*member // objects
	elems      []*node   // arrays
}

// member is one "key": value of an object.
type member struct {
	key      string
	keyStart int
	val      *node
	comma    int // offset of the comma after the value, -1 when none
}

// SyntaxError is a malformed configuration: where and what.
type SyntaxError struct {
	Offset       int
	Line, Column int
	Msg          string
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("%d:%d: %s", e.Line, e.Column, e.Msg) }

type jparser struct {
	src   []byte
	pos   int
	jsonc bool // comments and trailing commas allowed
	depth int
}

// parseJSON reads src as one JSON value (JSONC when jsonc is set). An empty
// document (only whitespace, comments, a BOM) gives a nil node.
func parseJSON(src []byte, jsonc bool) (*node, error) {
	p := &jparser{src: src, jsonc: jsonc}
	if bytes.HasPrefix(src, []byte("\xef\xbb\xbf")) {
		p.pos = 3
	}
	if err := p.space(); err != nil {
		return nil, err
	}
	if p.pos == len(src) {
		return nil, nil
	}
	n, err := p.value()
	if err != nil {
		return nil, err
	}
	if err := p.space(); err != nil {
		return nil, err
	}
	if p.pos != len(src) {
		return nil, p.fail(p.pos, "unexpected %s after the top-level value", p.what())
	}
	return n, nil
}

func (p *jparser) fail(off int, format string, args ...any) error {
	line, col := lineCol(p.src, off)
	return &SyntaxError{Offset: off, Line: line, Column: col, Msg: fmt.Sprintf(format, args...)}
}

// lineCol converts a byte offset into a 1-based line and column (in runes).
func lineCol(src []byte, off int) (int, int) {
	off = max(0, min(off, len(src)))
	line := 1 + bytes.Count(src[:off], []byte("\n"))
	start := bytes.LastIndexByte(src[:off], '\n') + 1
	return line, 1 + utf8.RuneCount(src[start:off])
}

func (p *jparser) what() string {
	if p.pos >= len(p.src) {
		return "end of file"
	}
	r, _ := utf8.DecodeRune(p.src[p.pos:])
	return strconv.QuoteRune(r)
}

// space skips whitespace and, in JSONC, comments.
func (p *jparser) space() error {
	for p.pos < len(p.src) {
		switch c := p.src[p.pos]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			p.pos++
		case c == '/' && p.pos+1 < len(p.src) && (p.src[p.pos+1] == '/' || p.src[p.pos+1] == '*'):
			if !p.jsonc {
				return p.fail(p.pos, "comments are not allowed in this file (plain JSON)")
			}
			if p.src[p.pos+1] == '/' {
				i := bytes.IndexByte(p.src[p.pos:], '\n')
				if i < 0 {
					p.pos = len(p.src)
				} else {
					p.pos += i
				}
				continue
			}
			i := bytes.Index(p.src[p.pos+2:], []byte("*/"))
			if i < 0 {
				return p.fail(p.pos, "unterminated /* comment")
			}
			p.pos += 2 + i + 2
		default:
			return nil
		}
	}
	return nil
}

func (p *jparser) value() (*node, error) {
	if p.pos >= len(p.src) {
		return nil, p.fail(p.pos, "unexpected end of file, expected a value")
	}
	switch c := p.src[p.pos]; {
	case c == '{':
		return p.object()
	case c == '[':
		return p.array()
	case c == '"':
		start := p.pos
		if _, err := p.str(); err != nil {
			return nil, err
		}
		return &node{kind: kString, start: start, end: p.pos}, nil
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	}
	for _, lit := range []string{"true", "false", "null"} {
		if bytes.HasPrefix(p.src[p.pos:], []byte(lit)) {
			start := p.pos
			p.pos += len(lit)
			return &node{kind: kLiteral, start: start, end: p.pos}, nil
		}
	}
	return nil, p.fail(p.pos, "unexpected %s, expected a value", p.what())
}

func (p *jparser) enter() error {
	p.depth++
	if p.depth > maxDepth {
		return p.fail(p.pos, "nested deeper than %d levels", maxDepth)
	}
	return nil
}

func (p *jparser) object() (*node, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	n := &node{kind: kObject, start: p.pos}
	p.pos++
	for {
		if err := p.space(); err != nil {
			return nil, err
		}
		if p.pos < len(p.src) && p.src[p.pos] == '}' {
			if len(n.members) > 0 && n.members[len(n.members)-1].comma >= 0 && !p.jsonc {
				return nil, p.fail(n.members[len(n.members)-1].comma, "trailing comma is not allowed in this file (plain JSON)")
			}
			p.pos++
			n.end = p.pos
			return n, nil
		}
		if len(n.members) > 0 && n.members[len(n.members)-1].comma < 0 {
			return nil, p.fail(p.pos, "unexpected %s, expected ',' or '}'", p.what())
		}
		if p.pos >= len(p.src) || p.src[p.pos] != '"' {
			return nil, p.fail(p.pos, "unexpected %s, expected a quoted key or '}'", p.what())
		}
		m := &member{keyStart: p.pos, comma: -1}
		key, err := p.str()
		if err != nil {
			return nil, err
		}
		m.key = key
		if err := p.space(); err != nil {
			return nil, err
		}
		if p.pos >= len(p.src) || p.src[p.pos] != ':' {
			return nil, p.fail(p.pos, "unexpected %s, expected ':' after the key %q", p.what(), key)
		}
		p.pos++
		if err := p.space(); err != nil {
			return nil, err
		}
		if m.val, err = p.value(); err != nil {
			return nil, err
		}
		n.members = append(n.members, m)
		if err := p.space(); err != nil {
			return nil, err
		}
		if p.pos < len(p.src) && p.src[p.pos] == ',' {
			m.comma = p.pos
			p.pos++
		}
	}
}

func (p *jparser) array() (*node, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	n := &node{kind: kArray, start: p.pos}
	p.pos++
	comma := true // may a value come next
	lastComma := -1
	for {
		if err := p.space(); err != nil {
			return nil, err
		}
		if p.pos < len(p.src) && p.src[p.pos] == ']' {
			if lastComma >= 0 && comma && !p.jsonc {
				return nil, p.fail(lastComma, "trailing comma is not allowed in this file (plain JSON)")
			}
			p.pos++
			n.end = p.pos
			return n, nil
		}
		if !comma {
			return nil, p.fail(p.pos, "unexpected %s, expected ',' or ']'", p.what())
		}
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		n.elems = append(n.elems, v)
		comma = false
		if err := p.space(); err != nil {
			return nil, err
		}
		if p.pos < len(p.src) && p.src[p.pos] == ',' {
			lastComma, comma = p.pos, true
			p.pos++
		}
	}
}

// str reads a string at p.pos and returns its value.
func (p *jparser) str() (string, error) {
	start := p.pos
	p.pos++
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		switch {
		case c == '"':
			p.pos++
			var s string
			if err := json.Unmarshal(p.src[start:p.pos], &s); err != nil {
				return "", p.fail(start, "invalid string: %v", err)
			}
			return s, nil
		case c == '\\':
			if p.pos+1 >= len(p.src) {
				return "", p.fail(p.pos, "unterminated string")
			}
			switch e := p.src[p.pos+1]; e {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				p.pos += 2
			case 'u':
				if p.pos+6 > len(p.src) {
					return "", p.fail(p.pos, "invalid \\u escape")
				}
				if _, err := strconv.ParseUint(string(p.src[p.pos+2:p.pos+6]), 16, 16); err != nil {
					return "", p.fail(p.pos, "invalid \\u escape")
				}
				p.pos += 6
			default:
				return "", p.fail(p.pos, "invalid escape \\%c in a string", e)
			}
		case c < 0x20:
			return "", p.fail(p.pos, "control character in a string (a raw newline or tab must be escaped)")
		default:
			r, size := utf8.DecodeRune(p.src[p.pos:])
			if r == utf8.RuneError && size == 1 {
				return "", p.fail(p.pos, "invalid UTF-8 in a string")
			}
			p.pos += size
		}
	}
	return "", p.fail(start, "unterminated string")
}

func (p *jparser) number() (*node, error) {
	start := p.pos
	for p.pos < len(p.src) && bytes.IndexByte([]byte("+-0123456789.eE"), p.src[p.pos]) >= 0 {
		p.pos++
	}
	if !json.Valid(p.src[start:p.pos]) {
		return nil, p.fail(start, "invalid number %q", p.src[start:p.pos])
	}
	return &node{kind: kNumber, start: start, end: p.pos}, nil
}

// get returns the member key of object n, the last one when repeated (as
// JavaScript's JSON.parse keeps the last).
func (n *node) get(key string) *member {
	if n == nil || n.kind != kObject {
		return nil
	}
	for i := len(n.members) - 1; i >= 0; i-- {
		if n.members[i].key == key {
			return n.members[i]
		}
	}
	return nil
}

// decode converts n into encoding/json's generic values (map[string]any,
// []any, string, float64 as json.Number, bool, nil), for comparisons.
func (n *node) decode(src []byte) any {
	switch n.kind {
	case kObject:
		m := make(map[string]any, len(n.members))
		for _, mb := range n.members {
			m[mb.key] = mb.val.decode(src)
		}
		return m
	case kArray:
		a := make([]any, len(n.elems))
		for i, e := range n.elems {
			a[i] = e.decode(src)
		}
		return a
	}
	var v any
	d := json.NewDecoder(bytes.NewReader(src[n.start:n.end]))
	d.UseNumber()
	d.Decode(&v)
	return v
}
