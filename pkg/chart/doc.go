// Package chart draws the pictures people would rather look at than a
// table: per-variant distributions with their intervals and scaling
// points with the fitted models, with gonum/plot, as SVG or PNG files
// that open offline.
package chart
