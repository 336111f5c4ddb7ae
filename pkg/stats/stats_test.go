package stats

import (
	"math"
	"slices"
	"testing"

	"github.com/flameox/flameox/pkg/fault"
)

func TestPairedLogRatios(t *testing.T) {
	tests := []struct {
		name       string
		base, cand []float64
		want       []float64
		errBlock   string // the block a fault names; "" when no error
		errLengths bool
	}{
		{name: "empty", base: nil, cand: nil, want: []float64{}},
		{name: "pairs", base: []float64{1, 2, 4}, cand: []float64{2, 2, 1}, want: []float64{math.Log(2), 0, math.Log(0.25)}},
		{name: "lengths", base: []float64{1, 2}, cand: []float64{1}, errLengths: true},
		{name: "zero base", base: []float64{1, 0}, cand: []float64{1, 1}, errBlock: "1"},
		{name: "negative cand", base: []float64{1}, cand: []float64{-1}, errBlock: "0"},
		{name: "NaN", base: []float64{1, 1, 1}, cand: []float64{1, 1, math.NaN()}, errBlock: "2"},
		{name: "Inf", base: []float64{math.Inf(1)}, cand: []float64{1}, errBlock: "0"},
		{name: "overflowing ratio", base: []float64{math.SmallestNonzeroFloat64}, cand: []float64{math.MaxFloat64}, want: []float64{math.Log(math.MaxFloat64) - math.Log(math.SmallestNonzeroFloat64)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := PairedLogRatios(tt.base, tt.cand)
			if tt.errBlock != "" || tt.errLengths {
				var fe *fault.Error
				if !fault.Is(err, fault.InvalidArguments) {
					t.Fatalf("err = %v, want INVALID_ARGUMENTS", err)
				}
				fe = fault.As(err)
				if tt.errBlock != "" && fe.Details["block"] != tt.errBlock {
					t.Errorf("block detail = %q, want %q", fe.Details["block"], tt.errBlock)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
			for i := range got {
				if math.Abs(got[i]-tt.want[i]) > 1e-12 {
					t.Errorf("[%d] = %v, want %v", i, got[i], tt.want[i])
				}
			}
		})
	}
}

func TestMedian(t *testing.T) {
	tests := []struct {
		xs   []float64
		want float64
	}{
		{[]float64{3}, 3},
		{[]float64{2, 1}, 1.5},
		{[]float64{5, 1, 3}, 3},
		{[]float64{4, 4, 1, 4, 9, 4}, 4},
		{[]float64{-1, 10, 2, 7}, 4.5},
		{[]float64{1, 1, 1, 2, 2, 2}, 1.5},
	}
	for _, tt := range tests {
		in := slices.Clone(tt.xs)
		if got := Median(tt.xs); got != tt.want {
			t.Errorf("Median(%v) = %v, want %v", tt.xs, got, tt.want)
		}
		if !slices.Equal(in, tt.xs) {
			t.Errorf("Median reordered its input: %v", tt.xs)
		}
	}
	if !math.IsNaN(Median(nil)) {
		t.Error("Median(nil) is not NaN")
	}
}

// TestMedianAgainstSort checks the selection against a sort on many
// shapes of input, ties included.
func TestMedianAgainstSort(t *testing.T) {
	for n := 1; n <= 40; n++ {
		for _, mod := range []int{1, 2, 3, 7, 1000} {
			xs := make([]float64, n)
			for i := range xs {
				xs[i] = float64((i*7919 + n*31) % (mod + 0))
			}
			s := slices.Clone(xs)
			slices.Sort(s)
			want := s[n/2]
			if n%2 == 0 {
				want = s[n/2-1] + (s[n/2]-s[n/2-1])/2
			}
			if got := Median(xs); got != want {
				t.Fatalf("n=%d mod=%d: Median = %v, want %v (%v)", n, mod, got, want, xs)
			}
		}
	}
}

func TestBootstrapErrorsAndDegenerate(t *testing.T) {
	tests := []struct {
		name       string
		xs         []float64
		opt        Options
		err        bool
		degenerate bool
	}{
		{name: "empty", xs: nil, err: true},
		{name: "NaN", xs: []float64{1, math.NaN()}, err: true},
		{name: "Inf", xs: []float64{math.Inf(-1), 1}, err: true},
		{name: "bad method", xs: []float64{1, 2}, opt: Options{Method: "studentized"}, err: true},
		{name: "bad confidence", xs: []float64{1, 2}, opt: Options{Confidence: 1}, err: true},
		{name: "negative resamples", xs: []float64{1, 2}, opt: Options{Resamples: -1}, err: true},
		{name: "too few resamples", xs: []float64{1, 2}, opt: Options{Resamples: 10}, err: true},
		{name: "one value", xs: []float64{0.1}, degenerate: true},
		{name: "all equal", xs: []float64{0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2}, degenerate: true},
		{name: "ties leave no width", xs: []float64{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}, degenerate: true},
		{name: "five blocks at 95%", xs: []float64{0.1, 0.2, 0.3, 0.4, 0.5}, degenerate: true},
		{name: "seven blocks at 99%", xs: []float64{1, 2, 3, 4, 5, 6, 7}, opt: Options{Confidence: 0.99}, degenerate: true},
		{name: "six blocks at 95%", xs: []float64{0.1, 0.2, 0.3, 0.4, 0.5, 0.6}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, m := range []string{BCa, Percentile} {
				opt := tt.opt
				if opt.Method == "" {
					opt.Method = m
				}
				iv, err := MedianInterval(tt.xs, opt)
				if tt.err {
					if !fault.Is(err, fault.InvalidArguments) {
						t.Fatalf("%s: err = %v, want INVALID_ARGUMENTS", m, err)
					}
					return
				}
				if err != nil {
					t.Fatalf("%s: %v", m, err)
				}
				if iv.Degenerate != tt.degenerate {
					t.Errorf("%s: degenerate = %v (%s), want %v: %+v", m, iv.Degenerate, iv.Reason, tt.degenerate, iv)
				}
				if iv.Degenerate && iv.Reason == "" {
					t.Errorf("%s: a degenerate interval without a reason", m)
				}
				if !iv.Degenerate && !(iv.Lo <= iv.Estimate && iv.Estimate <= iv.Hi) {
					t.Errorf("%s: estimate %v outside [%v, %v]", m, iv.Estimate, iv.Lo, iv.Hi)
				}
			}
		})
	}
}

// TestBootstrapSeeded pins the interval a seed gives: the same seed must
// give the same interval on every machine and Go release, so a change
// here is a change to every recorded comparison.
func TestBootstrapSeeded(t *testing.T) {
	xs := []float64{0.031, -0.012, 0.054, 0.022, 0.047, 0.003, 0.061, 0.015, 0.026, 0.038, -0.004, 0.019}
	for _, m := range []string{BCa, Percentile} {
		a, err := MedianInterval(xs, Options{Seed: 42, Method: m})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := MedianInterval(xs, Options{Seed: 42, Method: m})
		if a != b {
			t.Errorf("%s: same seed, different intervals: %+v, %+v", m, a, b)
		}
		if a.Method != m || a.Resamples != DefaultResamples || a.Confidence != DefaultConfidence || a.Seed != 42 || a.N != len(xs) {
			t.Errorf("%s: options not recorded: %+v", m, a)
		}
		if a.Degenerate || !(a.Lo < a.Estimate && a.Estimate < a.Hi) {
			t.Errorf("%s: interval %+v does not bracket its estimate", m, a)
		}
		t.Logf("%s seed 42: %.6g [%.6g, %.6g]", m, a.Estimate, a.Lo, a.Hi)
	}
	got, _ := MedianInterval(xs, Options{Seed: 42})
	want := Interval{Estimate: 0.024, Lo: 0.009000000000000001, Hi: 0.042499999999999996, Confidence: 0.95, Method: BCa, Resamples: 9999, Seed: 42, N: 12}
	if got != want {
		t.Errorf("seed 42 = %+v\nwant      %+v", got, want)
	}
}

func TestBelow(t *testing.T) {
	// Every index of a small range is drawn, and none outside it.
	var seen [7]int
	src := newSource(1)
	for range 7000 {
		seen[below(src, 7)]++
	}
	for i, c := range seen {
		if c < 800 || c > 1200 {
			t.Errorf("index %d drawn %d times in 7000", i, c)
		}
	}
}

func TestDecide(t *testing.T) {
	iv := func(lo, hi float64) Interval { return Interval{Estimate: (lo + hi) / 2, Lo: lo, Hi: hi} }
	tests := []struct {
		name      string
		ci        Interval
		threshold float64
		polarity  string
		want      Decision
		err       bool
	}{
		{"faster beyond threshold", iv(0.85, 0.93), 0.05, LowerIsBetter, MeaningfulImprovement, false},
		{"faster but touches threshold", iv(0.85, 0.95), 0.05, LowerIsBetter, Inconclusive, false},
		{"faster, straddles threshold", iv(0.90, 0.99), 0.05, LowerIsBetter, Inconclusive, false},
		{"slower beyond threshold", iv(1.06, 1.2), 0.05, LowerIsBetter, MeaningfulRegression, false},
		{"higher is better, up", iv(1.06, 1.2), 0.05, HigherIsBetter, MeaningfulImprovement, false},
		{"higher is better, down", iv(0.5, 0.9), 0.05, HigherIsBetter, MeaningfulRegression, false},
		{"inside the band", iv(0.97, 1.04), 0.05, LowerIsBetter, NoMeaningfulDifference, false},
		{"inside the band, significant", iv(1.01, 1.04), 0.05, LowerIsBetter, NoMeaningfulDifference, false},
		{"wider than the band", iv(0.9, 1.1), 0.05, LowerIsBetter, Inconclusive, false},
		{"threshold 0, excludes 1", iv(0.98, 0.99), 0, LowerIsBetter, MeaningfulImprovement, false},
		{"threshold 0, tiny interval around 1", iv(0.9999, 1.0001), 0, LowerIsBetter, Inconclusive, false},
		{"neutral", iv(0.5, 0.6), 0.05, Neutral, DescriptiveOnly, false},
		{"degenerate", Interval{Estimate: 0.5, Lo: 0.5, Hi: 0.5, Degenerate: true}, 0.05, LowerIsBetter, Inconclusive, false},
		{"degenerate neutral", Interval{Estimate: 1, Lo: 1, Hi: 1, Degenerate: true}, 0.05, Neutral, DescriptiveOnly, false},
		{"negative threshold", iv(0.5, 0.6), -0.1, LowerIsBetter, "", true},
		{"NaN threshold", iv(0.5, 0.6), math.NaN(), LowerIsBetter, "", true},
		{"unknown polarity", iv(0.5, 0.6), 0.05, "faster", "", true},
		{"log-scale interval", iv(-0.1, 0.1), 0.05, LowerIsBetter, "", true},
		{"reversed", iv(1.2, 1.1), 0.05, LowerIsBetter, "", true},
		{"NaN bound", iv(math.NaN(), 1.1), 0.05, LowerIsBetter, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Decide(tt.ci, tt.threshold, tt.polarity)
			if tt.err {
				if !fault.Is(err, fault.InvalidArguments) {
					t.Fatalf("err = %v, want INVALID_ARGUMENTS", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("Decide = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestRatio(t *testing.T) {
	r := Ratio(Interval{Estimate: 0, Lo: math.Log(0.9), Hi: math.Log(1.1), Method: BCa, N: 8})
	if r.Estimate != 1 || math.Abs(r.Lo-0.9) > 1e-12 || math.Abs(r.Hi-1.1) > 1e-12 || r.Method != BCa || r.N != 8 {
		t.Errorf("Ratio = %+v", r)
	}
}

// TestMedianFastPath checks that MedianInterval's counting resampler
// gives exactly the interval of the generic bootstrap of Median, ties,
// odd and even counts included.
func TestMedianFastPath(t *testing.T) {
	for _, n := range []int{6, 7, 12, 31, 100} {
		for _, ties := range []int{3, 1000} {
			xs := make([]float64, n)
			for i := range xs {
				xs[i] = float64((i*7919)%ties) / 7
			}
			for _, m := range []string{BCa, Percentile} {
				opt := Options{Seed: uint64(n), Method: m, Resamples: 999}
				fast, err := MedianInterval(xs, opt)
				if err != nil {
					t.Fatal(err)
				}
				slow, err := Bootstrap(xs, Median, opt)
				if err != nil {
					t.Fatal(err)
				}
				if fast != slow {
					t.Errorf("n=%d ties=%d %s: fast %+v, generic %+v", n, ties, m, fast, slow)
				}
			}
		}
	}
}
