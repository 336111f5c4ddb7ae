package compare

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/inquiry"
	"github.com/flameox/flameox/pkg/query"
	"github.com/flameox/flameox/pkg/stats"
)

// fuzzMembers decodes data into two sides' members, 10 bytes each: the
// side, mismatch and cell bits, the block (one of 16, or none), the outcome,
// and the run median's bits (so zeros, negatives, NaN, infinities and
// extreme magnitudes all occur).
func fuzzMembers(data []byte) (base, cand *query.SetEvidence) {
	base = &query.SetEvidence{RunSetID: "rs-base", CorpusCommitID: "c"}
	cand = &query.SetEvidence{RunSetID: "rs-cand", CorpusCommitID: "c"}
	outcomes := []string{inquiry.TrialSucceeded, inquiry.TrialSucceeded, inquiry.TrialFailed, inquiry.TrialOracleFailed, inquiry.TrialUnattempted, ""}
	for i := 0; i+10 <= len(data) && i < 10*4096; i += 10 {
		head, blk, out := data[i], data[i+1], data[i+1]>>4
		v := math.Float64frombits(binary.LittleEndian.Uint64(data[i+2:]))
		m := query.SetMember{RunID: fmt.Sprint("run-", i), TrialOutcome: outcomes[int(out)%len(outcomes)], ExecutionStatus: "succeeded",
			ValidationStatus: "passed", SourceStateID: "s", IdentityQuality: "exact", EnvironmentID: "e", DefinitionID: "d",
			Adapter: "gotest", CollectorVersion: "1", ProtocolID: "p", Values: 1, Median: &v, Unit: "sec/op"}
		if blk&0x0f != 0x0f {
			m.BlockID = fmt.Sprintf("block-%02d", blk&0x0f)
		}
		if head&2 != 0 {
			m.EnvironmentID = "other"
		}
		if head&4 != 0 {
			m.Median = nil
		}
		side, impl := base, "a"
		if head&1 != 0 {
			side, impl = cand, "b"
		}
		// Bit 3 puts the trial in a second cell of its block (another size).
		m.Factors = fmt.Sprintf(`{"impl":%q,"n":%d}`, impl, 1+int(head>>3&1))
		side.Members = append(side.Members, m)
	}
	return base, cand
}

// FuzzConfirmEvidence drives the comparison behind Confirm with arbitrary
// run sets (empty sets, one pair, all-equal values, zeros, NaN, huge
// counts): a structured error or a comparison that claims nothing its
// data do not hold, never a panic or a confident verdict without the
// blocks for one.
func FuzzConfirmEvidence(f *testing.F) {
	pair := func(block byte, side byte, v float64) []byte {
		b := make([]byte, 10)
		b[0], b[1] = side, block
		binary.LittleEndian.PutUint64(b[2:], math.Float64bits(v))
		return b
	}
	var clean, equal []byte
	for b := range byte(8) {
		clean = append(clean, pair(b, 0, 100+float64(b))...)
		clean = append(clean, pair(b, 1, 90+float64(b))...)
		equal = append(equal, pair(b, 0, 5)...)
		equal = append(equal, pair(b, 1, 5)...)
	}
	f.Add([]byte{}, 0.05, uint8(0))
	f.Add(pair(0, 0, 1), 0.0, uint8(1))
	f.Add(append(pair(0, 0, 1), pair(0, 1, 2)...), 0.05, uint8(2))
	f.Add(clean, 0.05, uint8(0))
	f.Add(clean, 0.0, uint8(3))
	f.Add(equal, 0.05, uint8(1))
	f.Add(append(clean, pair(3, 1, 0)...), 0.05, uint8(0))
	f.Add(append(clean, pair(4, 0, math.NaN())...), 0.05, uint8(2))
	f.Add(append(clean, pair(5, 3, math.Inf(1))...), 0.0, uint8(0))
	f.Fuzz(func(t *testing.T, data []byte, threshold float64, pick uint8) {
		methods := []string{stats.OrderStatistic, stats.Interpolated, stats.BCa, stats.Percentile}
		polarities := []string{inquiry.LowerIsBetter, inquiry.HigherIsBetter, inquiry.Neutral}
		req, err := ConfirmRequest{Baseline: "rs-base", Candidate: "rs-cand", Metric: "gobench.sec/op", Threshold: threshold,
			Method: methods[int(pick)%4], Polarity: polarities[int(pick/4)%3], Resamples: 199}.normalize()
		if err != nil {
			if !fault.Is(err, fault.InvalidArguments) {
				t.Fatalf("request refused without INVALID_ARGUMENTS: %v", err)
			}
			return
		}
		base, cand := fuzzMembers(data)
		c, err := confirmEvidence(req, base, cand)
		if err != nil {
			if fe := fault.As(err); fe.Code == fault.InternalError {
				t.Fatalf("not a structured error: %v", err)
			}
			return
		}
		for _, s := range []Side{c.Baseline, c.Candidate} {
			if s.Attempted != s.Eligible+s.Failed+s.Excluded || s.Paired > s.Eligible || s.Paired < c.Pairs {
				t.Fatalf("counts do not add up: %+v (paired %d)", s, c.Pairs)
			}
		}
		decisions := []string{string(stats.MeaningfulImprovement), string(stats.MeaningfulRegression), string(stats.NoMeaningfulDifference),
			string(stats.Inconclusive), string(stats.DescriptiveOnly)}
		if !slices.Contains(decisions, c.Decision) || !slices.Contains([]string{Valid, Exploratory, Invalid}, c.Validity) {
			t.Fatalf("decision %q, validity %q", c.Decision, c.Validity)
		}
		critical := slices.ContainsFunc(c.Mismatches, func(m Mismatch) bool { return m.Critical })
		if (c.Validity == Valid && len(c.Mismatches) > 0) || critical != (c.Validity == Invalid) {
			t.Fatalf("validity %s with mismatches %+v", c.Validity, c.Mismatches)
		}
		confident := c.Decision == string(stats.MeaningfulImprovement) || c.Decision == string(stats.MeaningfulRegression) ||
			c.Decision == string(stats.NoMeaningfulDifference)
		if confident {
			if c.Pairs < stats.MinMedianN(req.Confidence) || c.Degenerate || c.Ratio == nil {
				t.Fatalf("%s from %d pairs (degenerate %v)", c.Decision, c.Pairs, c.Degenerate)
			}
			lo, hi := *c.RatioLow, *c.RatioHigh
			if !(lo > 0 && lo <= *c.Ratio && *c.Ratio <= hi) || math.IsInf(hi, 0) {
				t.Fatalf("%s with interval [%v, %v] around %v", c.Decision, lo, hi, *c.Ratio)
			}
			if c.Decision == string(stats.NoMeaningfulDifference) && (req.Threshold == 0 || lo < 1-req.Threshold || hi > 1+req.Threshold) {
				t.Fatalf("no_meaningful_difference at threshold %v from [%v, %v]", req.Threshold, lo, hi)
			}
			if c.Decision != string(stats.NoMeaningfulDifference) && lo <= 1 && hi >= 1 {
				t.Fatalf("%s from an interval [%v, %v] that holds 1", c.Decision, lo, hi)
			}
		}
		if req.Polarity == inquiry.Neutral && c.Pairs >= 2 && c.Decision != string(stats.DescriptiveOnly) {
			t.Fatalf("neutral polarity decided %s", c.Decision)
		}
	})
}
