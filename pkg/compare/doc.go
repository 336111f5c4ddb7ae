// Package compare compares evidence: two runs' benchmark samples the way
// benchstat does (the benchstat view), and two frozen run sets of an
// experiment by their paired blocks (the confirmatory comparison), each
// with a decision and the validity that qualifies it. It reads pinned
// evidence and builds results and records for fox-publish; it never
// writes the corpus.
package compare
