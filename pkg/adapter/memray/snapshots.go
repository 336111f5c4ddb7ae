package memray

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/flameox/flameox/pkg/config"
)

// MaxSnapshots bounds the snapshots one capture writes as
// memory.snapshot.* rows: memray takes one at every tick of its
// background thread, so a long capture has far more than a timeline
// needs.
const MaxSnapshots = 1000

// Snapshot is one of memray's memory snapshots
// (memray.FileReader.get_memory_snapshots): the heap memray had tracked
// and the process's resident set when its background thread ticked.
type Snapshot struct {
	// Ordinal is the snapshot's 0-based position in memray's list.
	Ordinal int
	// Time is memray's timestamp, milliseconds since the Unix epoch.
	Time      int64
	RSS, Heap int64
}

// Snapshots is what ParseSnapshots keeps of a snapshot file.
type Snapshots struct {
	// Kept are the snapshots kept, in memray's order: all of them, or
	// the Subset of at most the keep asked for.
	Kept []Snapshot
	// Total is how many snapshots the file holds; MaxHeap is the ordinal
	// of the first one with the largest heap (-1 when Total is 0).
	Total, MaxHeap int
	// First is snapshot 0, the origin of the timeline (Kept[0] when
	// Total > 0).
	First Snapshot
}

// snapshotHeader is the first line of the file driverScript writes.
const snapshotHeader = "time_ms,rss,heap"

// maxSnapshotLine bounds one line: three int64 in decimal, two commas
// and the newline.
const maxSnapshotLine = 3*19 + 2 + 1

// ParseSnapshots reads the snapshot file driverScript writes (a header,
// then "time_ms,rss,heap" per snapshot in memray's order) and keeps at
// most keep snapshots (Subset, keep >= 3). It reads r twice, the first
// time to count the snapshots and find the largest heap, so what it
// allocates is bounded by keep whatever the file holds; it reads at most
// lim.MaxDecompressedBytes each time and refuses more than lim.MaxSamples
// snapshots. The lines are three integers flameox's own driver prints,
// so a bufio.Scanner with a fixed line bound and parseCount read them in
// constant memory, which encoding/csv (a record grows to fit its input,
// and each field is a new string) does not.
func ParseSnapshots(r io.ReadSeeker, lim config.Limits, keep int) (*Snapshots, error) {
	d := config.DefaultLimits()
	if lim.MaxSamples <= 0 {
		lim.MaxSamples = d.MaxSamples
	}
	if lim.MaxDecompressedBytes <= 0 {
		lim.MaxDecompressedBytes = d.MaxDecompressedBytes
	}
	keep = max(keep, 3)
	out := &Snapshots{MaxHeap: -1}
	var maxHeap int64
	err := scanSnapshots(r, lim, func(s Snapshot) bool {
		if out.Total == 0 || s.Heap > maxHeap {
			out.MaxHeap, maxHeap = s.Ordinal, s.Heap
		}
		if out.Total == 0 {
			out.First = s
		}
		out.Total++
		return true
	})
	if err != nil || out.Total == 0 {
		return out, err
	}
	want := Subset(out.Total, out.MaxHeap, keep)
	if _, err := r.Seek(0, io.SeekStart); err != nil {
		return nil, fmt.Errorf("memray snapshots: rewind: %w", err)
	}
	out.Kept = make([]Snapshot, 0, len(want))
	err = scanSnapshots(r, lim, func(s Snapshot) bool {
		if len(out.Kept) < len(want) && s.Ordinal == want[len(out.Kept)] {
			out.Kept = append(out.Kept, s)
		}
		return len(out.Kept) < len(want)
	})
	if err == nil && len(out.Kept) != len(want) {
		err = errors.New("memray snapshots: the file changed between its two readings")
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// scanSnapshots calls each for every snapshot of r, in order, until it
// returns false.
func scanSnapshots(r io.Reader, lim config.Limits, each func(Snapshot) bool) error {
	lr := &io.LimitedReader{R: r, N: lim.MaxDecompressedBytes + 1}
	sc := bufio.NewScanner(lr)
	sc.Buffer(make([]byte, 0, maxSnapshotLine), maxSnapshotLine)
	if !sc.Scan() {
		if err := sc.Err(); err != nil {
			return fmt.Errorf("memray snapshots: header: %w", err)
		}
		return errors.New("memray snapshots: no header (empty file)")
	}
	if sc.Text() != snapshotHeader {
		return fmt.Errorf("memray snapshots: header %q, want %q", clip(sc.Text()), snapshotHeader)
	}
	n := 0
	for sc.Scan() {
		if lr.N <= 0 {
			return fmt.Errorf("memray snapshots: more than %d bytes (limits.max_decompressed_bytes)", lim.MaxDecompressedBytes)
		}
		if int64(n) >= lim.MaxSamples {
			return fmt.Errorf("memray snapshots: more than %d snapshots (limits.max_samples)", lim.MaxSamples)
		}
		line := n + 2
		rest := sc.Bytes()
		if c := bytes.Count(rest, []byte{','}); c != 2 {
			return fmt.Errorf("memray snapshots line %d: %d fields, want 3 (time_ms,rss,heap)", line, c+1)
		}
		var v [3]int64
		for i := range v {
			var x []byte
			x, rest, _ = bytes.Cut(rest, []byte{','})
			var ok bool
			if v[i], ok = parseCount(x); !ok {
				return fmt.Errorf("memray snapshots line %d: %s %q is not a non-negative integer", line, snapshotColumns[i], clip(string(x)))
			}
		}
		if !each(Snapshot{Ordinal: n, Time: v[0], RSS: v[1], Heap: v[2]}) {
			return nil
		}
		n++
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return fmt.Errorf("memray snapshots line %d: longer than %d bytes", n+2, maxSnapshotLine-1)
		}
		return fmt.Errorf("memray snapshots: %w", err)
	}
	if lr.N <= 0 {
		return fmt.Errorf("memray snapshots: more than %d bytes (limits.max_decompressed_bytes)", lim.MaxDecompressedBytes)
	}
	return nil
}

var snapshotColumns = strings.Split(snapshotHeader, ",")

// parseCount reads a non-negative decimal int64 without allocating (a
// file holds a line per snapshot, read twice).
func parseCount(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 19 {
		return 0, false
	}
	var v int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := int64(c - '0')
		if v > (math.MaxInt64-d)/10 {
			return 0, false
		}
		v = v*10 + d
	}
	return v, true
}

func clip(s string) string {
	if len(s) > 32 {
		return s[:32] + "..."
	}
	return s
}

// Subset returns the ordinals, ascending, of the snapshots kept of n
// when at most keep (>= 3) are: all of them when n <= keep; otherwise
// evenly spaced ones that always include the first, the last and maxAt
// (the one with the largest heap): keep evenly spaced ordinals when they
// hold maxAt, else keep-1 of them and maxAt.
func Subset(n, maxAt, keep int) []int {
	keep = max(keep, 3)
	if n <= keep {
		out := make([]int, n)
		for i := range out {
			out[i] = i
		}
		return out
	}
	spaced := func(m int) []int {
		out := make([]int, m)
		for k := range out {
			// n > keep >= m, so the step (n-1)/(m-1) exceeds 1 and the
			// ordinals are distinct; k*(n-1) fits an int64.
			out[k] = int(int64(k) * int64(n-1) / int64(m-1))
		}
		return out
	}
	out := spaced(keep)
	if _, ok := slices.BinarySearch(out, maxAt); ok || maxAt < 0 || maxAt >= n {
		return out
	}
	out = spaced(keep - 1)
	if i, ok := slices.BinarySearch(out, maxAt); !ok {
		out = slices.Insert(out, i, maxAt)
	}
	return out
}
