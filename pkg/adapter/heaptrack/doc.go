// Package heaptrack captures with heaptrack and imports its
// heaptrack.*.zst|.gz files, extracted through heaptrack_print, the
// collector's own reporter.
package heaptrack
