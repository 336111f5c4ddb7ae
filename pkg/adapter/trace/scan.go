package trace

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"
)

// The event reader. A trace is one JSON document, but all that matters is
// its traceEvents array, read one event at a time into a reused rawEvent.
// encoding/json's Decoder did that through reflection and its byte-at-a-
// time state machine, which was two thirds of the import's time; no
// maintained Go JSON library streams array elements without either
// reflection or code generation (jsoniter and sonic both bind to types,
// goccy/go-json to reflection, and none is among the chosen
// dependencies). So this scanner validates each value as strictly as
// encoding/json does (RFC 8259: strings, escapes, numbers, literals,
// nesting up to encoding/json's 10,000 levels) and fills the event's
// fields with the same rules: keys matched without regard to case, the
// last of a repeated key winning, null leaving a field empty, invalid
// UTF-8 replaced by U+FFFD, a JSON string accepted where a number is when
// it holds one. FuzzScanMatchesDecoder checks it against encoding/json.

// errMore is a value that runs past the bytes read so far.
var errMore = errors.New("need more input")

// maxNesting is encoding/json's nesting bound.
const maxNesting = 10000

// scanChunk is the most the scanner reads at once.
const scanChunk = 256 << 10

// syntaxError is malformed JSON at an offset of the (decompressed) file.
type syntaxError struct {
	msg string
	off int64
}

func (e *syntaxError) Error() string { return fmt.Sprintf("%s (at byte %d)", e.msg, e.off) }

// scanner is a window over the file: buf[pos:] is unread; a value being
// measured stays in buf while more is read after it.
type scanner struct {
	r    io.Reader
	buf  []byte
	pos  int
	base int64 // file offset of buf[0]
	eof  bool
	rerr error
	// cache interns the short strings that repeat in every event (phases,
	// names, categories), so each is allocated once.
	cache map[string]string
}

const (
	maxCached    = 64 << 10 // cache entries
	maxCachedLen = 256      // bytes of a cached string
)

// fill reads once more into buf; false when nothing more will come.
func (s *scanner) fill() bool {
	for !s.eof && s.rerr == nil {
		if cap(s.buf)-len(s.buf) < scanChunk/4 {
			nb := make([]byte, len(s.buf), max(2*cap(s.buf), len(s.buf)+scanChunk))
			copy(nb, s.buf)
			s.buf = nb
		}
		n, err := s.r.Read(s.buf[len(s.buf):min(cap(s.buf), len(s.buf)+scanChunk)])
		s.buf = s.buf[:len(s.buf)+n]
		if err == io.EOF {
			s.eof = true
		} else if err != nil {
			s.rerr = err
		}
		if n > 0 {
			return true
		}
	}
	return false
}

// compact drops the bytes before pos when they are most of the buffer
// (only between values, so no index into buf is held).
func (s *scanner) compact() {
	if s.pos > scanChunk && s.pos > len(s.buf)/2 {
		n := copy(s.buf, s.buf[s.pos:])
		s.base += int64(s.pos)
		s.buf, s.pos = s.buf[:n], 0
	}
}

// ended is the error for input that stops where a value must go on: the
// reader's own (a corrupt gzip stream), else a truncated file.
func (s *scanner) ended() error {
	if s.rerr != nil {
		return s.rerr
	}
	return io.ErrUnexpectedEOF
}

// ws skips white space; false at the end of the input.
func (s *scanner) ws() bool {
	for {
		for s.pos < len(s.buf) {
			switch s.buf[s.pos] {
			case ' ', '\t', '\n', '\r':
				s.pos++
				continue
			}
			return true
		}
		if !s.fill() {
			return false
		}
	}
}

// value measures (and validates) the value at pos, reading more as it
// needs, and returns its end; onMember, when set, receives the members
// of a top-level object, after reset at each attempt.
func (s *scanner) value(onMember func(key, val []byte) error, reset func()) (int, error) {
	for {
		if reset != nil {
			reset()
		}
		end, err := s.measure(s.buf, s.pos, onMember)
		if err != errMore {
			return end, err
		}
		// Read at least as much again as the value holds so far, so a
		// long value is rescanned a logarithmic number of times.
		had := len(s.buf)
		want := had + (had - s.pos)
		for len(s.buf) < want {
			if !s.fill() {
				if len(s.buf) > had {
					break // something more came: measure again
				}
				return 0, s.ended()
			}
		}
	}
}

func (s *scanner) errAt(i int, format string, a ...any) error {
	return &syntaxError{msg: fmt.Sprintf(format, a...), off: s.base + int64(i)}
}

func quoteChar(c byte) string {
	if c == '\'' {
		return `'\''`
	}
	if c == '"' {
		return `'"'`
	}
	return strconv.QuoteRune(rune(c))
}

// measure returns the end of the value at b[i]; errMore when b ends
// first. A top-level object's members go to onMember (keys raw, quoted).
func (s *scanner) measure(b []byte, i int, onMember func(key, val []byte) error) (int, error) {
	return s.val(b, i, 0, onMember)
}

func skipWS(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
			continue
		}
		return i
	}
	return i
}

func (s *scanner) val(b []byte, i, depth int, onMember func(key, val []byte) error) (int, error) {
	if i >= len(b) {
		return i, errMore
	}
	switch c := b[i]; {
	case c == '{':
		if depth >= maxNesting {
			return 0, s.errAt(i, "exceeded max depth")
		}
		i = skipWS(b, i+1)
		if i >= len(b) {
			return i, errMore
		}
		if b[i] == '}' {
			return i + 1, nil
		}
		for {
			if b[i] != '"' {
				return 0, s.errAt(i, "invalid character %s looking for beginning of object key string", quoteChar(b[i]))
			}
			ks := i
			j, err := s.str(b, i)
			if err != nil {
				return j, err
			}
			ke := j
			i = skipWS(b, j)
			if i >= len(b) {
				return i, errMore
			}
			if b[i] != ':' {
				return 0, s.errAt(i, "invalid character %s after object key", quoteChar(b[i]))
			}
			i = skipWS(b, i+1)
			vs := i
			j, err = s.val(b, i, depth+1, nil)
			if err != nil {
				return j, err
			}
			if onMember != nil {
				if err := onMember(b[ks:ke], b[vs:j]); err != nil {
					return 0, err
				}
			}
			i = skipWS(b, j)
			if i >= len(b) {
				return i, errMore
			}
			switch b[i] {
			case ',':
				i = skipWS(b, i+1)
				if i >= len(b) {
					return i, errMore
				}
			case '}':
				return i + 1, nil
			default:
				return 0, s.errAt(i, "invalid character %s after object key:value pair", quoteChar(b[i]))
			}
		}
	case c == '[':
		if depth >= maxNesting {
			return 0, s.errAt(i, "exceeded max depth")
		}
		i = skipWS(b, i+1)
		if i >= len(b) {
			return i, errMore
		}
		if b[i] == ']' {
			return i + 1, nil
		}
		for {
			j, err := s.val(b, i, depth+1, nil)
			if err != nil {
				return j, err
			}
			i = skipWS(b, j)
			if i >= len(b) {
				return i, errMore
			}
			switch b[i] {
			case ',':
				i = skipWS(b, i+1)
			case ']':
				return i + 1, nil
			default:
				return 0, s.errAt(i, "invalid character %s after array element", quoteChar(b[i]))
			}
		}
	case c == '"':
		return s.str(b, i)
	case c == 't':
		return s.lit(b, i, "true")
	case c == 'f':
		return s.lit(b, i, "false")
	case c == 'n':
		return s.lit(b, i, "null")
	case c == '-' || (c >= '0' && c <= '9'):
		return s.num(b, i)
	default:
		return 0, s.errAt(i, "invalid character %s looking for beginning of value", quoteChar(c))
	}
}

func (s *scanner) lit(b []byte, i int, word string) (int, error) {
	for k := 0; k < len(word); k++ {
		if i+k >= len(b) {
			return i + k, errMore
		}
		if b[i+k] != word[k] {
			return 0, s.errAt(i+k, "invalid character %s in literal %s (expecting %s)", quoteChar(b[i+k]), word, quoteChar(word[k]))
		}
	}
	return i + len(word), nil
}

// num checks -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? at b[i]. A
// number that reaches the end of b may go on: errMore.
func (s *scanner) num(b []byte, i int) (int, error) {
	digits := func(i int) (int, bool, error) {
		st := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i >= len(b) {
			return i, false, errMore
		}
		return i, i > st, nil
	}
	if b[i] == '-' {
		i++
		if i >= len(b) {
			return i, errMore
		}
	}
	switch {
	case b[i] == '0':
		i++
		if i >= len(b) {
			return i, errMore
		}
	case b[i] >= '1' && b[i] <= '9':
		var err error
		if i, _, err = digits(i); err != nil {
			return i, err
		}
	default:
		return 0, s.errAt(i, "invalid character %s in numeric literal", quoteChar(b[i]))
	}
	if b[i] == '.' {
		j, ok, err := digits(i + 1)
		if err != nil {
			return j, err
		}
		if !ok {
			return 0, s.errAt(j, "invalid character %s after decimal point in numeric literal", quoteChar(b[j]))
		}
		i = j
	}
	if b[i] == 'e' || b[i] == 'E' {
		i++
		if i >= len(b) {
			return i, errMore
		}
		if b[i] == '+' || b[i] == '-' {
			i++
		}
		j, ok, err := digits(i)
		if err != nil {
			return j, err
		}
		if !ok {
			return 0, s.errAt(j, "invalid character %s in exponent of numeric literal", quoteChar(b[j]))
		}
		i = j
	}
	return i, nil
}

// str checks the string literal at b[i] (the opening quote) and returns
// its end past the closing quote.
func (s *scanner) str(b []byte, i int) (int, error) {
	i++
	for i < len(b) {
		c := b[i]
		switch {
		case c == '"':
			return i + 1, nil
		case c == '\\':
			if i+1 >= len(b) {
				return i, errMore
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				for k := 2; k < 6; k++ {
					if i+k >= len(b) {
						return i, errMore
					}
					if !isHex(b[i+k]) {
						return 0, s.errAt(i+k, "invalid character %s in \\u hexadecimal character escape", quoteChar(b[i+k]))
					}
				}
				i += 6
			default:
				return 0, s.errAt(i+1, "invalid character %s in string escape code", quoteChar(b[i+1]))
			}
		case c < 0x20:
			return 0, s.errAt(i, "invalid character %s in string literal", quoteChar(c))
		default:
			i++
		}
	}
	return i, errMore
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// unquote is a validated string literal's content, as encoding/json
// decodes it (escapes, surrogate pairs, invalid UTF-8 as U+FFFD); short
// plain strings come from the cache.
func (s *scanner) unquote(lit []byte) string {
	body := lit[1 : len(lit)-1]
	if bytes.IndexByte(body, '\\') < 0 && utf8.Valid(body) {
		if len(body) > maxCachedLen {
			return string(body)
		}
		if v, ok := s.cache[string(body)]; ok {
			return v
		}
		v := string(body)
		if len(s.cache) < maxCached {
			s.cache[v] = v
		}
		return v
	}
	var v string
	_ = json.Unmarshal(lit, &v) // validated: cannot fail
	return v
}

// unquoteNoCache is unquote without the cache (args keys and values).
func (s *scanner) unquoteNoCache(lit []byte) string {
	body := lit[1 : len(lit)-1]
	if bytes.IndexByte(body, '\\') < 0 && utf8.Valid(body) {
		return string(body)
	}
	var v string
	_ = json.Unmarshal(lit, &v)
	return v
}

// kind names a JSON value's type as encoding/json's errors do.
func kind(v []byte) string {
	switch v[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "bool"
	case 'n':
		return "null"
	}
	return "number"
}

// eventKey is an event field, by its key without regard to case.
func eventKey(key []byte) string {
	if len(key) > 8 {
		return ""
	}
	var buf [8]byte
	for i, c := range key {
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf[i] = c
	}
	switch k := string(buf[:len(key)]); k {
	case "ph", "name", "cat", "ts", "dur", "pid", "tid", "id", "bp", "s", "args":
		return k
	}
	return ""
}

// setField fills ev's field for one member of the event object.
func (s *scanner) setField(ev *rawEvent, key, val []byte) error {
	var k string
	if bytes.IndexByte(key, '\\') >= 0 {
		var u string
		_ = json.Unmarshal(key, &u)
		k = eventKey([]byte(u))
	} else {
		k = eventKey(key[1 : len(key)-1])
	}
	if k == "" {
		return nil
	}
	typeErr := func(want string) error {
		return &parseError{msg: "field " + k + " is a JSON " + kind(val) + ", not a " + want}
	}
	switch k {
	case "ph", "name", "cat", "bp", "s":
		var v string
		switch val[0] {
		case '"':
			v = s.unquote(val)
		case 'n':
			return nil
		default:
			return typeErr("string")
		}
		switch k {
		case "ph":
			ev.Ph = v
		case "name":
			ev.Name = v
		case "cat":
			ev.Cat = v
		case "bp":
			ev.Bp = v
		case "s":
			ev.S = v
		}
	case "ts", "dur":
		var v json.Number
		switch val[0] {
		case 'n':
			return nil
		case '"':
			t := s.unquote(val)
			if !validNumber(t) {
				return &parseError{msg: "invalid number literal, trying to unmarshal " + strconv.Quote(string(val)) + " into Number"}
			}
			v = json.Number(t)
		case '{', '[', 't', 'f':
			return typeErr("json.Number")
		default:
			v = json.Number(val)
		}
		if k == "ts" {
			ev.Ts = v
		} else {
			ev.Dur = v
		}
	case "pid":
		ev.Pid = val
	case "tid":
		ev.Tid = val
	case "id":
		ev.ID = val
	case "args":
		ev.Args = val
	}
	return nil
}

// validNumber is encoding/json's check on a string decoded into a Number.
func validNumber(t string) bool {
	if t == "" {
		return false
	}
	var sc scanner
	end, err := sc.num([]byte(t+" "), 0)
	return err == nil && end == len(t)
}

// scanAll reads a whole trace from r into b.
func scanAll(r io.Reader, b *builder) error {
	s := &scanner{r: r, buf: make([]byte, 0, scanChunk), cache: map[string]string{}}
	if !s.ws() {
		return s.ended()
	}
	switch s.buf[s.pos] {
	case '[':
		b.h.format = "array"
		s.pos++
		if err := s.events(b, true); err != nil {
			return err
		}
		if b.h.unclosed {
			return nil
		}
		return s.trailing()
	case '{':
		b.h.format = "object"
	default:
		return &parseError{msg: "not a Chrome trace: the JSON is neither an object with traceEvents nor an array of events"}
	}
	s.pos++
	seen := map[string]bool{}
	hasEvents := false
	for first := true; ; first = false {
		if !s.ws() {
			return s.ended()
		}
		c := s.buf[s.pos]
		if c == '}' {
			s.pos++
			break
		}
		if !first {
			if c != ',' {
				return s.errAt(s.pos, "invalid character %s after object key:value pair", quoteChar(c))
			}
			s.pos++
			if !s.ws() {
				return s.ended()
			}
			c = s.buf[s.pos]
		}
		if c != '"' {
			return s.errAt(s.pos, "invalid character %s looking for beginning of object key string", quoteChar(c))
		}
		end, err := s.value(nil, nil)
		if err != nil {
			return err
		}
		key := s.unquote(s.buf[s.pos:end])
		s.pos = end
		if !s.ws() {
			return s.ended()
		}
		if s.buf[s.pos] != ':' {
			return s.errAt(s.pos, "invalid character %s after object key", quoteChar(s.buf[s.pos]))
		}
		s.pos++
		if !s.ws() {
			return s.ended()
		}
		if seen[key] {
			return &parseError{at: clip(key), msg: "the key appears twice"}
		}
		seen[key] = true
		if key == "traceEvents" {
			if s.buf[s.pos] != '[' {
				if _, err := s.value(nil, nil); err != nil {
					return err
				}
				return &parseError{at: key, msg: "traceEvents is not an array"}
			}
			s.pos++
			if err := s.events(b, false); err != nil {
				return err
			}
			hasEvents = true
			continue
		}
		end, err = s.value(nil, nil)
		if err != nil {
			return err
		}
		raw := bytes.Clone(s.buf[s.pos:end])
		s.pos = end
		if err := b.headerValue(key, raw); err != nil {
			return err
		}
		s.compact()
	}
	if !hasEvents {
		return &parseError{msg: "not a Chrome trace: the object has no traceEvents array"}
	}
	return s.trailing()
}

// trailing refuses anything but white space after the document.
func (s *scanner) trailing() error {
	if s.ws() {
		return &parseError{msg: "data after the end of the trace"}
	}
	return s.rerr
}

// events reads the elements of an event array whose [ has been read. The
// array format may omit its closing ] (the format's own rule, for traces
// written by a process that died); an object-format array may not.
func (s *scanner) events(b *builder, array bool) error {
	var ev rawEvent
	for i := 0; ; i++ {
		s.compact()
		if !s.ws() {
			if array && s.rerr == nil {
				b.h.unclosed = true
				return nil
			}
			return s.ended()
		}
		c := s.buf[s.pos]
		if c == ']' {
			s.pos++
			return nil
		}
		if i > 0 {
			if c != ',' {
				return s.errAt(s.pos, "invalid character %s after array element", quoteChar(c))
			}
			s.pos++
			if !s.ws() {
				if array && s.rerr == nil {
					b.h.unclosed = true
					return nil
				}
				return s.ended()
			}
			c = s.buf[s.pos]
		}
		at := "traceEvents[" + strconv.Itoa(i) + "]"
		var fieldErr error
		var onMember func(key, val []byte) error
		if c == '{' {
			onMember = func(key, val []byte) error {
				if err := s.setField(&ev, key, val); err != nil && fieldErr == nil {
					fieldErr = err
				}
				return nil
			}
		}
		end, err := s.value(onMember, func() { ev.reset(); fieldErr = nil })
		if err != nil {
			var se *syntaxError
			if errors.As(err, &se) {
				return &parseError{at: at, msg: "malformed JSON: " + se.Error()}
			}
			return err
		}
		s.pos = end
		switch {
		case fieldErr != nil:
			var pe *parseError
			if errors.As(fieldErr, &pe) {
				pe.at = at
			}
			return fieldErr
		case c != '{' && c != 'n':
			return &parseError{at: at, msg: "the event is a JSON " + kind([]byte{c}) + ", not an object"}
		}
		if int64(i) >= b.lim.MaxEvents {
			return &limitError{key: limitEvents, max: b.lim.MaxEvents, observed: int64(i) + 1, what: "events"}
		}
		if err := b.add(&ev, i); err != nil {
			return err
		}
	}
}
