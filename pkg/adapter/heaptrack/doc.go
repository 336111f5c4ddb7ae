// Package heaptrack captures with heaptrack and imports its
// heaptrack.*.zst|.gz files, extracted through heaptrack_print, the
// collector's own reporter.
//
// heaptrack's data file is private to heaptrack, so flameox never decodes
// its records: it checks only the envelope (compression stream, version
// record, the closing records heaptrack writes when the program ends),
// because heaptrack_print reports a cut-off file without complaint, and
// then runs heaptrack_print through the broker. Its summary becomes the
// memory.* measurements and its flame-graph file of peak costs (exact
// bytes per backtrace) becomes frames and stacks through the profile
// extractor, so `flameox analyze hotspots` ranks what held the peak.
package heaptrack
