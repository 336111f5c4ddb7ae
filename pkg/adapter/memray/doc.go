// Package memray captures Python programs under `python -m memray run`
// and extracts its captures only through memray's own supported reporters
// and its public Python API (the memory snapshots, the heap over time),
// never by decoding its private binary format. A capture is readable only
// by the memray release line that wrote it, so the extractor reads the
// header version memray writes first and runs the reporters of an
// installed release that reads it (readers.go).
package memray
