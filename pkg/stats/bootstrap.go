package stats

import (
	"cmp"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"strconv"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/flameox/flameox/pkg/fault"
)

// Interval methods.
const (
	// BCa is Efron's bias-corrected and accelerated bootstrap interval,
	// with the acceleration estimated by the jackknife.
	BCa = "bca"
	// Percentile is the plain percentile bootstrap interval.
	Percentile = "percentile"
)

// Defaults for a zero Options field.
const (
	DefaultResamples  = 9999
	DefaultConfidence = 0.95
	DefaultMethod     = BCa
	// MaxResamples bounds what one interval allocates.
	MaxResamples = 1_000_000
)

// seedStream is the PCG stream (its second seed word) every bootstrap
// uses, so that Options.Seed alone names the random sequence.
const seedStream = 0x666c616d656f78 // "flameox"

// Options configures Bootstrap; a zero field takes its default.
type Options struct {
	Resamples  int     // bootstrap replicates; DefaultResamples when 0
	Confidence float64 // two-sided level in (0, 1); DefaultConfidence when 0
	Seed       uint64  // the PCG seed: the same seed gives the same interval
	Method     string  // BCa, Percentile, OrderStatistic or Interpolated; DefaultMethod when empty
}

// Interval is a bootstrap confidence interval for a statistic.
type Interval struct {
	Estimate   float64 `json:"estimate"`
	Lo         float64 `json:"lo"`
	Hi         float64 `json:"hi"`
	Confidence float64 `json:"confidence"`
	Method     string  `json:"method"`
	Resamples  int     `json:"resamples"`
	Seed       uint64  `json:"seed"`
	N          int     `json:"n"`
	// Degenerate marks an interval that carries no confidence: one
	// value, identical values, a bootstrap distribution of zero width,
	// or fewer values than the confidence needs. Lo and Hi then equal
	// Estimate or bound nothing; Decide calls it inconclusive.
	Degenerate bool   `json:"degenerate"`
	Reason     string `json:"reason,omitempty"`
}

func (o Options) withDefaults() (Options, error) {
	if o.Resamples == 0 {
		o.Resamples = DefaultResamples
	}
	if o.Confidence == 0 {
		o.Confidence = DefaultConfidence
	}
	if o.Method == "" {
		o.Method = DefaultMethod
	}
	if o.Method != BCa && o.Method != Percentile && !orderMethod(o.Method) {
		return o, fault.New(fault.InvalidArguments, "unknown interval method %q", o.Method).With("method", o.Method).
			Fix("Use " + BCa + ", " + Percentile + ", " + OrderStatistic + " or " + Interpolated + ".")
	}
	if !(o.Confidence > 0 && o.Confidence < 1) {
		return o, fault.New(fault.InvalidArguments, "confidence %v is not in (0, 1)", o.Confidence).
			With("confidence", strconv.FormatFloat(o.Confidence, 'g', -1, 64)).Fix("Use a level such as 0.95.")
	}
	if orderMethod(o.Method) {
		// Nothing is resampled; the interval records no replicates.
		o.Resamples, o.Seed = 0, 0
		return o, nil
	}
	if o.Resamples < 0 || o.Resamples > MaxResamples {
		return o, fault.New(fault.InvalidArguments, "resamples %d is not in [1, %d]", o.Resamples, MaxResamples).
			With("resamples", strconv.Itoa(o.Resamples))
	}
	// Each tail needs at least one replicate beyond it, or its quantile
	// is the extreme replicate whatever the level.
	if float64(o.Resamples)*(1-o.Confidence)/2 < 1 {
		return o, fault.New(fault.InvalidArguments, "%d resamples are too few for a %v interval", o.Resamples, o.Confidence).
			With("resamples", strconv.Itoa(o.Resamples)).Fix("Use more resamples (the default is " + strconv.Itoa(DefaultResamples) + ").")
	}
	return o, nil
}

// Bootstrap returns a seeded bootstrap interval for stat over xs.
//
// statistic is called on the whole sample, on every resample and, for BCa, on
// every leave-one-out sample; it may reorder the slice it is given (the
// bootstrap passes scratch buffers) but must not keep it. An empty xs, a
// value that is NaN or infinite, or a statistic that is not finite on the
// sample is an INVALID_ARGUMENTS error. One value, identical values or a
// bootstrap distribution of zero width give a Degenerate interval.
//
// Resampling draws indices from PCG (math/rand/v2, seeded with
// Options.Seed and a fixed stream) through below, a rejection-sampled
// bound written here so the sequence does not depend on rand.IntN's
// algorithm: the same seed gives the same interval on every machine.
func Bootstrap(xs []float64, statistic func([]float64) float64, opt Options) (Interval, error) {
	return bootstrap(xs, statistic, nil, opt)
}

// bootstrap is Bootstrap; a non-nil fast computes the statistic of the
// next resample itself, drawing the same indices in the same order as the
// generic loop, so its result is the generic one, bit for bit.
func bootstrap(xs []float64, statistic func([]float64) float64, fast func(src *rand.PCG) float64, opt Options) (Interval, error) {
	opt, err := opt.withDefaults()
	if err != nil {
		return Interval{}, err
	}
	if orderMethod(opt.Method) {
		return Interval{}, fault.New(fault.InvalidArguments, "%s is an interval for the median, not a bootstrap", opt.Method).With("method", opt.Method).
			Fix("Use MedianInterval, or " + BCa + " or " + Percentile + " for another statistic.")
	}
	if len(xs) == 0 {
		return Interval{}, fault.New(fault.InvalidArguments, "a bootstrap interval needs at least one value, got none").
			Fix("Compare run sets that share at least one complete block.")
	}
	for i, v := range xs {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return Interval{}, fault.New(fault.InvalidArguments, "value %d is %v, not a finite number", i, v).With("index", strconv.Itoa(i))
		}
	}
	n := len(xs)
	buf := make([]float64, n)
	copy(buf, xs)
	est := statistic(buf)
	if math.IsNaN(est) || math.IsInf(est, 0) {
		return Interval{}, fault.New(fault.InvalidArguments, "the statistic is %v on the sample", est)
	}
	iv := Interval{Estimate: est, Lo: est, Hi: est, Confidence: opt.Confidence, Method: opt.Method, Resamples: opt.Resamples, Seed: opt.Seed, N: n}
	if n == 1 {
		return degenerate(iv, "one value: no interval can be drawn from a single block"), nil
	}
	if slices.Min(xs) == slices.Max(xs) {
		return degenerate(iv, "every value is the same: the resamples cannot vary"), nil
	}

	src := newSource(opt.Seed)
	reps := make([]float64, opt.Resamples)
	for b := range reps {
		if fast != nil {
			reps[b] = fast(src)
		} else {
			for i := range buf {
				buf[i] = xs[below(src, uint64(n))]
			}
			reps[b] = statistic(buf)
		}
		if math.IsNaN(reps[b]) || math.IsInf(reps[b], 0) {
			return Interval{}, fault.New(fault.InvalidArguments, "the statistic is %v on resample %d", reps[b], b)
		}
	}
	slices.Sort(reps)

	alpha := (1 - opt.Confidence) / 2
	pLo, pHi := alpha, 1-alpha
	if opt.Method == BCa {
		pLo, pHi = bcaLevels(xs, statistic, est, reps, alpha)
	}
	iv.Lo = stat.Quantile(pLo, stat.Empirical, reps, nil)
	iv.Hi = stat.Quantile(pHi, stat.Empirical, reps, nil)
	if iv.Lo == iv.Hi {
		return degenerate(iv, "the resamples all give the same value: ties leave the interval no width"), nil
	}
	if !(iv.Lo <= est && est <= iv.Hi) {
		// BCa's bias correction can move both bounds past the estimate
		// when it lies beyond nearly every replicate; such an interval
		// describes the resampling, not the data.
		return degenerate(iv, "the bias correction moved the interval past the estimate"), nil
	}
	return iv, nil
}

func degenerate(iv Interval, reason string) Interval {
	iv.Degenerate = true
	iv.Reason = reason
	return iv
}

// bcaLevels returns the BCa interval's quantile levels for tail alpha
// (Efron and Tibshirani, An Introduction to the Bootstrap, §14.3). The
// bias correction z0 counts a replicate equal to the estimate as half
// below it: the median's replicates tie with the estimate often, and
// counting ties on one side would bias every interval the same way. The
// acceleration comes from the jackknife.
func bcaLevels(xs []float64, statistic func([]float64) float64, est float64, reps []float64, alpha float64) (float64, float64) {
	var less, equal int
	for _, r := range reps {
		switch {
		case r < est:
			less++
		case r == est:
			equal++
		}
	}
	B := float64(len(reps))
	p := (float64(less) + float64(equal)/2) / B
	// Keep z0 finite when the estimate lies beyond every replicate.
	p = math.Min(math.Max(p, 0.5/B), 1-0.5/B)
	z0 := distuv.UnitNormal.Quantile(p)

	n := len(xs)
	jack := make([]float64, n)
	buf := make([]float64, n-1)
	var mean float64
	for i := range xs {
		copy(buf, xs[:i])
		copy(buf[i:], xs[i+1:])
		jack[i] = statistic(buf)
		mean += jack[i]
	}
	mean /= float64(n)
	var num, den float64
	for _, j := range jack {
		d := mean - j
		num += d * d * d
		den += d * d
	}
	a := 0.0
	if den > 0 {
		a = num / (6 * math.Pow(den, 1.5))
	}

	level := func(z float64) float64 {
		w := z0 + z
		d := 1 - a*w
		if d <= 0 {
			// The acceleration sends this tail past the whole
			// distribution: use its extreme.
			if z < 0 {
				return 0
			}
			return 1
		}
		return distuv.UnitNormal.CDF(z0 + w/d)
	}
	zLo := distuv.UnitNormal.Quantile(alpha)
	return level(zLo), level(-zLo)
}

// below returns a uniform value in [0, n), n > 0, by rejection with
// Lemire's multiply-and-shift bound ("Fast Random Integer Generation in
// an Interval", 2019): the high word of x*n is the value, and draws whose
// low word falls in the first 2^64 mod n values are discarded, so every
// index is equally likely and no division is needed on most draws. It is
// written here, not taken from rand.IntN, so that the sequence a seed
// gives cannot change with a Go release.
func below(src *rand.PCG, n uint64) uint64 {
	hi, lo := bits.Mul64(src.Uint64(), n)
	if lo < n {
		limit := -n % n // 2^64 mod n
		for lo < limit {
			hi, lo = bits.Mul64(src.Uint64(), n)
		}
	}
	return hi
}

// medianResampler returns a fast path for the bootstrap of the median:
// it draws a resample's n indices into xs, counts how often each is
// drawn, and walks the counts in the order of xs's values to the middle
// rank. That is the median of the resample the generic loop would build
// from the same draws (the same values, averaged the same way), in time
// linear in n and without moving any values.
func medianResampler(xs []float64) func(src *rand.PCG) float64 {
	n := len(xs)
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(xs[a], xs[b]) })
	counts := make([]int, n)
	k := n / 2
	return func(src *rand.PCG) float64 {
		clear(counts)
		for range n {
			counts[below(src, uint64(n))]++
		}
		// lo is the value at rank k-1, hi at rank k (0-based).
		var lo, hi float64
		seen := 0
		for _, i := range order {
			c := counts[i]
			if c == 0 {
				continue
			}
			if seen <= k-1 && k-1 < seen+c {
				lo = xs[i]
			}
			if seen <= k && k < seen+c {
				hi = xs[i]
				break
			}
			seen += c
		}
		if n%2 == 1 {
			return hi
		}
		return lo + (hi-lo)/2
	}
}

// MedianInterval is Bootstrap of the median, refusing confidence the
// sample cannot hold: any bootstrap interval of the median lies between
// two order statistics, and [min, max] of n values covers the median
// with probability 1 - 2^(1-n) only, so fewer values than reach the
// confidence (6 at 0.95, 8 at 0.99) give a Degenerate interval. It is
// the same bound behind benchstat's "need >= 6 samples" warning.
func MedianInterval(xs []float64, opt Options) (Interval, error) {
	if o, err := opt.withDefaults(); err == nil && orderMethod(o.Method) {
		return medianOrderInterval(xs, o)
	}
	var fast func(*rand.PCG) float64
	if len(xs) > 1 {
		fast = medianResampler(xs)
	}
	iv, err := bootstrap(xs, medianInPlace, fast, opt)
	if err != nil || iv.Degenerate {
		return iv, err
	}
	if need := MinMedianN(iv.Confidence); iv.N < need {
		return degenerate(iv, strconv.Itoa(iv.N)+" values cannot give a "+strconv.FormatFloat(iv.Confidence, 'g', -1, 64)+
			" interval for the median: it needs at least "+strconv.Itoa(need)), nil
	}
	return iv, nil
}

// MinMedianN is the fewest values whose range covers the median with at
// least the given confidence: the smallest n with 1 - 2^(1-n) >= c.
func MinMedianN(confidence float64) int {
	n := 1
	for 1-math.Pow(2, float64(1-n)) < confidence && n < 64 {
		n++
	}
	return n
}

// Ratio maps an interval on the log scale (of PairedLogRatios) to the
// ratio scale, exp of estimate and bounds, for Decide and for display.
func Ratio(logIV Interval) Interval {
	r := logIV
	r.Estimate, r.Lo, r.Hi = math.Exp(logIV.Estimate), math.Exp(logIV.Lo), math.Exp(logIV.Hi)
	return r
}

// newSource is the bootstrap's generator for seed.
func newSource(seed uint64) *rand.PCG { return rand.NewPCG(seed, seedStream) }
