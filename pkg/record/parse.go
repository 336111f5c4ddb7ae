package record

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// member is one top-level "key": value pair of an object, as raw bytes.
type member struct {
	key, value []byte // key with its quotes; value without surrounding space
}

// scan walks line once, tracking strings and escapes, and returns the maximum
// nesting depth reached, stopping as soon as it exceeds maxDepth. If the top
// level is an object it also returns the object's members. The results are
// meaningful only for valid JSON, but scan is safe on any input.
func scan(line []byte, maxDepth int) (depth int, members []member) {
	var (
		cur, max    int
		inStr, esc  bool
		object      bool // top-level value is an object
		keyNext     bool // at depth 1 of the object, the next string is a key
		keyStart    = -1
		key         []byte
		valueStart  = -1
		endOfMember = func(end int) {
			if object && valueStart >= 0 {
				v := bytes.TrimSpace(line[valueStart:end])
				members = append(members, member{key, v})
				valueStart = -1
			}
		}
	)
	for i, c := range line {
		if inStr {
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
				if keyStart >= 0 {
					key = line[keyStart : i+1]
					keyStart = -1
				}
			}
			continue
		}
		switch c {
		case '"':
			inStr = true
			keyStart = -1
			if object && cur == 1 && keyNext {
				keyStart = i
				keyNext = false
			}
		case '{', '[':
			if cur == 0 && c == '{' {
				object, keyNext = true, true
			}
			cur++
			if cur > max {
				max = cur
				if max > maxDepth {
					return max, nil
				}
			}
		case '}', ']':
			if cur == 1 {
				endOfMember(i)
			}
			cur--
		case ':':
			if cur == 1 {
				valueStart = i + 1
			}
		case ',':
			if cur == 1 {
				endOfMember(i)
				keyNext = true
			}
		}
	}
	return max, members
}

// parseLine checks that line is a well-formed record within maxDepth and
// returns its header, or a message saying what is wrong with it.
func parseLine(line []byte, maxDepth int) (Header, string) {
	if !utf8.Valid(line) {
		return Header{}, fmt.Sprintf("invalid UTF-8 at byte %d", invalidUTF8(line))
	}
	depth, members := scan(line, maxDepth)
	if depth > maxDepth {
		return Header{}, fmt.Sprintf("JSON nesting deeper than %d", maxDepth)
	}
	if !json.Valid(line) {
		var v any
		err := json.Unmarshal(line, &v) // only checks validity: v stays nil
		return Header{}, fmt.Sprintf("invalid JSON: %v", err)
	}
	if t := bytes.TrimLeft(line, " \t\r\n"); t[0] != '{' {
		return Header{}, "not a JSON object"
	}
	var kind, version []byte
	for _, m := range members {
		name := string(m.key[1 : len(m.key)-1])
		if bytes.IndexByte(m.key, '\\') >= 0 {
			json.Unmarshal(m.key, &name) // valid JSON string: cannot fail
		}
		var dst *[]byte
		switch {
		case name == "record":
			dst = &kind
		case name == "schema_version":
			dst = &version
		case strings.EqualFold(name, "record"), strings.EqualFold(name, "schema_version"):
			return Header{}, fmt.Sprintf("field %q: header field names are lower case", name)
		default:
			continue
		}
		if *dst != nil {
			return Header{}, fmt.Sprintf("duplicate %q field", name)
		}
		*dst = m.value
	}
	var h Header
	switch {
	case kind == nil:
		return h, `missing "record" field`
	case kind[0] != '"':
		return h, fmt.Sprintf(`"record" is %.40s, not a string`, kind)
	}
	json.Unmarshal(kind, &h.Record) // valid JSON string: cannot fail
	if !validKind(h.Record) {
		return Header{}, fmt.Sprintf("invalid record kind %q: want [a-z][a-z0-9_]*", h.Record)
	}
	if version == nil {
		return Header{}, `missing "schema_version" field`
	}
	n, err := strconv.ParseInt(string(version), 10, 32)
	if err != nil || n < 1 || version[0] < '1' || version[0] > '9' {
		return Header{}, fmt.Sprintf("invalid schema_version %.40s: want an integer from 1 to 2147483647", version)
	}
	h.SchemaVersion = int(n)
	return h, ""
}

// invalidUTF8 returns the offset of the first invalid UTF-8 sequence in b.
func invalidUTF8(b []byte) int {
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 {
			return i
		}
		i += size
	}
	return len(b)
}

// blank reports whether line holds only spaces and tabs.
func blank(line []byte) bool {
	for _, c := range line {
		if c != ' ' && c != '\t' {
			return false
		}
	}
	return true
}
