package profile

import (
	"os"
	"testing"

	"github.com/google/pprof/profile"
)

// BenchmarkCheckValid: pprof's CheckValid against checkValid on the
// profile FLAMEOX_BENCH_PROFILE names (a 10^6-location one from
// scripts/bench/bigprofile; docs/performance.md).
func BenchmarkCheckValid(b *testing.B) {
	path := os.Getenv("FLAMEOX_BENCH_PROFILE")
	if path == "" {
		b.Skip("FLAMEOX_BENCH_PROFILE names no profile")
	}
	p := parseFile(b, path).P
	for _, c := range []struct {
		name  string
		check func(*profile.Profile) error
	}{{"pprof", (*profile.Profile).CheckValid}, {"dense", checkValid}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := c.check(p); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
