package capture

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTail(t *testing.T) {
	for _, tt := range []struct {
		in   string
		cut  bool
		want string
	}{
		{"whole\nstream\n", false, "whole\nstream\n"},
		{"tial line\nnext\n", true, "next\n"},
		{"\xa9 one line", true, " one line"},
		{"a\x1b[2Jb\u202e\n", false, `a\x1b[2Jb\u202e` + "\n"},
	} {
		if got := Tail([]byte(tt.in), tt.cut); got != tt.want {
			t.Errorf("Tail(%q, %v) = %q, want %q", tt.in, tt.cut, got, tt.want)
		}
	}
}

// FuzzTail: a tail is valid UTF-8 without a raw control character but
// the newline.
func FuzzTail(f *testing.F) {
	f.Add([]byte("é\x1b\n\xff"), true)
	f.Fuzz(func(t *testing.T, b []byte, cut bool) {
		s := Tail(b, cut)
		if !utf8.ValidString(s) || strings.ContainsFunc(s, func(r rune) bool { return r != '\n' && (r < 0x20 || r == 0x7f) }) {
			t.Fatalf("Tail(%q) = %q", b, s)
		}
	})
}
