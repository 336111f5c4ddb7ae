package setup

import (
	"bytes"
	"encoding/json"
	"reflect"
	"sort"
	"strings"

	"github.com/flameox/flameox/pkg/fault"
)

// field is one key of an entry, in the order it is written.
type field struct {
	key string
	val any
}

// edit replaces src[at:end] with text.
type edit struct {
	at, end int
	text    string
}

func applyEdits(src []byte, edits []edit) []byte {
	sort.SliceStable(edits, func(i, j int) bool { return edits[i].at > edits[j].at })
	out := append([]byte(nil), src...)
	for _, e := range edits {
		out = append(out[:e.at:e.at], append([]byte(e.text), out[e.end:]...)...)
	}
	return out
}

// layout is how a file is written: its newline and indentation unit.
type layout struct {
	nl, unit string
}

func detectLayout(src []byte, root *node) layout {
	l := layout{nl: "\n", unit: "  "}
	if bytes.Contains(src, []byte("\r\n")) {
		l.nl = "\r\n"
	}
	if root != nil && root.kind == kObject && len(root.members) > 0 {
		base, _ := indentAt(src, root.start)
		if ind, own := indentAt(src, root.members[0].keyStart); own && len(ind) > len(base) && strings.HasPrefix(ind, base) {
			l.unit = ind[len(base):]
		}
	}
	return l
}

// indentAt returns the leading whitespace of the line holding off, and
// whether only that whitespace precedes off on its line.
func indentAt(src []byte, off int) (string, bool) {
	start := bytes.LastIndexByte(src[:off], '\n') + 1
	i := start
	for i < off && (src[i] == ' ' || src[i] == '\t') {
		i++
	}
	return string(src[start:i]), i == off
}

// lineEnd returns the offset of the newline ending the line at p when only
// blanks and comments follow p on it (so text inserted there lands after a
// trailing comment), or p itself when something else follows.
func lineEnd(src []byte, p int) (int, bool) {
	i := p
	for i < len(src) {
		switch {
		case src[i] == ' ' || src[i] == '\t':
			i++
		case src[i] == '\r' && i+1 < len(src) && src[i+1] == '\n', src[i] == '\n':
			return i, true
		case bytes.HasPrefix(src[i:], []byte("//")):
			j := bytes.IndexByte(src[i:], '\n')
			if j < 0 {
				return len(src), true
			}
			if j > 0 && src[i+j-1] == '\r' {
				j--
			}
			return i + j, true
		case bytes.HasPrefix(src[i:], []byte("/*")):
			j := bytes.Index(src[i:], []byte("*/"))
			if j < 0 || bytes.IndexByte(src[i:i+j], '\n') >= 0 {
				return p, false
			}
			i += j + 2
		default:
			return p, false
		}
	}
	return len(src), true
}

// render writes v as JSON for a line that starts with prefix: objects one
// member a line, lists of strings on one line (["mcp", "serve"]), as
// people write these files.
func render(v any, prefix string, l layout) string {
	switch v := v.(type) {
	case orderedMap:
		if len(v) == 0 {
			return "{}"
		}
		var b strings.Builder
		b.WriteString("{" + l.nl)
		for i, f := range v {
			b.WriteString(prefix + l.unit + quoteKey(f.key) + ": " + render(f.val, prefix+l.unit, l))
			if i < len(v)-1 {
				b.WriteString(",")
			}
			b.WriteString(l.nl)
		}
		b.WriteString(prefix + "}")
		return b.String()
	}
	return renderCompact(v)
}

// renderCompact writes v on one line, with a space after each colon and
// comma.
func renderCompact(v any) string {
	switch v := v.(type) {
	case orderedMap:
		parts := make([]string, len(v))
		for i, f := range v {
			parts[i] = quoteKey(f.key) + ": " + renderCompact(f.val)
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case []string:
		parts := make([]string, len(v))
		for i, s := range v {
			parts[i] = renderCompact(s)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
	return strings.TrimSuffix(b.String(), "\n")
}

func quoteKey(k string) string { return renderCompact(k) }

// orderedMap renders fields in their order (encoding/json sorts maps).
type orderedMap []field

func (m orderedMap) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range m {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(f.key)
		val, err := json.Marshal(f.val)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(val)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// nest wraps fields in the objects named by path: path [a b] gives
// {"a": {"b": fields}}.
func nest(path []string, fields []field) any {
	var v any = orderedMap(fields)
	for i := len(path) - 1; i >= 0; i-- {
		v = orderedMap{{path[i], v}}
	}
	return v
}

// insertMembers adds fields as new members at the end of object obj.
func insertMembers(src []byte, obj *node, fields []field, l layout) []edit {
	objIndent, _ := indentAt(src, obj.start)
	inline := len(obj.members) > 0 && bytes.IndexByte(src[obj.start:obj.end], '\n') < 0
	if inline {
		var parts []string
		for _, f := range fields {
			parts = append(parts, quoteKey(f.key)+": "+renderCompact(f.val))
		}
		last := obj.members[len(obj.members)-1]
		if last.comma >= 0 {
			return []edit{{at: last.comma + 1, end: last.comma + 1, text: " " + strings.Join(parts, ", ") + ","}}
		}
		return []edit{{at: last.val.end, end: last.val.end, text: ", " + strings.Join(parts, ", ")}}
	}
	memIndent := objIndent + l.unit
	if len(obj.members) > 0 {
		if ind, own := indentAt(src, obj.members[len(obj.members)-1].keyStart); own {
			memIndent = ind
		}
	}
	var parts []string
	for _, f := range fields {
		parts = append(parts, quoteKey(f.key)+": "+render(f.val, memIndent, l))
	}
	text := l.nl + memIndent + strings.Join(parts, ","+l.nl+memIndent)
	if len(obj.members) == 0 {
		inside := src[obj.start+1 : obj.end-1]
		if len(bytes.TrimSpace(inside)) == 0 && bytes.IndexByte(inside, '\n') < 0 {
			return []edit{{at: obj.start + 1, end: obj.end - 1, text: text + l.nl + objIndent}}
		}
		edits := []edit{{at: obj.start + 1, end: obj.start + 1, text: text}}
		if bytes.IndexByte(inside, '\n') < 0 {
			edits = append(edits, edit{at: obj.end - 1, end: obj.end - 1, text: l.nl + objIndent})
		}
		return edits
	}
	last := obj.members[len(obj.members)-1]
	var edits []edit
	p := last.val.end
	if last.comma >= 0 {
		p = last.comma + 1
		text += ","
	} else {
		edits = append(edits, edit{at: p, end: p, text: ","})
	}
	q, _ := lineEnd(src, p)
	if q == p && last.comma < 0 {
		return []edit{{at: p, end: p, text: "," + text}}
	}
	return append(edits, edit{at: q, end: q, text: text})
}

// jsonSet makes the object at path (created where missing) hold fields:
// each field missing is added, each that differs has its value replaced,
// and every other byte of src stays as it is. It reports whether anything
// changed.
func jsonSet(src []byte, jsonc bool, path []string, fields []field) ([]byte, bool, error) {
	root, err := parseJSON(src, jsonc)
	if err != nil {
		return nil, false, err
	}
	if root == nil {
		l := layout{nl: "\n", unit: "  "}
		doc := render(nest(path, fields), "", l) + l.nl
		if len(bytes.TrimSpace(src)) > 0 { // only comments
			if !bytes.HasSuffix(src, []byte("\n")) {
				doc = l.nl + doc
			}
			return append(append([]byte(nil), src...), doc...), true, nil
		}
		return []byte(doc), true, nil
	}
	l := detectLayout(src, root)
	if root.kind != kObject {
		return nil, false, notObject(src, root, "the top-level value")
	}
	obj := root
	for i, seg := range path {
		m := obj.get(seg)
		if m == nil {
			out := applyEdits(src, insertMembers(src, obj, []field{{seg, nest(path[i+1:], fields)}}, l))
			return out, true, nil
		}
		if m.val.kind != kObject {
			return nil, false, notObject(src, m.val, strings.Join(path[:i+1], "."))
		}
		obj = m.val
	}
	var edits []edit
	var missing []field
	for _, f := range fields {
		m := obj.get(f.key)
		if m == nil {
			missing = append(missing, f)
			continue
		}
		if equalJSON(m.val.decode(src), f.val) {
			continue
		}
		ind, _ := indentAt(src, m.keyStart)
		edits = append(edits, edit{at: m.val.start, end: m.val.end, text: render(f.val, ind, l)})
	}
	if len(missing) > 0 {
		edits = append(edits, insertMembers(src, obj, missing, l)...)
	}
	if len(edits) == 0 {
		return src, false, nil
	}
	return applyEdits(src, edits), true, nil
}

// jsonRemove deletes the member at path (the last element is the key),
// with its line when it has one to itself. It reports whether it was there.
func jsonRemove(src []byte, jsonc bool, path []string) ([]byte, bool, error) {
	root, err := parseJSON(src, jsonc)
	if err != nil || root == nil {
		return src, false, err
	}
	obj := root
	for _, seg := range path[:len(path)-1] {
		m := obj.get(seg)
		if m == nil || m.val.kind != kObject {
			return src, false, nil
		}
		obj = m.val
	}
	key := path[len(path)-1]
	idx := -1
	for i, m := range obj.members {
		if m.key == key {
			idx = i
		}
	}
	if idx < 0 {
		return src, false, nil
	}
	m := obj.members[idx]
	last := idx == len(obj.members)-1
	end := m.val.end
	if m.comma >= 0 {
		end = m.comma + 1
	}
	start := m.keyStart
	var edits []edit
	if _, own := indentAt(src, m.keyStart); own {
		if q, atNL := lineEnd(src, end); atNL && q < len(src) {
			start = bytes.LastIndexByte(src[:m.keyStart], '\n') + 1
			end = q + 1
			if src[q] == '\r' {
				end++
			}
		}
	} else {
		for end < len(src) && (src[end] == ' ' || src[end] == '\t') {
			end++
		}
	}
	if last && m.comma < 0 && idx > 0 {
		prev := obj.members[idx-1]
		if _, own := indentAt(src, m.keyStart); own {
			edits = append(edits, edit{at: prev.comma, end: prev.comma + 1})
		} else {
			start = prev.comma
		}
	}
	edits = append(edits, edit{at: start, end: end})
	return applyEdits(src, edits), true, nil
}

// jsonGet returns the decoded value at path, nil when absent.
func jsonGet(src []byte, jsonc bool, path []string) (any, *node, error) {
	root, err := parseJSON(src, jsonc)
	if err != nil || root == nil {
		return nil, root, err
	}
	n := root
	for _, seg := range path {
		m := n.get(seg)
		if m == nil {
			return nil, root, nil
		}
		n = m.val
	}
	return n.decode(src), root, nil
}

func notObject(src []byte, n *node, what string) error {
	line, col := lineCol(src, n.start)
	return &SyntaxError{Offset: n.start, Line: line, Column: col, Msg: what + " is not a JSON object"}
}

// equalJSON compares a decoded value with one we would write.
func equalJSON(have any, want any) bool {
	b, err := json.Marshal(want)
	if err != nil {
		return false
	}
	var w any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if d.Decode(&w) != nil {
		return false
	}
	return reflect.DeepEqual(have, w)
}

// malformed is the error for a configuration file setup will not touch.
func malformed(file string, err error) error {
	e := fault.Wrap(fault.WorkspaceInvalid, err, "%s is not valid; setup changes nothing in it", file).
		With(fault.DetailKind, fault.KindConfig).With("file", file)
	if se, ok := err.(*SyntaxError); ok {
		e.With("line", itoa(se.Line)).With("column", itoa(se.Column))
		e.Message = file + ":" + itoa(se.Line) + ":" + itoa(se.Column) + ": " + se.Msg + "; setup changes nothing in it"
	}
	return e.Fix("Fix the file (or move it aside) and run setup again; nothing was written.")
}
