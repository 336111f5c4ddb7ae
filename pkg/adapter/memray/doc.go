// Package memray captures Python programs under `python -m memray run`
// and extracts its captures only through memray's own supported reporters
// and its public Python API (the memory snapshots, the heap over time),
// never by decoding its private binary format.
package memray
