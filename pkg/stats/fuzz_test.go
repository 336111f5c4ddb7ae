package stats

import (
	"encoding/binary"
	"math"
	"slices"
	"testing"

	"github.com/flameox/flameox/pkg/fault"
)

func floatsBytes(xs ...float64) []byte {
	b := make([]byte, 0, 8*len(xs))
	for _, x := range xs {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
	}
	return b
}

// FuzzCompare runs the confirmatory comparison on arbitrary blocks: the
// first half of the values are the baseline's, the second the
// candidate's. Whatever the input (empty, one pair, identical values,
// zeros, NaN, infinities, huge or tiny values, thousands of blocks), the
// result is a structured error, or an interval and a decision that claim
// no more than the data hold; never a panic.
func FuzzCompare(f *testing.F) {
	f.Add([]byte{}, 0.05, uint64(1), false)
	f.Add(floatsBytes(1, 2), 0.05, uint64(2), false)
	f.Add(floatsBytes(3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3), 0.05, uint64(3), true)
	f.Add(floatsBytes(0, 1, 1, 0), 0.0, uint64(4), false)
	f.Add(floatsBytes(math.NaN(), 1, 1, 1), 0.05, uint64(5), true)
	f.Add(floatsBytes(math.MaxFloat64, 1, 2, 3, 4, 5, math.SmallestNonzeroFloat64, 1, 2, 3, 4, 5), 0.0, uint64(6), false)
	f.Add(floatsBytes(1, 1.1, 0.9, 1, 1.2, 1.05, 0.5, 0.55, 0.45, 0.5, 0.6, 0.52), 0.05, uint64(7), true)
	f.Fuzz(func(t *testing.T, data []byte, threshold float64, seed uint64, percentile bool) {
		vals := make([]float64, 0, len(data)/8)
		for i := 0; i+8 <= len(data) && len(vals) < 8192; i += 8 {
			vals = append(vals, math.Float64frombits(binary.LittleEndian.Uint64(data[i:])))
		}
		half := len(vals) / 2
		base, cand := vals[:half], vals[half:2*half]
		// The seed's low bit and percentile pick one of the four methods.
		pick := int(seed%2) * 2
		if percentile {
			pick++
		}
		method := []string{BCa, Percentile, OrderStatistic, Interpolated}[pick]
		structured := func(err error) {
			if !fault.Is(err, fault.InvalidArguments) {
				t.Fatalf("not a structured INVALID_ARGUMENTS error: %v", err)
			}
		}
		lr, err := PairedLogRatios(base, cand)
		if err != nil {
			structured(err)
			return
		}
		iv, err := MedianInterval(lr, Options{Seed: seed, Method: method, Resamples: 199})
		if err != nil {
			structured(err)
			if len(lr) != 0 {
				t.Fatalf("%d finite log ratios refused: %v", len(lr), err)
			}
			return
		}
		if !iv.Degenerate && !(iv.Lo <= iv.Estimate && iv.Estimate <= iv.Hi) {
			t.Fatalf("estimate %v outside [%v, %v]", iv.Estimate, iv.Lo, iv.Hi)
		}
		// Identical values give a confident interval only from the exact
		// order statistic, whose coverage holds with ties.
		if (len(lr) < MinMedianN(iv.Confidence) || (slices.Min(lr) == slices.Max(lr) && method != OrderStatistic)) && !iv.Degenerate {
			t.Fatalf("a confident interval from %d log ratios: %+v", len(lr), iv)
		}
		if !iv.Degenerate && slices.Min(lr) == slices.Max(lr) && (iv.Lo != lr[0] || iv.Hi != lr[0]) {
			t.Fatalf("identical log ratios %v give [%v, %v]", lr[0], iv.Lo, iv.Hi)
		}
		if iv.Degenerate && iv.Reason == "" {
			t.Fatal("a degenerate interval without a reason")
		}
		d, err := Decide(Ratio(iv), threshold, LowerIsBetter)
		if err != nil {
			structured(err)
			return
		}
		confident := d == MeaningfulImprovement || d == MeaningfulRegression || d == NoMeaningfulDifference
		if confident && iv.Degenerate {
			t.Fatalf("%s from a degenerate interval %+v", d, iv)
		}
		if d == NoMeaningfulDifference && threshold == 0 {
			t.Fatal("equivalence claimed with threshold 0")
		}
		if d == DescriptiveOnly {
			t.Fatal("descriptive_only for a polar metric")
		}
	})
}
