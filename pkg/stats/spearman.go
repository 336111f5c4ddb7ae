package stats

import (
	"cmp"
	"math"
	"slices"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// Ranks returns the mid-ranks of xs (1-based; tied values share the mean
// of their ranks). gonum has no rank transform, so it is written here.
func Ranks(xs []float64) []float64 {
	idx := make([]int, len(xs))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(xs[a], xs[b]) })
	r := make([]float64, len(xs))
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && xs[idx[j+1]] == xs[idx[i]] {
			j++
		}
		mid := float64(i+j)/2 + 1
		for k := i; k <= j; k++ {
			r[idx[k]] = mid
		}
		i = j + 1
	}
	return r
}

// Spearman is Spearman's rank correlation of x and y: the Pearson
// correlation (gonum's stat.Correlation) of their mid-ranks, with the
// two-sided p-value of t = ρ·√((n−2)/(1−ρ²)) on n − 2 degrees of freedom,
// the approximation scipy.stats.spearmanr uses (gonum has neither). ok is
// false with fewer than 3 pairs or when either side is constant.
func Spearman(x, y []float64) (rho, p float64, ok bool) {
	n := len(x)
	if n != len(y) || n < 3 {
		return 0, 1, false
	}
	if constant(x) || constant(y) {
		return 0, 1, false
	}
	rx, ry := Ranks(x), Ranks(y)
	rho = stat.Correlation(rx, ry, nil)
	rho = math.Max(-1, math.Min(1, rho))
	if math.Abs(rho) >= 1 {
		return rho, 0, true
	}
	df := float64(n - 2)
	t := rho * math.Sqrt(df/(1-rho*rho))
	p = 2 * distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Survival(math.Abs(t))
	return rho, math.Min(1, p), true
}

func constant(xs []float64) bool {
	for _, v := range xs[1:] {
		if v != xs[0] {
			return false
		}
	}
	return true
}

// BenjaminiHochberg returns the Benjamini–Hochberg adjusted p-values
// (q-values) of p, in p's order: q(i) = min over j with p(j) ≥ p(i) of
// m·p(j)/rank(j), capped at 1 (Benjamini & Hochberg 1995; R's
// p.adjust(method = "BH")). Written here: gonum has no multiple-testing
// correction.
func BenjaminiHochberg(p []float64) []float64 {
	m := len(p)
	idx := make([]int, m)
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(p[a], p[b]) })
	q := make([]float64, m)
	prev := 1.0
	for r := m - 1; r >= 0; r-- {
		i := idx[r]
		v := math.Min(prev, p[i]*float64(m)/float64(r+1))
		q[i], prev = math.Min(v, 1), math.Min(v, 1)
	}
	return q
}
