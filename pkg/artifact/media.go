package artifact

import (
	"bytes"
	"path/filepath"
	"strings"
)

// GuessMediaType names a media type from the content first and the file
// name second. It uses a fixed table rather than the system's mime.types so
// the answer does not depend on the machine.
func GuessMediaType(name string, head []byte) string {
	switch {
	case bytes.HasPrefix(head, []byte{0x1f, 0x8b}):
		return "application/gzip"
	case bytes.HasPrefix(head, []byte{0x28, 0xb5, 0x2f, 0xfd}):
		return "application/zstd"
	case bytes.HasPrefix(head, []byte("\x7fELF")):
		return "application/x-elf"
	case bytes.HasPrefix(head, []byte("PERFILE2")):
		return "application/x-perf-data"
	}
	switch strings.ToLower(filepath.Ext(name)) {
	case ".json":
		return "application/json"
	case ".jsonl", ".ndjson":
		return "application/x-ndjson"
	case ".txt", ".out", ".log", ".bench", ".folded", ".collapsed":
		return "text/plain"
	case ".pb", ".pprof", ".prof":
		return "application/vnd.google.protobuf"
	case ".parquet":
		return "application/vnd.apache.parquet"
	case ".html":
		return "text/html"
	case ".svg":
		return "image/svg+xml"
	}
	return "application/octet-stream"
}
