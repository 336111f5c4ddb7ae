// Package heaptrack captures with heaptrack and imports its
// heaptrack.*.zst|.gz files, extracted through heaptrack_print, the
// collector's own reporter.
//
// heaptrack's data file is private to heaptrack, so flameox never decodes
// its records: it checks only the envelope (compression stream, version
// record, the closing records heaptrack writes when the program ends),
// because heaptrack_print reports a cut-off file without complaint, and
// runs heaptrack_print through the broker. Its summary becomes the
// memory.* measurements; its flame-graph files (exact costs per
// backtrace, one cost type per run: peak, leaked, allocations, temporary)
// become one profile's sample types, frames and stacks through the
// profile extractor, so `flameox analyze hotspots` ranks what held the
// peak, what was never freed and what allocated; its massif export
// becomes the timeline (memory.snapshot.heap), read by the massif
// adapter's parser.
package heaptrack
