package stats

import (
	"math"
	"strconv"

	"github.com/flameox/flameox/pkg/fault"
)

// Decision is a comparison's verdict (SPEC §6).
type Decision string

// The decisions.
const (
	MeaningfulImprovement  Decision = "meaningful_improvement"
	MeaningfulRegression   Decision = "meaningful_regression"
	NoMeaningfulDifference Decision = "no_meaningful_difference"
	Inconclusive           Decision = "inconclusive"
	DescriptiveOnly        Decision = "descriptive_only"
)

// Polarities, spelled as in an experiment's declaration.
const (
	LowerIsBetter  = "lower_is_better"
	HigherIsBetter = "higher_is_better"
	Neutral        = "neutral"
)

// Decide draws the decision from ci, an interval of the candidate over
// baseline ratio (Ratio of a log-ratio interval), a practical threshold
// t >= 0 as a fraction (0.05 is 5%) and the metric's polarity. The rule:
//
//   - neutral polarity: descriptive_only, whatever the interval;
//   - a degenerate interval: inconclusive;
//   - the whole interval beyond the threshold on the better side (every
//     ratio < 1-t when lower is better, > 1+t when higher is better):
//     meaningful_improvement; on the worse side: meaningful_regression;
//   - the whole interval inside [1-t, 1+t], with t > 0:
//     no_meaningful_difference. Equivalence needs a band, so with t = 0
//     this verdict is impossible;
//   - anything else, such as an interval that straddles 1 or a bound of
//     the band: inconclusive. Non-significance is never equivalence.
//
// A threshold that is negative or not finite, an unknown polarity or an
// interval that is not a positive [lo, hi] is an INVALID_ARGUMENTS error.
func Decide(ci Interval, threshold float64, polarity string) (Decision, error) {
	if !(threshold >= 0) || math.IsInf(threshold, 0) {
		return "", fault.New(fault.InvalidArguments, "practical threshold %v is not a finite number >= 0", threshold).
			With("threshold", strconv.FormatFloat(threshold, 'g', -1, 64)).Fix("Give the smallest change that matters as a fraction, such as 0.05 for 5%.")
	}
	var better float64 // the sign of a better ratio's log
	switch polarity {
	case LowerIsBetter:
		better = -1
	case HigherIsBetter:
		better = 1
	case Neutral:
		return DescriptiveOnly, nil
	default:
		return "", fault.New(fault.InvalidArguments, "unknown polarity %q", polarity).With("polarity", polarity).
			Fix("Use " + LowerIsBetter + ", " + HigherIsBetter + " or " + Neutral + ".")
	}
	if ci.Degenerate {
		return Inconclusive, nil
	}
	if !(ci.Lo > 0) || !(ci.Lo <= ci.Hi) || math.IsInf(ci.Hi, 0) {
		return "", fault.New(fault.InvalidArguments, "ratio interval [%v, %v] is not a positive, ordered interval", ci.Lo, ci.Hi).
			Fix("Pass the interval through Ratio: Decide reads ratios, not log ratios.")
	}
	down, up := 1-threshold, 1+threshold
	switch {
	case ci.Hi < down:
		if better < 0 {
			return MeaningfulImprovement, nil
		}
		return MeaningfulRegression, nil
	case ci.Lo > up:
		if better > 0 {
			return MeaningfulImprovement, nil
		}
		return MeaningfulRegression, nil
	case threshold > 0 && ci.Lo >= down && ci.Hi <= up:
		return NoMeaningfulDifference, nil
	}
	return Inconclusive, nil
}
