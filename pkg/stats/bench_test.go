package stats

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkMedianInterval is the confirmatory comparison's cost at
// scale: the BCa interval of the median of 1,000 paired log ratios with
// the default 9,999 resamples (docs/performance.md).
func BenchmarkMedianInterval(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	base, cand := noiseModels[1].blocks(rng, 1000, 0.95)
	lr, err := PairedLogRatios(base, cand)
	if err != nil {
		b.Fatal(err)
	}
	for _, m := range []string{BCa, Percentile} {
		b.Run(m, func(b *testing.B) {
			for b.Loop() {
				if _, err := MedianInterval(lr, Options{Seed: 1, Method: m}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
