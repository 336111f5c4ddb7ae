package setup

// Codex's config.toml is edited as text, one table at a time: the
// [mcp_servers.flameox] table's statements are replaced or appended and no
// other byte changes. BurntSushi/toml (our TOML library) validates the file
// before and after, and gives the line and column of a syntax error, but it
// decodes into values and its encoder writes a whole new document, which
// would drop every comment and reorder the user's tables. The scanner below
// only finds where tables and statements begin and end; it runs on files
// BurntSushi has already accepted.

import (
	"bytes"
	"errors"
	"reflect"
	"strings"

	"github.com/BurntSushi/toml"
)

// tomlStmt is a header line ([a.b] or [[a.b]]) or a key = value statement.
type tomlStmt struct {
	header   bool
	array    bool
	keys     []string
	start    int // start of its line
	valEnd   int // end of the value (statements) or of the ']' (headers)
	end      int // after the newline ending its last line
	keyStart int
}

type tscan struct {
	src []byte
	i   int
}

func scanTOML(src []byte) []tomlStmt {
	s := &tscan{src: src}
	var out []tomlStmt
	for s.i < len(src) {
		lineStart := s.i
		s.blanks()
		if s.i >= len(src) {
			break
		}
		switch c := src[s.i]; {
		case c == '\n' || c == '\r':
			s.toEOL()
		case c == '#':
			s.toEOL()
		case c == '[':
			st := tomlStmt{header: true, start: lineStart, keyStart: s.i}
			s.i++
			if s.i < len(src) && src[s.i] == '[' {
				st.array = true
				s.i++
			}
			st.keys = s.key()
			s.blanks()
			for s.i < len(src) && src[s.i] == ']' {
				s.i++
			}
			st.valEnd = s.i
			s.toEOL()
			st.end = s.i
			out = append(out, st)
		default:
			st := tomlStmt{start: lineStart, keyStart: s.i}
			st.keys = s.key()
			s.blanks()
			if s.i < len(src) && src[s.i] == '=' {
				s.i++
			}
			s.blanks()
			s.value()
			st.valEnd = s.i
			s.toEOL()
			st.end = s.i
			out = append(out, st)
		}
	}
	return out
}

func (s *tscan) blanks() {
	for s.i < len(s.src) && (s.src[s.i] == ' ' || s.src[s.i] == '\t') {
		s.i++
	}
}

// toEOL moves past the rest of the line and its newline.
func (s *tscan) toEOL() {
	j := bytes.IndexByte(s.src[s.i:], '\n')
	if j < 0 {
		s.i = len(s.src)
		return
	}
	s.i += j + 1
}

// space skips blanks, newlines and comments (inside arrays).
func (s *tscan) space() {
	for s.i < len(s.src) {
		switch s.src[s.i] {
		case ' ', '\t', '\r', '\n':
			s.i++
		case '#':
			j := bytes.IndexByte(s.src[s.i:], '\n')
			if j < 0 {
				s.i = len(s.src)
				return
			}
			s.i += j
		default:
			return
		}
	}
}

func (s *tscan) key() []string {
	var keys []string
	for s.i < len(s.src) {
		s.blanks()
		if s.i >= len(s.src) {
			break
		}
		switch s.src[s.i] {
		case '"', '\'':
			start := s.i
			s.str()
			var v string
			if err := toml.Unmarshal(append(append([]byte("k = "), s.src[start:s.i]...), '\n'), &struct {
				K *string `toml:"k"`
			}{&v}); err == nil {
				keys = append(keys, v)
			} else {
				keys = append(keys, string(s.src[start:s.i]))
			}
		default:
			start := s.i
			for s.i < len(s.src) && isBare(s.src[s.i]) {
				s.i++
			}
			if s.i == start { // not a key: let the caller move on
				return keys
			}
			keys = append(keys, string(s.src[start:s.i]))
		}
		s.blanks()
		if s.i < len(s.src) && s.src[s.i] == '.' {
			s.i++
			continue
		}
		return keys
	}
	return keys
}

func isBare(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// str skips one string of any of TOML's four kinds.
func (s *tscan) str() {
	q := s.src[s.i]
	if bytes.HasPrefix(s.src[s.i:], []byte{q, q, q}) {
		s.i += 3
		for s.i < len(s.src) {
			if q == '"' && s.src[s.i] == '\\' {
				s.i += 2
				continue
			}
			if bytes.HasPrefix(s.src[s.i:], []byte{q, q, q}) {
				s.i += 3
				for n := 0; n < 2 && s.i < len(s.src) && s.src[s.i] == q; n++ {
					s.i++
				}
				return
			}
			s.i++
		}
		return
	}
	s.i++
	for s.i < len(s.src) && s.src[s.i] != '\n' {
		if q == '"' && s.src[s.i] == '\\' {
			s.i += 2
			continue
		}
		if s.src[s.i] == q {
			s.i++
			return
		}
		s.i++
	}
}

func (s *tscan) value() {
	if s.i >= len(s.src) {
		return
	}
	switch s.src[s.i] {
	case '"', '\'':
		s.str()
	case '[':
		s.i++
		for s.i < len(s.src) {
			s.space()
			if s.i >= len(s.src) || s.src[s.i] == ']' {
				s.i++
				return
			}
			if s.src[s.i] == ',' {
				s.i++
				continue
			}
			before := s.i
			s.value()
			if s.i == before {
				s.i++
			}
		}
	case '{':
		s.i++
		for s.i < len(s.src) {
			s.space()
			if s.i >= len(s.src) || s.src[s.i] == '}' {
				s.i++
				return
			}
			if s.src[s.i] == ',' {
				s.i++
				continue
			}
			before := s.i
			s.key()
			s.blanks()
			if s.i < len(s.src) && s.src[s.i] == '=' {
				s.i++
			}
			s.blanks()
			s.value()
			if s.i == before {
				s.i++
			}
		}
	default:
		for s.i < len(s.src) && !bytes.ContainsAny(s.src[s.i:s.i+1], " \t\r\n,]}#") {
			s.i++
		}
	}
}

func hasPrefix(keys, prefix []string) bool {
	return len(keys) >= len(prefix) && reflect.DeepEqual(keys[:len(prefix)], prefix)
}

// tomlBlocks returns the [start, end) spans of the tables whose header
// starts with prefix (the table and its sub-tables): from the header line
// to the end of its last statement, so comments and blank lines after it
// stay with what follows.
func tomlBlocks(stmts []tomlStmt, prefix []string) [][2]int {
	var out [][2]int
	for i := 0; i < len(stmts); i++ {
		h := stmts[i]
		if !h.header || !hasPrefix(h.keys, prefix) {
			continue
		}
		end := h.end
		for i+1 < len(stmts) && !stmts[i+1].header {
			i++
			end = stmts[i].end
		}
		out = append(out, [2]int{h.start, end})
	}
	return out
}

// decodeTOML parses src with BurntSushi/toml, returning a SyntaxError with
// the line and column of a parse error.
func decodeTOML(src []byte) (map[string]any, error) {
	var v map[string]any
	if err := toml.Unmarshal(src, &v); err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			// The offset is exact; the line BurntSushi reports for an
			// error at a newline is the next one, so count ourselves.
			line, col := pe.Position.Line, pe.Position.Col
			if pe.Position.Start > 0 && pe.Position.Start <= len(src) {
				line, col = lineCol(src, pe.Position.Start)
			}
			return nil, &SyntaxError{Offset: pe.Position.Start, Line: line, Column: col, Msg: pe.Message}
		}
		return nil, &SyntaxError{Line: 1, Column: 1, Msg: err.Error()}
	}
	return v, nil
}

func tomlAt(v map[string]any, path []string) (any, bool) {
	var cur any = v
	for _, k := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[k]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// tomlValue writes a string or a list of strings as TOML (a JSON string is
// a valid TOML basic string: the same escapes).
func tomlValue(v any) string {
	switch v := v.(type) {
	case string:
		return renderCompact(v)
	case []string:
		q := make([]string, len(v))
		for i, s := range v {
			q[i] = renderCompact(s)
		}
		return "[" + strings.Join(q, ", ") + "]"
	}
	panic("tomlValue: unsupported type")
}

func tomlEqual(have any, want any) bool {
	switch w := want.(type) {
	case string:
		return have == w
	case []string:
		a, ok := have.([]any)
		if !ok || len(a) != len(w) {
			return false
		}
		for i := range a {
			if a[i] != w[i] {
				return false
			}
		}
		return true
	}
	return false
}

// tomlSet makes the table at path hold fields (strings or string lists),
// editing only that table's statements, and appending the table at the end
// of the file when it is missing.
func tomlSet(src []byte, path []string, fields []field) ([]byte, bool, error) {
	doc, err := decodeTOML(src)
	if err != nil {
		return nil, false, err
	}
	nl := "\n"
	if bytes.Contains(src, []byte("\r\n")) {
		nl = "\r\n"
	}
	stmts := scanTOML(src)
	header := -1
	for i, st := range stmts {
		if st.header && !st.array && reflect.DeepEqual(st.keys, path) {
			header = i
		}
	}
	if header < 0 {
		if _, ok := tomlAt(doc, path); ok {
			line, col := 1, 1
			for _, st := range stmts {
				if hasPrefix(st.keys, path[:1]) {
					line, col = lineCol(src, st.keyStart)
					break
				}
			}
			return nil, false, &SyntaxError{Line: line, Column: col, Msg: strings.Join(path, ".") +
				" is defined with dotted keys or an inline table; setup edits only a [" + strings.Join(path, ".") + "] table, so change it by hand"}
		}
		var b strings.Builder
		b.Write(src)
		if len(src) > 0 && !bytes.HasSuffix(src, []byte("\n")) {
			b.WriteString(nl)
		}
		if len(bytes.TrimSpace(src)) > 0 {
			b.WriteString(nl)
		}
		b.WriteString("[" + strings.Join(path, ".") + "]" + nl)
		for _, f := range fields {
			b.WriteString(f.key + " = " + tomlValue(f.val) + nl)
		}
		return []byte(b.String()), true, nil
	}
	table, _ := tomlAt(doc, path)
	tm, _ := table.(map[string]any)
	var edits []edit
	after := stmts[header].end // where missing statements go
	own := map[string]tomlStmt{}
	for i := header + 1; i < len(stmts) && !stmts[i].header; i++ {
		if len(stmts[i].keys) == 1 {
			own[stmts[i].keys[0]] = stmts[i]
		}
		after = stmts[i].end
	}
	var missing strings.Builder
	for _, f := range fields {
		if tomlEqual(tm[f.key], f.val) {
			continue
		}
		if st, ok := own[f.key]; ok {
			edits = append(edits, edit{at: st.keyStart, end: st.valEnd, text: f.key + " = " + tomlValue(f.val)})
			continue
		}
		if _, ok := tm[f.key]; ok {
			line, col := lineCol(src, stmts[header].keyStart)
			return nil, false, &SyntaxError{Line: line, Column: col, Msg: strings.Join(path, ".") + "." + f.key + " is set in a sub-table; change it by hand"}
		}
		missing.WriteString(f.key + " = " + tomlValue(f.val) + nl)
	}
	if missing.Len() > 0 {
		text := missing.String()
		if after == len(src) && !bytes.HasSuffix(src, []byte("\n")) {
			text = nl + text
		}
		edits = append(edits, edit{at: after, end: after, text: text})
	}
	if len(edits) == 0 {
		return src, false, nil
	}
	return applyEdits(src, edits), true, nil
}

// tomlRemove deletes the table at path and its sub-tables.
func tomlRemove(src []byte, path []string) ([]byte, bool, error) {
	if _, err := decodeTOML(src); err != nil {
		return nil, false, err
	}
	blocks := tomlBlocks(scanTOML(src), path)
	if len(blocks) == 0 {
		return src, false, nil
	}
	var edits []edit
	for _, b := range blocks {
		start, end := b[0], b[1]
		// A table at the end of the file takes the blank line before it
		// (the one setup writes when it appends).
		if len(bytes.TrimSpace(src[end:])) == 0 && start >= 2 && src[start-1] == '\n' && src[start-2] == '\n' {
			start--
		}
		edits = append(edits, edit{at: start, end: end})
	}
	return applyEdits(src, edits), true, nil
}
