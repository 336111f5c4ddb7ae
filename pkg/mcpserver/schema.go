package mcpserver

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
)

// Output schemas are compact: every tool's schema is the envelope
// {schema_version, ok, result, error} typed, the result an object with
// the fields it always carries listed as required, the error an object.
// The full model of each result is the Go type `flameox … --json` prints
// (docs/mcp.md); repeating it in every tools/list entry made the list
// several times the size hosts budget for tool definitions, and the
// TypeScript SDK compiles every schema when it lists tools. A compact
// schema still validates every result: it only says less.

// outputSchema is the compact output schema of Envelope[Out].
func outputSchema[Out any](tool string) *jsonschema.Schema {
	full, err := jsonschema.For[Envelope[Out]](nil)
	if err != nil {
		panic(fmt.Sprintf("mcpserver: output schema of %s: %v", tool, err))
	}
	out := &jsonschema.Schema{Type: full.Type, Required: full.Required, Properties: map[string]*jsonschema.Schema{}}
	for name, p := range full.Properties {
		c := &jsonschema.Schema{Type: p.Type, Types: p.Types}
		if name == "result" {
			// The error is the same in every tool (docs/exit-codes.md):
			// it is not repeated.
			c.Required = p.Required
		}
		out.Properties[name] = c
	}
	return out
}

// safeJSON marshals v as compact JSON whose every character a terminal
// or a model could misread (controls, bidi and other format characters,
// U+2028/9, invalid UTF-8) is a \u escape: the text stays valid JSON for
// the same value and carries no raw escape sequence.
func safeJSON(v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	var sb strings.Builder
	sb.Grow(len(b))
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			sb.WriteString(`\ufffd`) // json.Marshal already replaced invalid UTF-8; defensive
		case r == 0x7f || r >= utf8.RuneSelf && (unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == '\u2028' || r == '\u2029' || r == unicode.ReplacementChar):
			for _, u := range utf16(r) {
				sb.WriteString(`\u`)
				sb.WriteString(fmt.Sprintf("%04x", u))
			}
		default:
			sb.Write(b[i : i+n])
		}
		i += n
	}
	return sb.String(), nil
}

// utf16 is r as UTF-16 code units (a surrogate pair above the BMP).
func utf16(r rune) []rune {
	if r < 0x10000 {
		return []rune{r}
	}
	r -= 0x10000
	return []rune{0xd800 + (r>>10)&0x3ff, 0xdc00 + r&0x3ff}
}
