package stats

import (
	"math"
	"slices"
	"testing"
)

func TestRanks(t *testing.T) {
	got := Ranks([]float64{10, 30, 20, 20, 5})
	if want := []float64{2, 5, 3.5, 3.5, 1}; !slices.Equal(got, want) {
		t.Errorf("ranks %v, want %v", got, want)
	}
}

// TestSpearman: x = 1..6, y = 2 1 4 3 6 5 has Σd² = 6, so
// ρ = 1 − 6·6/(6·35); its p-value on 4 degrees of freedom has the closed
// form 1 − t(t²+6)/(t²+4)^{3/2}.
func TestSpearman(t *testing.T) {
	rho, p, ok := Spearman([]float64{1, 2, 3, 4, 5, 6}, []float64{2, 1, 4, 3, 6, 5})
	want := 1 - 36.0/210
	tt := want * math.Sqrt(4/(1-want*want))
	wantP := 1 - tt*(tt*tt+6)/math.Pow(tt*tt+4, 1.5)
	if !ok || !near(rho, want, 1e-12) || !near(p, wantP, 1e-9) {
		t.Errorf("spearman = %v, %v, %v; want %v, %v", rho, p, ok, want, wantP)
	}
	if rho, p, ok := Spearman([]float64{1, 2, 3, 4}, []float64{40, 30, 20, 10}); !ok || rho != -1 || p != 0 {
		t.Errorf("perfect decrease: %v %v %v", rho, p, ok)
	}
	// Ties: ranks are mid-ranks, so a monotone step is not a perfect ρ.
	if rho, _, ok := Spearman([]float64{1, 2, 3, 4}, []float64{1, 1, 2, 2}); !ok || !near(rho, math.Sqrt(0.8), 1e-12) {
		t.Errorf("tied: %v %v", rho, ok)
	}
	for _, c := range [][2][]float64{{{1, 2}, {1, 2}}, {{1, 2, 3}, {5, 5, 5}}, {{1, 2, 3}, {1, 2}}} {
		if _, _, ok := Spearman(c[0], c[1]); ok {
			t.Errorf("Spearman(%v, %v) defined", c[0], c[1])
		}
	}
}

// TestBenjaminiHochberg against a hand computation of p.adjust(, "BH"):
// sorted 0.01 0.03 0.04 0.2 → 4p/rank 0.04 0.06 0.0533 0.2, then the
// running minimum from the largest.
func TestBenjaminiHochberg(t *testing.T) {
	got := BenjaminiHochberg([]float64{0.01, 0.04, 0.03, 0.2})
	want := []float64{0.04, 0.16 / 3, 0.16 / 3, 0.2}
	for i := range want {
		if !near(got[i], want[i], 1e-12) {
			t.Errorf("q = %v, want %v", got, want)
			break
		}
	}
	if q := BenjaminiHochberg([]float64{0.9, 0.8}); q[0] != 0.9 || q[1] != 0.9 {
		t.Errorf("q = %v", q)
	}
	if q := BenjaminiHochberg(nil); len(q) != 0 {
		t.Errorf("q of nothing = %v", q)
	}
}
