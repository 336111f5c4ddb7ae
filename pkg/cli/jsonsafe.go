package cli

import (
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// EscapeJSON rewrites valid JSON so that no character a terminal or a text
// renderer could act on appears raw: DEL, the C1 controls (U+0080–U+009F,
// among them U+009B, the 8-bit CSI), the format characters (category Cf:
// the bidirectional controls U+061C, U+200E, U+200F, U+202A–U+202E and
// U+2066–U+2069, zero-width characters, the byte-order mark), and the line
// and paragraph separators U+2028 and U+2029 each become a \uXXXX escape
// (a surrogate pair above U+FFFF). encoding/json already escapes C0
// controls but leaves all of these raw.
//
// The rewrite needs no JSON parser: outside strings valid JSON holds only
// ASCII, and inside a string a raw character is never part of an escape, so
// replacing one by its escape keeps the document valid and its decoded
// value unchanged. Bytes that are not valid UTF-8 are left as they are.
// When nothing needs escaping EscapeJSON returns b itself.
func EscapeJSON(b []byte) []byte {
	i := firstUnsafe(b)
	if i < 0 {
		return b
	}
	out := make([]byte, 0, len(b)+16)
	out = append(out, b[:i]...)
	for i < len(b) {
		c := b[i]
		if c < 0x7f {
			out = append(out, c)
			i++
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		if !jsonUnsafe(r) { // U+FFFD from an invalid byte is not unsafe
			out = append(out, b[i:i+n]...)
			i += n
			continue
		}
		if r > 0xffff {
			r1, r2 := utf16.EncodeRune(r)
			out = appendEscape(out, r1)
			out = appendEscape(out, r2)
		} else {
			out = appendEscape(out, r)
		}
		i += n
	}
	return out
}

// firstUnsafe returns the offset of the first character EscapeJSON must
// rewrite, or -1.
func firstUnsafe(b []byte) int {
	for i := 0; i < len(b); {
		if b[i] < 0x7f {
			i++
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		if jsonUnsafe(r) {
			return i
		}
		i += n
	}
	return -1
}

// jsonUnsafe reports whether r must not appear raw in JSON output. It is
// the set Safe escapes in text, less the C0 controls and U+FFFD, which
// encoding/json already handles (C0 as escapes; invalid UTF-8 as U+FFFD, a
// visible character), plus U+2028 and U+2029.
func jsonUnsafe(r rune) bool {
	switch {
	case r < 0x7f:
		return false
	case r == 0x2028, r == 0x2029:
		return true
	case r <= 0x9f: // DEL and C1
		return true
	}
	return unicode.Is(unicode.Cf, r)
}

func appendEscape(out []byte, r rune) []byte {
	const hex = "0123456789abcdef"
	return append(out, '\\', 'u', hex[r>>12&0xf], hex[r>>8&0xf], hex[r>>4&0xf], hex[r&0xf])
}
