package memray

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

// Stats is the part of `memray stats --json` flameox keeps. The report is
// small JSON written by memray itself, so encoding/json with a byte bound
// is enough; no maintained Go library reads it.
type Stats struct {
	TotalAllocations int64            `json:"total_num_allocations"`
	TotalBytes       int64            `json:"total_bytes_allocated"`
	Allocators       map[string]int64 `json:"allocator_type_distribution"`
	TopBySize        []struct {
		Location string `json:"location"`
		Size     int64  `json:"size"`
	} `json:"top_allocations_by_size"`
	TopByCount []struct {
		Location string `json:"location"`
		Count    int64  `json:"count"`
	} `json:"top_allocations_by_count"`
	Metadata struct {
		PeakMemory            *int64 `json:"peak_memory"`
		TotalRecords          int64  `json:"total_allocations"`
		CommandLine           string `json:"command_line"`
		PID                   int64  `json:"pid"`
		PythonAllocator       string `json:"python_allocator"`
		HasNativeTraces       bool   `json:"has_native_traces"`
		TracePythonAllocators bool   `json:"trace_python_allocators"`
		FileFormat            int64  `json:"file_format"`
	} `json:"metadata"`
}

// maxStatsBytes bounds a stats report: it holds totals, a histogram and
// the top-N lists, never per-allocation data.
const maxStatsBytes = 16 << 20

// maxAllocators bounds the allocator kinds (memray has about a dozen).
const maxAllocators = 64

// ParseStats decodes a `memray stats --json` report, refusing one larger
// than maxStatsBytes, with negative totals, or without the peak.
func ParseStats(r io.Reader) (*Stats, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxStatsBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read memray stats report: %w", err)
	}
	if len(b) > maxStatsBytes {
		return nil, fmt.Errorf("memray stats report is larger than %d bytes", maxStatsBytes)
	}
	if t := bytes.TrimLeft(b, " \t\r\n"); len(t) == 0 || t[0] != '{' {
		return nil, fmt.Errorf("memray stats report is not a JSON object")
	}
	var s Stats
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("decode memray stats report: %w", err)
	}
	switch {
	case s.Metadata.PeakMemory == nil:
		return nil, fmt.Errorf("memray stats report has no metadata.peak_memory")
	case *s.Metadata.PeakMemory < 0 || s.TotalBytes < 0 || s.TotalAllocations < 0:
		return nil, fmt.Errorf("memray stats report has a negative total")
	case len(s.Allocators) > maxAllocators:
		return nil, fmt.Errorf("memray stats report names %d allocators, more than %d", len(s.Allocators), maxAllocators)
	}
	for k, v := range s.Allocators {
		if v < 0 {
			return nil, fmt.Errorf("memray stats report: allocator %s has a negative count", k)
		}
	}
	return &s, nil
}
