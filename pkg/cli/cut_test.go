package cli

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCut(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		width int
		want  string
	}{
		{"short", "main.main", 20, "main.main"},
		{"exact", "abcde", 5, "abcde"},
		{"one over", "abcdef", 5, "abcd…"},
		{"long", strings.Repeat("x", 1000), 8, "xxxxxxx…"},
		{"empty", "", 5, ""},
		{"width 1", "ab", 1, "…"},
		{"width 0 is 1", "ab", 0, "…"},
		{"escaped when short", "a\u202eb", 20, `a\u202eb`},
		{"escape counts its cells", "a\u202eb", 8, `a\u202eb`},
		{"escape never split", "a\u202ebcdef", 7, "a…"},
		{"escape kept whole before the cut", "a\u009bbcdefgh", 9, `a\u009bb…`},
		{"C0 and C1", "\x1b[2J\u0085", 40, `\x1b[2J\u0085`},
		{"invalid UTF-8", "a\xffb", 20, `a\ufffdb`},
		{"wide characters count two", "日本語テキスト", 7, "日本語…"},
		{"wide fits", "日本", 4, "日本"},
		{"combining marks count one", "e\u0301e\u0301e\u0301", 4, "e\u0301e…"},
		{"multibyte narrow", "éééééé", 4, "ééé…"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Cut(tt.in, tt.width); got != tt.want {
				t.Errorf("Cut(%q, %d) = %q, want %q", tt.in, tt.width, got, tt.want)
			}
		})
	}
}

// TestNameBounded checks the property the tables rely on: whatever the
// input, Name's result is a bounded number of bytes and holds no raw
// control.
func TestNameBounded(t *testing.T) {
	for _, in := range []string{
		strings.Repeat("x", 1<<20),
		strings.Repeat("\u202e", 1<<18),
		strings.Repeat("\u0301", 1<<18), // zero-width combining marks
		strings.Repeat("\xff", 1<<18),
		strings.Repeat("日", 1<<18),
		strings.Repeat("\U000e0001", 1<<16),
	} {
		got := Name(in)
		if len(got) > 4*NameWidth+len(Ellipsis) || !strings.HasSuffix(got, Ellipsis) {
			t.Errorf("Name(%.12q…) is %d bytes: %.40q", in, len(got), got)
		}
		if n := utf8.RuneCountInString(got); n > NameWidth {
			t.Errorf("Name(%.12q…) has %d runes", in, n)
		}
		for _, r := range got {
			if r != '…' && unsafeRune(r) {
				t.Errorf("Name(%.12q…) holds raw %U", in, r)
			}
		}
	}
}

func TestSafe(t *testing.T) {
	tests := []struct{ in, want string }{
		{"main.main", "main.main"},
		{"日本 é", "日本 é"},
		{"\x1b[31mred\x1b[0m", `\x1b[31mred\x1b[0m`},
		{"tab\tnl\n", `tab\tnl\n`},
		{"\x7f", `\x7f`},
		{"\u0080\u009b\u009f", `\u0080\u009b\u009f`},
		{"\u00a0", "\u00a0"},
		{"\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069",
			`\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069`},
		{"\u2028\u2029", `\u2028\u2029`},
		{"\ufeff\u200b", `\ufeff\u200b`},
		{"\U000e0001", `\U000e0001`},
		{"bad\xff", `bad\ufffd`},
	}
	for _, tt := range tests {
		if got := Safe(tt.in); got != tt.want {
			t.Errorf("Safe(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestSafeLines(t *testing.T) {
	in := "ARTIFACT_PARSE_FAILED: bad name \u202eevil\n  path: a\x1bb\n  hint: run it again"
	want := "ARTIFACT_PARSE_FAILED: bad name \\u202eevil\n  path: a\\x1bb\n  hint: run it again"
	if got := SafeLines(in); got != want {
		t.Errorf("SafeLines = %q, want %q", got, want)
	}
}

// FuzzCut checks Cut's promises on any input: no raw control, at most
// width cells, and a cut result is a prefix of Safe(s) plus Ellipsis.
func FuzzCut(f *testing.F) {
	for _, s := range []string{"main.main", "a\u202eb\u009bc", "日本語", "\xff\xfe", "e\u0301"} {
		f.Add(s, 4)
	}
	f.Fuzz(func(t *testing.T, s string, width int) {
		width = width%200 + 1
		if width < 1 {
			width += 200
		}
		got := Cut(s, width)
		cells := 0
		for _, r := range got {
			if unsafeRune(r) {
				t.Fatalf("Cut(%q, %d) = %q holds raw %U", s, width, got, r)
			}
			cells += cellWidth(r)
		}
		if cells > width {
			t.Fatalf("Cut(%q, %d) = %q takes %d cells", s, width, got, cells)
		}
		if safe := Safe(s); got != safe && !strings.HasPrefix(safe, strings.TrimSuffix(got, Ellipsis)) {
			t.Fatalf("Cut(%q, %d) = %q is not a prefix of %q", s, width, got, safe)
		}
	})
}
