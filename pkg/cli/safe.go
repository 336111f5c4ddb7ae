package cli

import (
	"strconv"
	"strings"
	"unicode"
)

// Safe makes an untrusted string (a frame name, a file name, anything that
// came out of an artifact or the file system) harmless on a terminal:
// control characters, escape sequences and bidirectional overrides are
// replaced by their quoted escapes, so they are visible instead of acted on.
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
			q := strconv.QuoteRuneToASCII(r)
			b.WriteString(q[1 : len(q)-1])
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func unsafeRune(r rune) bool {
	if r == unicode.ReplacementChar {
		return true
	}
	if unicode.IsControl(r) {
		return true
	}
	// Bidi controls (Trojan Source) and other invisible format characters.
	return unicode.Is(unicode.Cf, r)
}
