package stats

import (
	"math"
	"strconv"

	"github.com/flameox/flameox/pkg/fault"
)

// PairedLogRatios returns log(cand[i]/base[i]) for every complete block
// i, in block order. The two slices must have one value per block each.
// A value that is not a finite positive number is an INVALID_ARGUMENTS
// error naming the block and the side: a ratio of it has no meaning, and
// dropping the block silently would change the estimand behind the
// caller's back.
func PairedLogRatios(base, cand []float64) ([]float64, error) {
	if len(base) != len(cand) {
		return nil, fault.New(fault.InvalidArguments, "paired log ratios need one baseline and one candidate value per block: %d baseline, %d candidate", len(base), len(cand)).
			With("baseline_blocks", strconv.Itoa(len(base))).With("candidate_blocks", strconv.Itoa(len(cand))).
			Fix("Compare only complete blocks: each block needs a value on both sides.")
	}
	out := make([]float64, len(base))
	for i := range base {
		for _, side := range [...]struct {
			name string
			v    float64
		}{{"baseline", base[i]}, {"candidate", cand[i]}} {
			if !(side.v > 0) || math.IsInf(side.v, 0) {
				return nil, fault.New(fault.InvalidArguments, "block %d: the %s value %v is not a finite positive number, so it has no log ratio", i, side.name, side.v).
					With("block", strconv.Itoa(i)).With("side", side.name).With("value", strconv.FormatFloat(side.v, 'g', -1, 64)).
					Fix("Exclude the block's trials with a recorded reason, or compare a metric whose values are positive.")
			}
		}
		r := math.Log(cand[i]) - math.Log(base[i])
		if math.IsInf(r, 0) || math.IsNaN(r) {
			return nil, fault.New(fault.InvalidArguments, "block %d: the log ratio of %v over %v is not finite", i, cand[i], base[i]).
				With("block", strconv.Itoa(i))
		}
		out[i] = r
	}
	return out, nil
}

// Median returns the median of xs (the mean of the two middle values
// when len(xs) is even), or NaN for an empty slice. xs is not modified.
// It is written here, not taken from gonum's stat.Quantile, because
// Quantile's empirical kind returns the lower middle value for an even
// count, and the bootstrap calls the median thousands of times, where a
// linear-time selection beats the sort Quantile requires.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	buf := make([]float64, len(xs))
	copy(buf, xs)
	return medianInPlace(buf)
}

// medianInPlace is Median that reorders xs instead of copying it.
func medianInPlace(xs []float64) float64 {
	n := len(xs)
	if n == 0 {
		return math.NaN()
	}
	k := n / 2
	hi := selectKth(xs, k)
	if n%2 == 1 {
		return hi
	}
	// After selection every value left of k is <= xs[k]; the lower
	// middle value is the largest of them.
	lo := xs[0]
	for _, v := range xs[1:k] {
		if v > lo {
			lo = v
		}
	}
	return lo + (hi-lo)/2
}

// selectKth reorders xs so that xs[k] holds the value a sort would put
// there, everything before it is <= and everything after it >=, and
// returns xs[k] (Hoare's selection with a median-of-three pivot; no
// randomness, so results do not depend on a hidden generator). xs must
// hold no NaN.
func selectKth(xs []float64, k int) float64 {
	lo, hi := 0, len(xs)-1
	for hi > lo {
		mid := lo + (hi-lo)/2
		if xs[mid] < xs[lo] {
			xs[mid], xs[lo] = xs[lo], xs[mid]
		}
		if xs[hi] < xs[lo] {
			xs[hi], xs[lo] = xs[lo], xs[hi]
		}
		if xs[hi] < xs[mid] {
			xs[hi], xs[mid] = xs[mid], xs[hi]
		}
		pivot := xs[mid]
		i, j := lo, hi
		for i <= j {
			for xs[i] < pivot {
				i++
			}
			for xs[j] > pivot {
				j--
			}
			if i <= j {
				xs[i], xs[j] = xs[j], xs[i]
				i++
				j--
			}
		}
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return xs[k]
		}
	}
	return xs[k]
}
