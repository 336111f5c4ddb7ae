package cli

import (
	"strconv"
	"strings"
	"unicode"
)

// Safe makes an untrusted string (a frame name, a file name, anything that
// came out of an artifact or the file system) harmless on a terminal:
// control characters (C0, DEL and C1, among them U+009B, the 8-bit CSI),
// escape sequences, bidirectional controls (U+202E and the rest of
// category Cf), the line and paragraph separators and U+FFFD (what invalid
// UTF-8 reads as) are replaced by their quoted escapes, so they are visible
// instead of acted on. Safe does not shorten s; Cut does both for names in
// text output.
func Safe(s string) string {
	clean := true
	for _, r := range s {
		if unsafeRune(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if unsafeRune(r) {
			b.WriteString(escapeRune(r))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// SafeLines is Safe for text of several lines (an error with its details
// and hints): each line is made safe and the newlines between them kept.
func SafeLines(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = Safe(l)
	}
	return strings.Join(lines, "\n")
}

// escapeRune is the visible form Safe gives an unsafe rune: `\x1b`,
// `\u202e`, `\U000e0001`.
func escapeRune(r rune) string {
	q := strconv.QuoteRuneToASCII(r)
	return q[1 : len(q)-1]
}

func unsafeRune(r rune) bool {
	if r == unicode.ReplacementChar {
		return true
	}
	if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' {
		return true
	}
	// Bidi controls (Trojan Source) and other invisible format characters.
	return unicode.Is(unicode.Cf, r)
}
