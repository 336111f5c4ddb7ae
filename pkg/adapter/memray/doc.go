// Package memray captures Python programs under `python -m memray run`
// and extracts its captures only through memray's own supported reporters,
// never by decoding its private binary format.
package memray
