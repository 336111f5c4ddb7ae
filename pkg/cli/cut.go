package cli

import "unicode"

// NameWidth is how many terminal cells a name (a function, a file, a
// display name) may take in text output before Name cuts it. It does not
// depend on the terminal, so text output is the same on a terminal and in
// a pipe; --json always carries names whole.
const NameWidth = 120

// Ellipsis marks where Cut shortened a string.
const Ellipsis = "…"

// Name is how an untrusted name goes into text output, a table cell above
// all: Safe, then cut to NameWidth cells. Without the cut a table would pad
// every row to its longest name.
func Name(s string) string { return Cut(s, NameWidth) }

// Cut returns Safe(s) if it fits in width terminal cells, and otherwise its
// longest prefix that fits in width-1 cells followed by Ellipsis. Widths are
// counted after escaping, so an escape such as `\u202e` counts six cells and
// is never split; an East Asian wide character counts two, every other
// character one (zero-width characters too, so the cut bounds the bytes as
// well as the cells). Cut reads at most about width characters of s,
// however long s is. A width below 1 counts as 1.
func Cut(s string, width int) string {
	width = max(width, 1)
	cells, end := 0, -1 // end: where the prefix kept before Ellipsis ends
	for i, r := range s {
		w := cellWidth(r)
		if cells+w > width-1 && end < 0 {
			end = i
		}
		if cells+w > width {
			return Safe(s[:end]) + Ellipsis
		}
		cells += w
	}
	return Safe(s)
}

// cellWidth is how many cells r takes once Safe has escaped it.
func cellWidth(r rune) int {
	switch {
	case unsafeRune(r):
		return len(escapeRune(r))
	case wide(r):
		return 2
	}
	return 1
}

// wide reports whether r takes two terminal cells: the East Asian Wide and
// Fullwidth blocks and the emoji blocks, a close approximation of Unicode
// Standard Annex #11 without its tables.
func wide(r rune) bool {
	switch {
	case r < 0x1100:
		return false
	case r <= 0x115f, // Hangul Jamo initials
		r >= 0x2e80 && r <= 0xa4cf && r != 0x303f, // CJK ... Yi
		r >= 0xac00 && r <= 0xd7a3,                // Hangul syllables
		r >= 0xf900 && r <= 0xfaff,                // CJK compatibility ideographs
		r >= 0xfe30 && r <= 0xfe4f,                // CJK compatibility forms
		r >= 0xff00 && r <= 0xff60,                // fullwidth forms
		r >= 0xffe0 && r <= 0xffe6,
		r >= 0x1f300 && r <= 0x1f64f, // pictographs, emoticons
		r >= 0x1f900 && r <= 0x1f9ff,
		r >= 0x20000 && r <= 0x3fffd: // CJK extensions
		return true
	}
	return unicode.Is(unicode.Han, r)
}
