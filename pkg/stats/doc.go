// Package stats holds the statistics comparisons rest on, as pure
// functions over float slices: paired log ratios, medians, intervals of
// the median (exact and interpolated order statistics, seeded bootstrap)
// and the decision a practical threshold draws from
// an interval. They take no workspace and no clock, so their calibration
// is checked by simulation (docs/statistics.md) through the same code a
// comparison runs. Where golang.org/x/perf/benchmath or gonum already
// computes a statistic, it is used rather than re-implemented: gonum
// gives the binomial law of order statistics, the bootstrap's quantiles
// and the normal distribution BCa needs.
//
// Nothing here picks a winner on its own: a degenerate interval (one
// block, identical values, too few blocks for the confidence asked) is
// flagged, and Decide turns it into inconclusive, never a verdict.
package stats
