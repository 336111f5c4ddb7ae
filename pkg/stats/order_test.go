package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestMedianOrderInterval(t *testing.T) {
	oneTo := func(n int) []float64 {
		xs := make([]float64, n)
		for i := range xs {
			xs[n-1-i] = float64(i + 1) // descending: the method must sort
		}
		return xs
	}
	tests := []struct {
		name       string
		xs         []float64
		method     string
		confidence float64
		lo, hi     float64
		degenerate bool
	}{
		// n = 6 at 0.95: only [x(1), x(6)] reaches it (96.9%).
		{"exact 6", oneTo(6), OrderStatistic, 0.95, 1, 6, false},
		// n = 10: [x(2), x(9)] covers 97.85%, [x(3), x(8)] only 89.1%.
		{"exact 10", oneTo(10), OrderStatistic, 0.95, 2, 9, false},
		// n = 20: P(B <= 5) = 0.0207, so k = 6 (95.86%).
		{"exact 20", oneTo(20), OrderStatistic, 0.95, 6, 15, false},
		// Hettmansperger–Sheather at n = 10: I = 0.3244, lambda = 0.6577.
		{"interpolated 10", oneTo(10), Interpolated, 0.95, 2.657657657657658, 8.342342342342342, false},
		{"five values", oneTo(5), OrderStatistic, 0.95, 3, 3, true},
		{"seven at 0.99", oneTo(7), Interpolated, 0.99, 4, 4, true},
		{"one value", []float64{2}, OrderStatistic, 0.95, 2, 2, true},
		{"identical", []float64{3, 3, 3, 3, 3, 3, 3}, Interpolated, 0.95, 3, 3, true},
		// The bounding order statistics tie: no width, and still the
		// confidence (the bound holds with ties; see the coverage test).
		{"ties", []float64{0, 1, 1, 1, 1, 1, 1, 1, 1, 2}, OrderStatistic, 0.95, 1, 1, false},
		{"identical exact", []float64{3, 3, 3, 3, 3, 3, 3}, OrderStatistic, 0.95, 3, 3, false},
		{"identical too few", []float64{3, 3, 3, 3, 3}, OrderStatistic, 0.95, 3, 3, true},
		{"ties interpolated", []float64{0, 1, 1, 1, 1, 1, 1, 1, 1, 2}, Interpolated, 0.95, 1, 1, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			iv, err := MedianInterval(tc.xs, Options{Method: tc.method, Confidence: tc.confidence, Seed: 7, Resamples: 500})
			if err != nil {
				t.Fatal(err)
			}
			if iv.Degenerate != tc.degenerate {
				t.Fatalf("degenerate %v (%s), want %v", iv.Degenerate, iv.Reason, tc.degenerate)
			}
			if iv.Method != tc.method || iv.Resamples != 0 || iv.Seed != 0 || iv.N != len(tc.xs) {
				t.Errorf("recorded %s, %d resamples, seed %d, n %d", iv.Method, iv.Resamples, iv.Seed, iv.N)
			}
			if tc.degenerate {
				return
			}
			if math.Abs(iv.Lo-tc.lo) > 1e-12 || math.Abs(iv.Hi-tc.hi) > 1e-12 {
				t.Errorf("interval [%v, %v], want [%v, %v]", iv.Lo, iv.Hi, tc.lo, tc.hi)
			}
			if want := Median(append([]float64(nil), tc.xs...)); iv.Estimate != want {
				t.Errorf("estimate %v, want the median %v", iv.Estimate, want)
			}
		})
	}
}

// TestMedianOrderIntervalDiscreteCoverage checks that the exact interval
// keeps its coverage on a law with heavy ties, where a zero-width
// interval is common: the binomial bound needs no continuity.
func TestMedianOrderIntervalDiscreteCoverage(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	draw := func() float64 { // P(0) = 0.2, P(1) = 0.6, P(2) = 0.2: median 1
		switch u := rng.Float64(); {
		case u < 0.2:
			return 0
		case u < 0.8:
			return 1
		}
		return 2
	}
	for _, n := range []int{6, 10, 25} {
		covered, zero, trials := 0, 0, 20000
		for range trials {
			xs := make([]float64, n)
			for i := range xs {
				xs[i] = draw()
			}
			iv, err := MedianInterval(xs, Options{Method: OrderStatistic, Confidence: 0.95})
			if err != nil {
				t.Fatal(err)
			}
			if iv.Degenerate {
				t.Fatalf("n %d: degenerate (%s)", n, iv.Reason)
			}
			if iv.Lo <= 1 && 1 <= iv.Hi {
				covered++
			}
			if iv.Lo == iv.Hi {
				zero++
			}
		}
		if c := float64(covered) / float64(trials); c < 0.95 {
			t.Errorf("n %d: coverage %.4f < 0.95", n, c)
		}
		if n == 25 && zero == 0 {
			t.Errorf("n %d: no zero-width interval in %d trials: the test does not exercise ties", n, trials)
		}
	}
}

func TestMedianOrderIntervalErrors(t *testing.T) {
	for name, xs := range map[string][]float64{"empty": nil, "nan": {1, math.NaN(), 2}, "inf": {1, math.Inf(1)}} {
		if _, err := MedianInterval(xs, Options{Method: OrderStatistic}); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, err := Bootstrap([]float64{1, 2, 3}, Median, Options{Method: Interpolated}); err == nil {
		t.Error("Bootstrap accepted an order-statistic method")
	}
	if _, err := MedianInterval([]float64{1, 2, 3}, Options{Method: OrderStatistic, Confidence: 1.5}); err == nil {
		t.Error("confidence 1.5 accepted")
	}
}

// The interpolated interval lies inside the exact one (it interpolates
// toward the next order statistics in), and both hold the median.
func TestInterpolatedInsideExact(t *testing.T) {
	for n := 6; n <= 200; n++ {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = math.Sin(float64(i * i)) // distinct, unordered
		}
		ex, err := MedianInterval(xs, Options{Method: OrderStatistic})
		if err != nil {
			t.Fatal(err)
		}
		in, err := MedianInterval(xs, Options{Method: Interpolated})
		if err != nil {
			t.Fatal(err)
		}
		if ex.Degenerate || in.Degenerate {
			t.Fatalf("n=%d: degenerate", n)
		}
		if !(ex.Lo <= in.Lo && in.Hi <= ex.Hi && in.Lo <= in.Estimate && in.Estimate <= in.Hi) {
			t.Errorf("n=%d: interpolated [%v, %v] not inside exact [%v, %v] around %v", n, in.Lo, in.Hi, ex.Lo, ex.Hi, in.Estimate)
		}
	}
}
