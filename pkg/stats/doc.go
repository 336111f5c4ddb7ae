// Package stats holds the statistics comparisons rest on, as pure
// functions over float slices: paired log ratios, medians, seeded
// bootstrap intervals. They take no workspace and no clock, so their
// calibration is checked by simulation (docs/statistics.md) through the
// same code a comparison runs. Where golang.org/x/perf/benchmath or gonum
// already computes a statistic, it is used rather than re-implemented.
package stats
