package flameox

import (
	"math"
	"testing"
)

// Values print with benchstat's precision and the catalog's unit, never
// as a raw float64.
func TestFormatQuantity(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		unit string
		want string
	}{
		{0.00022002500000000002, "sec/op", "220.0µs/op"},
		{0.000138487, "sec/op", "138.5µs/op"},
		{1.5, "sec/op", "1.500s/op"},
		{220025, "ns/op", "220.0µs/op"},
		{1_500_000_000, "ns", "1.500s"},
		{3, "allocs/op", "3 allocs/op"},
		{0, "allocs/op", "0 allocs/op"},
		{0, "B/op", "0 B/op"},
		{16, "B/op", "16.00 B/op"},
		{4096, "B/op", "4.000 KiB/op"},
		{1.23, "MB/s", "1.173 MiB/s"},
		{1.23e6, "B/s", "1.173 MiB/s"},
		{21 << 20, "bytes", "21.00 MiB"},
		{12, "count", "12"},
		{1, "code", "1"},
		{2_002_012_950, "nanoseconds", "2.002s"},
		{1500, "milliseconds", "1.500s"},
		{1234.5, "items/s", "1.234k items/s"},
		{0.5, "", "500.0m"},
		{-0.000002, "sec/op", "-2.000µs/op"},
		{-1e300, "items/s", "-1e+300 items/s"},
		{1e-20, "sec/op", "1e-20s/op"},
	} {
		if got := formatQuantity(tc.v, tc.unit); got != tc.want {
			t.Errorf("formatQuantity(%v, %q) = %q, want %q", tc.v, tc.unit, got, tc.want)
		}
	}
}

// FuzzFormatQuantity: any value in any unit formats without a panic, to
// a short string that starts with its number.
func FuzzFormatQuantity(f *testing.F) {
	for _, u := range []string{"sec/op", "ns", "B/op", "MB/s", "bytes", "count", "allocs/op", "nanoseconds", "", "µ/x", "B/B"} {
		f.Add(1.5, u)
	}
	f.Add(math.Inf(1), "ns")
	f.Add(math.NaN(), "bytes")
	f.Add(-1e300, "items/s")
	f.Fuzz(func(t *testing.T, v float64, unit string) {
		if len(unit) > 64 {
			return
		}
		s := formatQuantity(v, unit)
		if s == "" || len(s) > 128+len(unit) {
			t.Fatalf("formatQuantity(%v, %q) = %q", v, unit, s)
		}
	})
}
