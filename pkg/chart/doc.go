// Package chart draws the pictures people would rather look at than a
// table: per-variant distributions with their intervals (render
// comparison) and scaling points with the fitted models and their
// residuals (render scaling), with gonum/plot as SVG or PNG files that
// open offline, and an investigation as one self-contained HTML page
// (report) with those plots and the runs' flame graphs inline, every
// number linked to the ids it was read from.
//
// The drawing (Comparison, Scaling, Page) takes plain values, so tests
// and the browser check draw without a corpus; RenderComparison,
// RenderScaling and Report read the corpus at one pinned commit through
// pkg/compare, pkg/query and pkg/analysis and write the file.
package chart
