package stats

import (
	"math"
	"slices"
	"strconv"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/flameox/flameox/pkg/fault"
)

// Order-statistic interval methods for the median. They draw nothing at
// random: the interval is a pair of the sample's own order statistics,
// chosen from the Binomial(n, 1/2) law of how many values fall below the
// population median. For OrderStatistic the coverage bound
// P(x(k) <= m <= x(n-k+1)) >= 1 - 2 P(B <= k-1) holds for any
// distribution, discrete ones with ties included: a metric that gives the
// same value in every block (retained bytes of a deterministic program)
// has an interval of no width that still carries the confidence.
const (
	// OrderStatistic is the exact distribution-free interval
	// [x(k), x(n-k+1)] with the largest k whose binomial coverage is at
	// least the confidence (the sign-test interval; what
	// golang.org/x/perf/benchmath's AssumeNothing reports for a median).
	// Its coverage is never below the confidence, but it jumps between
	// the levels the binomial can reach (97.9% at n = 10 for 0.95).
	OrderStatistic = "order_statistic"
	// Interpolated is the Hettmansperger–Sheather interval
	// ("Confidence intervals based on interpolated order statistics",
	// Statistics & Probability Letters 4, 1986): each bound is
	// interpolated between x(k) and x(k+1) (x(n-k+1) and x(n-k)) so that
	// the coverage is the confidence itself for symmetric distributions,
	// and near it for others, instead of the binomial level above it.
	Interpolated = "interpolated"
)

// orderMethod reports whether m is an order-statistic method.
func orderMethod(m string) bool { return m == OrderStatistic || m == Interpolated }

// medianOrderInterval is MedianInterval for the order-statistic methods;
// opt has its defaults. gonum's distuv.Binomial gives the coverage of
// each pair of order statistics. go-moremath's stats.QuantileCI (what
// benchmath uses) is not used: above 30 values it switches to a normal
// approximation, whose coverage is only near the level, and it may
// return an interval one order statistic wider on one side; this one is
// exact and symmetric at every n.
func medianOrderInterval(xs []float64, opt Options) (Interval, error) {
	if len(xs) == 0 {
		return Interval{}, fault.New(fault.InvalidArguments, "a median interval needs at least one value, got none").
			Fix("Compare run sets that share at least one complete block.")
	}
	for i, v := range xs {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return Interval{}, fault.New(fault.InvalidArguments, "value %d is %v, not a finite number", i, v).With("index", strconv.Itoa(i))
		}
	}
	n := len(xs)
	s := slices.Clone(xs)
	slices.Sort(s)
	est := s[n/2]
	if n%2 == 0 {
		est = s[n/2-1] + (s[n/2]-s[n/2-1])/2
	}
	iv := Interval{Estimate: est, Lo: est, Hi: est, Confidence: opt.Confidence, Method: opt.Method, N: n}
	if n == 1 {
		return degenerate(iv, "one value: no interval can be drawn from a single block"), nil
	}
	if s[0] == s[n-1] && opt.Method != OrderStatistic {
		return degenerate(iv, "every value is the same: the interval cannot have width"), nil
	}
	bin := distuv.Binomial{N: float64(n), P: 0.5}
	// coverage(k) is P(x(k) <= median <= x(n-k+1)) = 1 - 2 P(B <= k-1),
	// for 1-based k <= n/2.
	coverage := func(k int) float64 { return 1 - 2*bin.CDF(float64(k-1)) }
	if coverage(1) < opt.Confidence {
		return degenerate(iv, strconv.Itoa(n)+" values cannot give a "+strconv.FormatFloat(opt.Confidence, 'g', -1, 64)+
			" interval for the median: it needs at least "+strconv.Itoa(MinMedianN(opt.Confidence))), nil
	}
	k := 1
	for k+1 <= n/2 && coverage(k+1) >= opt.Confidence {
		k++
	}
	// 0-based: x(k) is s[k-1], x(n-k+1) is s[n-k].
	iv.Lo, iv.Hi = s[k-1], s[n-k]
	if opt.Method == Interpolated && k < n-k {
		gk, gk1 := coverage(k), coverage(k+1)
		if gk > opt.Confidence && gk > gk1 {
			i := (gk - opt.Confidence) / (gk - gk1)
			lambda := float64(n-k) * i / (float64(k) + float64(n-2*k)*i)
			iv.Lo = (1-lambda)*s[k-1] + lambda*s[k]
			iv.Hi = (1-lambda)*s[n-k] + lambda*s[n-k-1]
		}
	}
	if iv.Lo == iv.Hi && opt.Method != OrderStatistic {
		// The interpolation assumes a continuous law; ties void it.
		return degenerate(iv, "the order statistics that bound the interval are equal: ties leave it no width"), nil
	}
	return iv, nil
}
