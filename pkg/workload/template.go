package workload

import (
	"strings"
)

// template is a compiled argv, cwd or env template: literal text and
// references to declared parameters. Rendering only concatenates; no part of
// the result is ever interpreted again.
type template []segment

// segment is literal text, or a parameter reference when param is set.
type segment struct {
	lit   string
	param string
}

// templateError says which token of a template is wrong and why.
type templateError struct {
	token, reason string
}

// compile parses s. `{name}` must name a parameter for which declared
// returns true; `{{` and `}}` are literal braces; every other use of a
// brace is an error.
func compile(s string, declared func(string) bool) (template, *templateError) {
	var t template
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			t = append(t, segment{lit: lit.String()})
			lit.Reset()
		}
	}
	for i := 0; i < len(s); {
		switch c := s[i]; {
		case c == '{' && strings.HasPrefix(s[i:], "{{"):
			lit.WriteByte('{')
			i += 2
		case c == '}' && strings.HasPrefix(s[i:], "}}"):
			lit.WriteByte('}')
			i += 2
		case c == '}':
			return nil, &templateError{"}", "is a single '}' (write '}}' for a literal brace)"}
		case c == '{':
			end := strings.IndexByte(s[i+1:], '}')
			if end < 0 {
				return nil, &templateError{clip(s[i:]), "has no closing '}' (write '{{' for a literal brace)"}
			}
			name, token := s[i+1:i+1+end], s[i:i+2+end]
			switch {
			case name == "":
				return nil, &templateError{token, "is an empty field; name a declared parameter"}
			case !isIdentifier(name):
				return nil, &templateError{clip(token), "is not a plain parameter name (attributes, indexes, conversions and format specs are not allowed)"}
			case !declared(name):
				return nil, &templateError{clip(token), "names no declared parameter"}
			}
			flush()
			t = append(t, segment{param: name})
			i += end + 2
		default:
			lit.WriteByte(c)
			i++
		}
	}
	flush()
	return t, nil
}

// render substitutes the canonical text of the chosen values. Every param
// in t was checked at compile time, so values holds it.
func (t template) render(values map[string]string) string {
	var b strings.Builder
	for _, s := range t {
		if s.param != "" {
			b.WriteString(values[s.param])
		} else {
			b.WriteString(s.lit)
		}
	}
	return b.String()
}

// isIdentifier reports whether s is [A-Za-z_][A-Za-z0-9_]*: the only field
// form templates accept. Whether it is declared is checked separately.
func isIdentifier(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		letter := c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
		if !letter && (i == 0 || c < '0' || c > '9') {
			return false
		}
	}
	return true
}
