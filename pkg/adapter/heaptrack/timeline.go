package heaptrack

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/flameox/flameox/pkg/adapter"
	"github.com/flameox/flameox/pkg/adapter/massif"
	"github.com/flameox/flameox/pkg/config"
	"github.com/flameox/flameox/pkg/digest"
	"github.com/flameox/flameox/pkg/evidence/schema"
)

// MetricSnapshotHeap is the timeline's measurement, named and shaped as
// the massif adapter writes it.
const MetricSnapshotHeap = "memory.snapshot.heap"

// maxSnapshots bounds the timeline's measurements.
const maxSnapshots = 1000

// Timeline is heaptrack_print's massif export (--print-massif): one
// snapshot per timestamp record heaptrack wrote, its heap the bytes in use
// at that moment, its time in milliseconds (File.TimeUnit "ms").
type Timeline struct {
	File *massif.File
	n    int // time= lines read
}

// ParseTimeline reads heaptrack_print's massif export with the massif
// adapter's parser. heaptrack's export deviates from valgrind's format in
// ways that are normalised here, so that the parser stays valgrind's:
//   - the desc:/cmd:/time_unit: header is written when heaptrack_print
//     meets the debuggee's record, which may be last in the file (or
//     never): the header is put first;
//   - times are seconds with decimals (time_unit: s), which massif never
//     writes: the parser is given milliseconds, heaptrack's own clock
//     (heaptrack_print prints 0.001 × its millisecond timestamps), which
//     massif writes too (time_unit: ms);
//   - allocation trees are dropped (heap_tree=empty): heaptrack_print
//     1.4 writes them in its first pass over the file, before any
//     backtrace has a cost, so each is a root and "n0: 0 in N places",
//     and it may announce children it does not write (a tree massif's
//     grammar refuses).
func ParseTimeline(r io.Reader, lim config.Limits) (*Timeline, error) {
	lim = massifLimits(lim)
	pr, pw := io.Pipe()
	t := &Timeline{}
	done := make(chan error, 1)
	go func() {
		err := t.normalise(r, pw, lim)
		pw.CloseWithError(err)
		done <- err
	}()
	f, err := massif.Parse(pr, lim)
	pr.CloseWithError(errors.New("the massif parser stopped"))
	nerr := <-done
	if nerr != nil {
		return nil, nerr
	}
	if err != nil {
		return nil, fmt.Errorf("%w: heaptrack_print's massif export: %v", ErrReport, err)
	}
	if len(f.Snapshots) != t.n {
		return nil, fmt.Errorf("%w: heaptrack_print's massif export: %d snapshots, %d times", ErrReport, len(f.Snapshots), t.n)
	}
	t.File = f
	return t, nil
}

func massifLimits(lim config.Limits) config.Limits {
	def := config.DefaultLimits()
	if lim.MaxDecompressedBytes <= 0 {
		lim.MaxDecompressedBytes = def.MaxDecompressedBytes
	}
	if lim.MaxSamples <= 0 {
		lim.MaxSamples = def.MaxSamples
	}
	return lim
}

// maxTimeText bounds one time= value's text.
const maxTimeText = 32

func (t *Timeline) normalise(r io.Reader, w io.Writer, lim config.Limits) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	if _, err := bw.WriteString("desc: heaptrack\ncmd: heaptrack\ntime_unit: ms\n"); err != nil {
		return nil // the parser stopped reading; its error is the one to report
	}
	lr := &lastByte{r: r}
	sc := bufio.NewScanner(lr)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	var n, units int
	inTree, first := false, true
	for sc.Scan() {
		n++
		l := sc.Text()
		switch {
		case inTree && (strings.HasPrefix(l, "n") || strings.HasPrefix(l, " ")):
			continue
		case strings.HasPrefix(l, "desc: "), strings.HasPrefix(l, "cmd: "):
			continue
		case strings.HasPrefix(l, "time_unit: "):
			units++
			u := strings.TrimPrefix(l, "time_unit: ")
			if units > 1 || u != "s" {
				return fmt.Errorf("%w: massif export line %d: time_unit %q (heaptrack_print writes one, s)", ErrReport, n, clip(u))
			}
			continue
		case strings.HasPrefix(l, "time="):
			v := l[len("time="):]
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || len(v) > maxTimeText || f < 0 || math.IsInf(f, 0) || math.IsNaN(f) || f*1000 > 1<<53 {
				return fmt.Errorf("%w: massif export line %d: time %q is not seconds", ErrReport, n, clip(v))
			}
			t.n++
			l = "time=" + strconv.FormatInt(int64(math.Round(f*1000)), 10)
		case l == "heap_tree=detailed" || l == "heap_tree=peak":
			l, inTree = "heap_tree=empty", true
			goto write
		}
		inTree = false
	write:
		// Lines are written with the newline before them, so that a last
		// line without one (a cut-off file) stays without one.
		if !first {
			if err := bw.WriteByte('\n'); err != nil {
				return nil
			}
		}
		first = false
		if _, err := bw.WriteString(l); err != nil {
			return nil
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%w: massif export line %d: %v", ErrReport, n+1, err)
	}
	if !first && lr.last == '\n' {
		if err := bw.WriteByte('\n'); err != nil {
			return nil
		}
	}
	bw.Flush()
	return nil
}

// lastByte remembers the last byte read.
type lastByte struct {
	r    io.Reader
	last byte
}

func (l *lastByte) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	if n > 0 {
		l.last = p[n-1]
	}
	return n, err
}

// Pick returns the indices of at most maxPick (at least 3) snapshots of the timeline, in
// order: all of them when there are no more, else an evenly spaced subset
// that keeps the first, the last and the largest.
func Pick(heaps []int64, maxPick int) []int {
	n := len(heaps)
	if n <= maxPick {
		out := make([]int, n)
		for i := range out {
			out[i] = i
		}
		return out
	}
	top := 0
	for i, h := range heaps {
		if h > heaps[top] {
			top = i
		}
	}
	k := max(maxPick, 3) - 1 // grid points; one place is left for the largest
	out := make([]int, 0, k+1)
	for i := range k {
		j := int(math.Round(float64(i) * float64(n-1) / float64(k-1)))
		if len(out) > 0 && out[len(out)-1] < top && top < j {
			out = append(out, top)
		}
		if len(out) == 0 || out[len(out)-1] != j {
			out = append(out, j)
		}
	}
	return out
}

// writeTimeline writes one memory.snapshot.heap per picked snapshot and
// says in a limitation how many were kept.
func writeTimeline(w *adapter.Measurements, t *Timeline, header string) ([]string, error) {
	snaps := t.File.Snapshots
	heaps := make([]int64, len(snaps))
	for i, s := range snaps {
		heaps[i] = s.Heap
	}
	picked := Pick(heaps, maxSnapshots)
	for _, i := range picked {
		s := snaps[i]
		num := strconv.Itoa(s.Num)
		subject := "snapshot " + num
		id, err := digest.Of(map[string]any{"run_id": w.RunID, "artifact_id": w.ArtifactID, "name": MetricSnapshotHeap, "subject": subject})
		if err != nil {
			return nil, err
		}
		v, idx := s.Heap, int32(s.Num)
		dims := map[string]string{"snapshot": num, "time": strconv.FormatInt(s.Time, 10), "time_unit": t.File.TimeUnit,
			"source": "heaptrack_print --print-massif", "heaptrack_header": header, "precision_bytes": "0"}
		if err := w.Write(schema.Measurement{ID: id, Name: MetricSnapshotHeap, Int: &v, Unit: "bytes", Aggregation: "value",
			Scope: "process", Subject: subject, ValueIndex: &idx, Dimensions: dims}); err != nil {
			return nil, err
		}
	}
	lim := []string{"memory.snapshot.heap is heaptrack_print's massif export (--print-massif): the bytes in use at each timestamp record heaptrack wrote while the program ran, plus one at its end; a peak between two records is missed, so the largest snapshot can be below memory.peak_heap; dimensions.time is in milliseconds (heaptrack_print writes seconds, 0.001 × heaptrack's millisecond clock)"}
	if len(picked) < len(snaps) {
		lim = append(lim, fmt.Sprintf("timeline: %d of %d snapshots kept (evenly spaced, with the first, the last and the largest)", len(picked), len(snaps)))
	}
	return lim, nil
}
