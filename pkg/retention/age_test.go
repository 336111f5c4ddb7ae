package retention

import (
	"strings"
	"testing"
	"time"
)

func TestParseAge(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"30d", 30 * 24 * time.Hour, true},
		{"1.5d", 36 * time.Hour, true},
		{"2w", 14 * 24 * time.Hour, true},
		{"36h", 36 * time.Hour, true},
		{"0s", 0, true},
		{"", 0, false},
		{"-1d", 0, false},
		{"-5m", 0, false},
		{"yesterday", 0, false},
		{"d", 0, false},
		{"1e9d", 0, false},
	}
	for _, tt := range tests {
		got, err := ParseAge(tt.in)
		if (err == nil) != tt.ok || (tt.ok && got != tt.want) {
			t.Errorf("ParseAge(%q) = %v, %v; want %v ok=%v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

// FuzzParseAge: any text either fails with a structured error or gives a
// non-negative age; days and weeks agree with each other.
func FuzzParseAge(f *testing.F) {
	for _, s := range []string{"30d", "2w", "36h", "0s", "1.5d", "-1d", "NaNd", "1e5d", "9999999h"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseAge(s)
		if err != nil {
			if !strings.Contains(err.Error(), "INVALID_ARGUMENTS") {
				t.Fatalf("unstructured error %v", err)
			}
			return
		}
		if d < 0 {
			t.Fatalf("ParseAge(%q) = %v, negative", s, d)
		}
		if n, ok := strings.CutSuffix(s, "w"); ok {
			if dd, err := ParseAge(n + "d"); err == nil && dd*7 != d && (dd*7-d > time.Microsecond && d-dd*7 > time.Microsecond) {
				t.Fatalf("%q is %v but 7 × %sd is %v", s, d, n, dd*7)
			}
		}
	})
}
