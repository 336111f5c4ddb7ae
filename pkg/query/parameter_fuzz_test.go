package query

import (
	"strings"
	"testing"
)

// FuzzParseParameter: a KEY=VALUE filter splits at the first '=', the key
// trimmed and never empty, the value kept whole.
func FuzzParseParameter(f *testing.F) {
	for _, s := range []string{"n=1", "mode=a=b", "=x", "x", " k =v ", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		k, v, err := ParseParameter(s)
		if err != nil {
			return
		}
		if k == "" || strings.Contains(k, "=") || k != strings.TrimSpace(k) {
			t.Fatalf("ParseParameter(%q) key %q", s, k)
		}
		if !strings.HasSuffix(s, "="+v) {
			t.Fatalf("ParseParameter(%q) value %q", s, v)
		}
	})
}
