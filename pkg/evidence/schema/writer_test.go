package schema

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/flameox/flameox/pkg/evidence/schema/schematest"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
)

var testCommon = Common{
	GenerationID:     "gen-01",
	PublishedAt:      time.Date(2026, 3, 4, 5, 6, 7, 123456000, time.UTC),
	ExtractorName:    "flameox.test",
	ExtractorVersion: "1",
}

// sample is a deterministic value for column c in row, nil for some rows of
// nullable columns; it exercises every column type, including uint64 values
// above MaxInt64, empty lists and empty maps.
func sample(c Column, row int) any {
	if c.Originals || c.Nullable && row%3 == 2 { // the Writer fills Originals
		return nil
	}
	switch c.Type.ID() {
	case arrow.STRING:
		return fmt.Sprintf("%s-%d", c.Name, row)
	case arrow.INT32:
		return int32(row*7 - 3)
	case arrow.INT64:
		return int64(row)*1_000_000_000_000 - 5
	case arrow.UINT64:
		return uint64(math.MaxUint64) - uint64(row)
	case arrow.FLOAT64:
		return float64(row) + 0.25
	case arrow.BOOL:
		return row%2 == 0
	case arrow.TIMESTAMP:
		return time.Date(2026, 1, 2, 3, 4, 5, row*1000, time.UTC)
	case arrow.LIST:
		return []string{"a", c.Name, fmt.Sprint(row)}[:row%4%3]
	case arrow.MAP:
		return map[string]string{"k": fmt.Sprint(row), "phase": "warm"}
	}
	panic("no sample for " + c.TypeName())
}

// sampleRow is row r of sample values for tb's columns after the
// publication columns (AppendRow's argument).
func sampleRow(tb *Table, r int) []any {
	vals := make([]any, 0, len(tb.Columns))
	for _, c := range tb.Columns[NumCommon:] {
		vals = append(vals, sample(c, r))
	}
	return vals
}

// readBack opens path with pqarrow and returns its schema, footer row count,
// row-group count and every value as Go values, row by row.
func readBack(t *testing.T, path string) (*arrow.Schema, int64, int, [][]any) {
	t.Helper()
	f := schematest.Read(t, path)
	return f.Schema, f.FooterRows, f.RowGroups, f.Rows
}

func create(t *testing.T, name string) *os.File {
	t.Helper()
	f, err := os.Create(filepath.Join(t.TempDir(), name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func TestRoundTrip(t *testing.T) {
	const nrows = 10
	for _, tb := range Tables() {
		t.Run(tb.Name, func(t *testing.T) {
			f := create(t, tb.Name+".parquet")
			w, err := NewWriter(tb, f, Options{Common: testCommon, RowGroupRows: 4})
			if err != nil {
				t.Fatal(err)
			}
			want := make([][]any, nrows)
			for r := range nrows {
				want[r] = []any{int32(tb.Major), testCommon.GenerationID, testCommon.PublishedAt,
					testCommon.ExtractorName, testCommon.ExtractorVersion}
				vals := make([]any, 0, len(tb.Columns))
				for _, c := range tb.Columns[NumCommon:] {
					vals = append(vals, sample(c, r))
				}
				want[r] = append(want[r], vals...)
				if err := w.AppendRow(vals); err != nil {
					t.Fatal(err)
				}
			}
			if n, err := w.Close(); n != nrows || err != nil {
				t.Fatalf("Close() = %d, %v", n, err)
			}
			s, footerRows, groups, got := readBack(t, f.Name())
			if footerRows != nrows || groups != 3 {
				t.Errorf("footer: %d rows in %d row groups, want %d in 3", footerRows, groups, nrows)
			}
			if err := tb.Validate(s); err != nil {
				t.Error(err)
			}
			if err := Validate(s); err != nil {
				t.Error(err)
			}
			for r := range want {
				for ci, c := range tb.Columns {
					if wv, gv := want[r][ci], got[r][ci]; !reflect.DeepEqual(wv, gv) {
						t.Errorf("row %d %s: got %#v, want %#v", r, c.Name, gv, wv)
					}
				}
			}
		})
	}
}

func TestWriteEmpty(t *testing.T) {
	for _, tb := range Tables() {
		f := create(t, tb.Name+".parquet")
		if err := WriteEmpty(tb, f); err != nil {
			t.Fatal(err)
		}
		s, n, _, rows := readBack(t, f.Name())
		if n != 0 || len(rows) != 0 {
			t.Errorf("%s: empty anchor has %d rows", tb.Name, n)
		}
		if err := tb.Validate(s); err != nil {
			t.Errorf("%s: %v", tb.Name, err)
		}
	}
}

func TestValidateMismatch(t *testing.T) {
	fields := Runs.Schema().Fields()
	md := Runs.Schema().Metadata()
	i := Runs.Index("exit_code")
	fields[i].Type = arrow.PrimitiveTypes.Int64    // changed type
	fields = append(fields[:i+1], fields[i+2:]...) // drops "signal"
	fields = append(fields, arrow.Field{Name: "hostname", Type: arrow.BinaryTypes.String})
	err := Runs.Validate(arrow.NewSchema(fields, &md))
	var me *MismatchError
	if !errors.As(err, &me) || me.Table != "runs@1.2" {
		t.Fatalf("Validate = %v, want a MismatchError for runs@1.2", err)
	}
	for _, want := range []string{"exit_code is int64, want int32", "signal (string) missing", "unexpected column hostname"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}

	if err := Runs.Validate(Artifacts.Schema()); err == nil || !strings.Contains(err.Error(), `flameox.table = "artifacts", want "runs"`) {
		t.Errorf("Validate(artifacts schema) = %v", err)
	}
	old := arrow.NewMetadata([]string{MetaTable, MetaMajor, MetaMinor}, []string{"runs", "1", "7"})
	if err := Validate(arrow.NewSchema(Runs.Schema().Fields(), &old)); err == nil || !strings.Contains(err.Error(), "flameox.schema.minor") {
		t.Errorf("Validate(minor 7) = %v", err)
	}
	swapped := Runs.Schema().Fields()
	swapped[6], swapped[7] = swapped[7], swapped[6]
	if err := Runs.Validate(arrow.NewSchema(swapped, &md)); err == nil || !strings.Contains(err.Error(), "order differs at position 6") {
		t.Errorf("Validate(swapped) = %v", err)
	}
	if err := Validate(arrow.NewSchema(fields, nil)); err == nil || !strings.Contains(err.Error(), "names no evidence table") {
		t.Errorf("Validate(no metadata) = %v", err)
	}
}

// Flush writes the rows so far as their own row group; the file holds
// every row once, and a closed writer refuses to flush.
func TestFlush(t *testing.T) {
	tb := Tables()[0]
	f := create(t, "flush.parquet")
	w, err := NewWriter(tb, f, Options{Common: testCommon})
	if err != nil {
		t.Fatal(err)
	}
	for r := range 5 {
		vals := make([]any, 0, len(tb.Columns))
		for _, c := range tb.Columns[NumCommon:] {
			vals = append(vals, sample(c, r))
		}
		if err := w.AppendRow(vals); err != nil {
			t.Fatal(err)
		}
		if r == 1 || r == 2 {
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Flush(); err != nil { // nothing pending after this one
		t.Fatal(err)
	}
	if n, err := w.Close(); n != 5 || err != nil {
		t.Fatalf("Close() = %d, %v", n, err)
	}
	if err := w.Flush(); err != errClosed {
		t.Fatalf("Flush after Close = %v", err)
	}
	_, footerRows, groups, _ := readBack(t, f.Name())
	if footerRows != 5 || groups != 3 {
		t.Fatalf("%d rows in %d row groups, want 5 in 3", footerRows, groups)
	}
}

// A file written in one go with few rows is left uncompressed (zstd's
// set-up would be most of its cost); larger files, and files whose rows
// were flushed before Close, are zstd. Shed keeps a small file's rows for
// Close, and flushes a larger one's.
func TestCodecBySize(t *testing.T) {
	tb := Tables()[0]
	write := func(rows int, first string) compress.Compression {
		f := create(t, fmt.Sprintf("codec-%d-%v.parquet", rows, first))
		w, err := NewWriter(tb, f, Options{Common: testCommon})
		if err != nil {
			t.Fatal(err)
		}
		for r := range rows {
			vals := make([]any, 0, len(tb.Columns))
			for _, c := range tb.Columns[NumCommon:] {
				vals = append(vals, sample(c, r))
			}
			if err := w.AppendRow(vals); err != nil {
				t.Fatal(err)
			}
		}
		switch first {
		case "flush":
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
		case "shed":
			if err := w.Shed(); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := w.Close(); err != nil {
			t.Fatal(err)
		}
		pf, err := file.OpenParquetFile(f.Name(), false)
		if err != nil {
			t.Fatal(err)
		}
		defer pf.Close()
		cc, err := pf.MetaData().RowGroup(0).ColumnChunk(NumCommon)
		if err != nil {
			t.Fatal(err)
		}
		return cc.Compression()
	}
	for _, c := range []struct {
		rows  int
		first string // what is called before Close
		want  compress.Compression
	}{{1, "", compress.Codecs.Uncompressed}, {smallFile, "", compress.Codecs.Uncompressed},
		{smallFile + 1, "", compress.Codecs.Zstd}, {1, "flush", compress.Codecs.Zstd},
		{1, "shed", compress.Codecs.Uncompressed}, {smallFile, "shed", compress.Codecs.Uncompressed},
		{smallFile + 1, "shed", compress.Codecs.Zstd}} {
		if got := write(c.rows, c.first); got != c.want {
			t.Errorf("%d rows (before Close: %q): %v, want %v", c.rows, c.first, got, c.want)
		}
	}
}

// Wide rows end their row group by bytes, before DefaultRowGroupRows: the
// rows a group buffers stay within about maxGroupBytes of strings.
func TestRowGroupByteBudget(t *testing.T) {
	tb := Stacks
	f := create(t, "wide.parquet")
	w, err := NewWriter(tb, f, Options{Common: testCommon})
	if err != nil {
		t.Fatal(err)
	}
	wide := strings.Repeat("f", 4096)
	const rows = 3 * 1024 // 12 MiB of strings: three groups of 4 MiB
	for r := range rows {
		vals := make([]any, 0, len(tb.Columns))
		for _, c := range tb.Columns[NumCommon:] {
			v := sample(c, r)
			if c.Name == "stack_id" {
				v = wide
			}
			vals = append(vals, v)
		}
		if err := w.AppendRow(vals); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := w.Close(); n != rows || err != nil {
		t.Fatalf("Close() = %d, %v", n, err)
	}
	_, footerRows, groups, _ := readBack(t, f.Name())
	if footerRows != rows || groups < 3 || groups > 4 {
		t.Fatalf("%d rows in %d row groups, want %d in 3 or 4", footerRows, groups, rows)
	}
}

// failAfter is an io.Writer that accepts n bytes, then fails.
type failAfter struct{ n int }

var errDiskFull = errors.New("no space left on device")

func (f *failAfter) Write(p []byte) (int, error) {
	if len(p) > f.n {
		k := f.n
		f.n = 0
		return k, errDiskFull
	}
	f.n -= len(p)
	return len(p), nil
}

// TestRowGroupsInFlight: row groups are encoded and written on a goroutine
// while the next is filled (flush). Many groups come back whole and in
// order, and a destination that fails part-way fails the writer: the error
// of a group written in the background is returned by a later EndRow,
// Flush or Close, never lost.
func TestRowGroupsInFlight(t *testing.T) {
	tb := Tables()[0]
	row := func(r int) []any { return sampleRow(tb, r) }
	f := create(t, "groups.parquet")
	w, err := NewWriter(tb, f, Options{Common: testCommon, RowGroupRows: 7})
	if err != nil {
		t.Fatal(err)
	}
	const rows = 300
	for r := range rows {
		if err := w.AppendRow(row(r)); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := w.Close(); n != rows || err != nil {
		t.Fatalf("Close() = %d, %v", n, err)
	}
	_, footerRows, groups, got := readBack(t, f.Name())
	if footerRows != rows || groups != (rows+6)/7 {
		t.Fatalf("%d rows in %d row groups, want %d in %d", footerRows, groups, rows, (rows+6)/7)
	}
	for r := range rows {
		want := row(r)
		for i, c := range tb.Columns[NumCommon:] {
			if c.Originals { // the Writer's, null for valid strings
				continue
			}
			if g := got[r][NumCommon+i]; fmt.Sprint(g) != fmt.Sprint(want[i]) {
				t.Fatalf("row %d, %s = %v, want %v", r, c.Name, g, want[i])
			}
		}
	}

	// The writer buffers 64 KiB before its destination sees a byte, so a
	// failure within the first groups surfaces at Close, and one after
	// that in the background, then at a later row.
	for _, budget := range []int{0, 100, 100_000, 400_000} {
		w, err := NewWriter(tb, &failAfter{n: budget}, Options{Common: testCommon, RowGroupRows: 64})
		if err != nil {
			t.Fatal(err)
		}
		var failed error
		written := 0
		for ; written < 20_000 && failed == nil; written++ {
			failed = w.AppendRow(row(written))
		}
		if budget >= 100_000 && failed == nil {
			t.Errorf("budget %d: all %d rows accepted, want a failure before Close", budget, written)
		}
		_, cerr := w.Close()
		if failed == nil {
			failed = cerr
		}
		if !errors.Is(failed, errDiskFull) || !errors.Is(cerr, errDiskFull) {
			t.Errorf("budget %d: rows failed with %v, Close with %v; want %v from both", budget, failed, cerr, errDiskFull)
		}
	}
}

// gated is a destination whose writes wait until open is closed.
type gated struct {
	open chan struct{}
	bytes.Buffer
}

func (g *gated) Write(p []byte) (int, error) {
	<-g.open
	return g.Buffer.Write(p)
}

// TestOneRowGroupInFlight checks that a row group in flight holds back
// every other writer's, not only its own writer's next: a writer done
// with its table (Shed) leaves its last group in flight while the next
// table fills, and the memory held must stay one row group.
func TestOneRowGroupInFlight(t *testing.T) {
	tb := Tables()[0]
	row := func(r int) []any { return sampleRow(tb, r) }
	fill := func(w *Writer) {
		for r := range 2000 { // past the 64 KiB the writer buffers
			if err := w.AppendRow(row(r)); err != nil {
				t.Fatal(err)
			}
		}
	}
	first := &gated{open: make(chan struct{})}
	a, err := NewWriter(tb, first, Options{Common: testCommon})
	if err != nil {
		t.Fatal(err)
	}
	fill(a)
	if err := a.Flush(); err != nil { // in flight, stuck on the gate
		t.Fatal(err)
	}
	var second bytes.Buffer
	b, err := NewWriter(tb, &second, Options{Common: testCommon})
	if err != nil {
		t.Fatal(err)
	}
	fill(b)
	flushed := make(chan error, 1)
	go func() { flushed <- b.Flush() }()
	select {
	case err := <-flushed:
		t.Fatalf("a second writer's row group went in flight beside the first's (Flush = %v)", err)
	case <-time.After(100 * time.Millisecond):
	}
	close(first.open)
	if err := <-flushed; err != nil {
		t.Fatal(err)
	}
	for _, w := range []*Writer{a, b} {
		if n, err := w.Close(); n != 2000 || err != nil {
			t.Fatalf("Close() = %d, %v", n, err)
		}
	}
	if first.Len() == 0 || second.Len() == 0 {
		t.Fatalf("files of %d and %d bytes", first.Len(), second.Len())
	}
}

// TestEncodeInline: a writer that encodes its row groups on the caller's
// goroutine writes the same file as one that encodes them beside the next
// rows, and holds no token of the process-wide bound: it completes while
// another writer's row group is in flight.
func TestEncodeInline(t *testing.T) {
	tb := Tables()[0]
	write := func(inline bool) []byte {
		var buf bytes.Buffer
		w, err := NewWriter(tb, &buf, Options{Common: testCommon, RowGroupRows: 64})
		if err != nil {
			t.Fatal(err)
		}
		if inline {
			w.EncodeInline()
		}
		for r := range 2000 {
			if err := w.AppendRow(sampleRow(tb, r)); err != nil {
				t.Fatal(err)
			}
		}
		if n, err := w.Close(); n != 2000 || err != nil {
			t.Fatalf("Close() = %d, %v", n, err)
		}
		return buf.Bytes()
	}
	want := write(false)

	// Another writer's row group in flight, stuck on its destination.
	stuck := &gated{open: make(chan struct{})}
	a, err := NewWriter(tb, stuck, Options{Common: testCommon})
	if err != nil {
		t.Fatal(err)
	}
	for r := range 2000 {
		if err := a.AppendRow(sampleRow(tb, r)); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Flush(); err != nil {
		t.Fatal(err)
	}
	got := make(chan []byte, 1)
	go func() { got <- write(true) }()
	select {
	case b := <-got:
		if !bytes.Equal(b, want) {
			t.Errorf("encoded inline: %d bytes, unlike the %d encoded in the background", len(b), len(want))
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a writer encoding inline waited for another writer's row group in flight")
	}
	close(stuck.open)
	if _, err := a.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestListRowGroupBudget: a coded list column's values, counted as the
// strings they stand for, end a row group at maxListBytes (a deep
// profile's stacks), not only at the row count.
func TestListRowGroupBudget(t *testing.T) {
	f := create(t, "lists.parquet")
	w, err := NewWriter(Stacks, f, Options{Common: testCommon})
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]string, 1000)
	list := make([]int32, len(ids))
	for i := range ids {
		ids[i] = fmt.Sprintf("sha256:%064x", i)
		list[i] = int32(i)
	}
	sid, frames, leaf := w.StringCol("stack_id"), w.DictStringListCol("frame_ids", ids), w.DictStringCol("leaf_frame_id", ids)
	w.SetString("run_id", "r")
	w.SetString("artifact_id", "a")
	start, dur, track := w.Int64Col("start_ns"), w.Int64Col("duration_ns"), w.Uint64Col("track_id")
	metric, unit, thread, process := w.StringCol("metric"), w.StringCol("unit"), w.StringCol("thread"), w.StringCol("process")
	val, cnt := w.Int64Col("value"), w.Uint64Col("sample_count")
	others := func(r int) {
		start.Append(0)
		dur.Append(int64(r))
		track.Append(0)
		metric.Append("cpu")
		unit.Append("nanoseconds")
		thread.AppendNull()
		process.AppendNull()
		val.Append(int64(r))
		cnt.Append(1)
	}
	// 71 bytes x 1,000 ids a row: 64 MiB in 945 rows, checked every 256.
	const rows = 2000
	for r := range rows {
		sid.Append(fmt.Sprint(r))
		frames.Append(list)
		leaf.Append(r % len(ids))
		others(r)
		if err := w.EndRow(); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := w.Close(); n != rows || err != nil {
		t.Fatalf("Close() = %d, %v", n, err)
	}
	_, footerRows, groups, _ := readBack(t, f.Name())
	if footerRows != rows || groups != 2 {
		t.Fatalf("%d rows in %d row groups, want %d in 2 (1,024 and 976)", footerRows, groups, rows)
	}
}
