package schema

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// DefaultRowGroupRows is the row-group size used when Options leaves it 0.
const DefaultRowGroupRows = 64 * 1024

// Common holds the publication columns, identical for every row of a file.
type Common struct {
	GenerationID     string
	PublishedAt      time.Time
	ExtractorName    string
	ExtractorVersion string
}

// Options configure a Writer.
type Options struct {
	Common       Common
	RowGroupRows int // rows per row group; 0 means DefaultRowGroupRows
}

// Writer writes rows of one table to one Parquet file.
//
// Obtain typed column handles once (StringCol, Int64Col, ...), append one
// value to every non-publication column, then call EndRow. Rows are buffered
// in Arrow builders and written one row group at a time. A Writer is not safe
// for concurrent use. It never closes the io.Writer it was given.
type Writer struct {
	t        *Table
	buf      *bufio.Writer
	fw       *pqarrow.FileWriter
	rb       *array.RecordBuilder
	builders []array.Builder
	strings  []*array.StringBuilder // string data, for the row group's byte budget
	coded    []*coded               // per column: written from dictionary indices, or nil
	orig     originals              // digests of the current row's replaced strings
	plain    bool                   // small file: no dictionary pages (their set-up outweighs a few rows)
	dense    []bool                 // per column: a coded column written as plain strings (see open)
	common   Common
	rowGroup int
	pending  int   // rows in the builders
	rows     int64 // rows written to row groups
	err      error // sticky
	closed   bool
	trial    *Trial     // see SetTrial
	writing  chan error // the row group being encoded and written, or nil
	inline   bool       // see EncodeInline
}

// EncodeInline makes w encode and write each row group on the goroutine
// that ends its rows, rather than on one of its own beside the next rows,
// and outside the process-wide bound of one group in flight (flush). It
// is for a writer filled on a goroutine of its own while other writers
// are filled and encoded: its rows then cost one row group of memory,
// not two. Call it before the first row.
func (w *Writer) EncodeInline() { w.inline = true }

// NewWriter starts a Parquet file for t on w.
func NewWriter(t *Table, w io.Writer, opts Options) (*Writer, error) {
	c := opts.Common
	if c.GenerationID == "" || c.ExtractorName == "" || c.ExtractorVersion == "" || c.PublishedAt.IsZero() {
		return nil, fmt.Errorf("schema: %s: Common needs GenerationID, PublishedAt, ExtractorName and ExtractorVersion", t.Name)
	}
	return newWriter(t, w, opts.RowGroupRows, c)
}

func newWriter(t *Table, w io.Writer, rowGroup int, c Common) (*Writer, error) {
	if rowGroup <= 0 {
		rowGroup = DefaultRowGroupRows
	}
	// bufio batches pqarrow's small writes; hiding Close keeps pqarrow from
	// closing the caller's file (the caller fsyncs and closes it).
	buf := bufio.NewWriterSize(struct{ io.Writer }{w}, 64<<10)
	rb := array.NewRecordBuilder(memory.DefaultAllocator, t.Schema())
	// The file writer starts with the first row group, when the codec can
	// depend on the file's size.
	wr := &Writer{t: t, buf: buf, rb: rb, builders: rb.Fields(), common: c, rowGroup: rowGroup,
		coded: make([]*coded, len(t.Columns)), orig: originals{col: -1}}
	for i, c := range t.Columns {
		if c.Originals {
			wr.orig.col = i
		}
	}
	if c.GenerationID != "" { // not Copy, which writes its sources' own values
		for i, v := range map[int]string{1: c.GenerationID, 3: c.ExtractorName, 4: c.ExtractorVersion} {
			d := []string{cleanString(v)}
			wr.coded[i] = &coded{src: d, dict: d, konst: true}
		}
	}
	for _, b := range wr.builders {
		switch b := b.(type) {
		case *array.StringBuilder:
			wr.strings = append(wr.strings, b)
		case *array.ListBuilder:
			if v, ok := b.ValueBuilder().(*array.StringBuilder); ok {
				wr.strings = append(wr.strings, v)
			}
		case *array.MapBuilder:
			for _, v := range []array.Builder{b.KeyBuilder(), b.ItemBuilder()} {
				if v, ok := v.(*array.StringBuilder); ok {
					wr.strings = append(wr.strings, v)
				}
			}
		}
	}
	return wr, nil
}

// smallFile is the most rows a file may hold to be written uncompressed.
// Most publications are one run: a row or two per table, where the
// Parquet file is all metadata and zstd only costs its set-up (its
// history buffers, once per process; docs/performance.md, "Capture
// orchestration overhead").
const smallFile = 256

// open starts the Parquet file writer: zstd at its fastest level, or no
// compression for a small file written in one go.
func (w *Writer) open(small bool) error {
	registerZstd()
	codec := parquet.WithCompression(compress.Codecs.Zstd)
	if small {
		codec = parquet.WithCompression(compress.Codecs.Uncompressed)
	}
	props := []parquet.WriterProperty{
		codec,
		parquet.WithCompressionLevel(1), // zstd fastest: a quarter off the large-profile import, files no larger (docs/performance.md)
		parquet.WithDictionaryDefault(false),
		parquet.WithMaxRowGroupLength(int64(w.rowGroup)),
		parquet.WithCreatedBy("flameox evidence " + w.t.ID()),
	}
	w.dense = make([]bool, len(w.t.Columns))
	for i, col := range w.t.Columns {
		path := col.Name
		if col.Type.ID() == arrow.LIST {
			path += ".list.element" // the Parquet leaf pqarrow writes
		}
		// A coded column whose first row group repeats few of its values
		// (a deep profile's call edges: each caller and callee id once per
		// metric, on adjacent rows)
		// gains nothing from a dictionary: its page would hold every value
		// anyway, after arrow-go had hashed each into its memo table (a
		// tenth of a 10^6-location import). Such a column is written as
		// plain strings for the whole file; zstd still finds the repeats.
		if k := w.coded[i]; k != nil && !small && k.sparse() {
			w.dense[i] = true
		} else if (col.Dict || k != nil) && !small {
			props = append(props, parquet.WithDictionaryFor(path, true))
		}
		if col.Digest || col.Text || strings.HasSuffix(col.Name, "_json") {
			props = append(props, parquet.WithStatsFor(path, false))
		}
	}
	w.plain = small
	fw, err := pqarrow.NewFileWriter(w.t.Schema(), w.buf, parquet.NewWriterProperties(props...),
		pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	if err != nil {
		return fmt.Errorf("schema: %s: %w", w.t.Name, err)
	}
	w.fw = fw
	return nil
}

// Table returns the table being written.
func (w *Writer) Table() *Table { return w.t }

// Rows returns the number of rows ended so far.
func (w *Writer) Rows() int64 { return w.rows + int64(w.pending) }

// EndRow completes the current row. Every non-publication column must have
// received exactly one value since the previous EndRow.
func (w *Writer) EndRow() error {
	if w.closed {
		return errClosed
	}
	if w.err != nil {
		return w.err
	}
	if w.orig.col >= 0 {
		w.endOriginals()
	}
	want := w.pending + 1
	for i := NumCommon; i < len(w.builders); i++ {
		n := w.builders[i].Len()
		if c := w.coded[i]; c != nil {
			if n = c.rows(); n < 0 {
				continue
			}
		}
		if n != want {
			return w.fail(fmt.Errorf("schema: %s row %d: column %s has %d values, want %d",
				w.t.Name, w.Rows(), w.t.Columns[i].Name, n, want))
		}
	}
	w.pending = want
	if w.pending >= w.rowGroup || (w.pending%256 == 0 && (w.stringBytes() >= maxGroupBytes || w.listBytes() >= maxListBytes)) {
		return w.flush()
	}
	return nil
}

// maxGroupBytes bounds the string bytes a row group buffers: wide rows
// (a stack's frame ids, a call edge's two frame ids) end their row group
// before DefaultRowGroupRows, so that the builders and the Parquet
// writer's conversion buffers of one group stay small (it lowered a large
// profile's import peak RSS; docs/performance.md). The check runs every 256 rows, off the per-row path.
const maxGroupBytes = 4 << 20

// stringBytes is the string data buffered in the builders.
func (w *Writer) stringBytes() int {
	n := 0
	for _, b := range w.strings {
		n += b.DataLen()
	}
	return n
}

// maxListBytes bounds a row group's coded list values, counted as the
// strings they stand for: a deep profile's stacks hold a thousand frame
// ids a row, and in one row group they made one dictionary of a million
// ids, which arrow-go hashes into a memo table of its own: the import's
// peak. It is larger than maxGroupBytes because a dictionary holds each
// distinct id once: a large profile's stacks share most frames, and split
// into small groups their dictionaries repeated them (docs/performance.md).
const maxListBytes = 64 << 20

// listBytes is what the coded list columns buffered stand for.
func (w *Writer) listBytes() int {
	n := 0
	for _, c := range w.coded {
		if c != nil && c.list {
			n += len(c.idx) * c.width
		}
	}
	return n
}

func (w *Writer) fail(err error) error {
	if w.err == nil {
		w.err = err
	}
	return w.err
}

// Flush writes the rows ended so far as a row group now, releasing the
// memory they held. Close does the same for the last rows; Flush lets a
// writer shared by several producers shed each one's rows when it is done.
func (w *Writer) Flush() error {
	if w.closed {
		return errClosed
	}
	if w.err != nil {
		return w.err
	}
	return w.flush()
}

// Shed is Flush for a producer that is done with its rows and only wants
// their memory back: until the file's first row group is written, up to
// smallFile rows stay buffered, since they may be all the file will hold,
// which Close then writes in one go, uncompressed (a small profile's
// tables, each shed by its extractor, would otherwise each set up zstd
// and dictionary pages for a few rows). Rows kept so are checked when
// they are written.
func (w *Writer) Shed() error {
	if !w.closed && w.err == nil && w.fw == nil && w.pending <= smallFile {
		return nil
	}
	return w.Flush()
}

// flush fills the publication columns and writes the buffered rows as one
// row group.
func (w *Writer) flush() error {
	n := w.pending
	if n == 0 {
		return nil
	}
	version := int32(w.t.Major)
	ts := arrow.Timestamp(w.common.PublishedAt.UnixMicro())
	b0 := w.builders[0].(*array.Int32Builder)
	b2 := w.builders[2].(*array.TimestampBuilder)
	b0.Reserve(n)
	b2.Reserve(n)
	for range n {
		b0.UnsafeAppend(version)
		b2.UnsafeAppend(ts)
	}
	for i, c := range w.t.Columns {
		nulls := w.builders[i].NullN()
		if k := w.coded[i]; k != nil {
			nulls = k.nulls
		}
		if !c.Nullable && nulls > 0 {
			return w.fail(fmt.Errorf("schema: %s: %d nulls in non-nullable column %s", w.t.Name, nulls, c.Name))
		}
	}
	if w.fw == nil {
		// Closed before a first row group was written: the whole file is
		// these rows.
		if err := w.open(w.closed && n <= smallFile); err != nil {
			return w.fail(err)
		}
	}
	// Column by column rather than one record batch: a coded column's
	// array is a dictionary array, which the record batch's schema (the
	// file's, plain strings) would refuse; the file gets the same columns.
	arrs := make([]arrow.Array, len(w.builders))
	defer func() {
		for _, a := range arrs {
			if a != nil {
				a.Release()
			}
		}
	}()
	for i, b := range w.builders {
		sparse := false
		if k := w.coded[i]; k != nil {
			sparse = w.dense[i]
			a, err := k.array(n, w.plain || sparse)
			if err != nil {
				return w.fail(fmt.Errorf("schema: %s.%s: %w", w.t.Name, w.t.Columns[i].Name, err))
			}
			arrs[i] = a
			k.reset()
		} else {
			arrs[i] = b.NewArray()
		}
		// A sparse coded column's strings all come from its dictionary,
		// made valid UTF-8 once when it was coded (cleanDict): they are not
		// checked again value by value, a million of them in a large
		// profile's call edges.
		if !sparse {
			if err := w.checkUTF8(i, arrs[i]); err != nil {
				return w.fail(err)
			}
		}
	}
	// One row group is encoded and written while the caller fills the
	// next: the encoding (Parquet pages, dictionaries, zstd) was a third of
	// a large profile's extraction, on the core the caller was not using
	// (docs/performance.md, "Profiles with 10^6 locations"). At most one
	// is in flight in the process, whichever writer it is from (a writer
	// that encodes inline holds no place: EncodeInline), so the
	// memory held is one row group more: a writer done with its table
	// (Shed) leaves its last group in flight while the next table fills,
	// and without the process-wide bound every table of an extraction
	// could be in flight at once (the largest pprof fixture's import then
	// held 27 MB more).
	if err := w.wait(); err != nil {
		return err
	}
	group, batch := arrs, w.rows
	arrs = nil // the writer releases them
	if w.inline {
		if err := w.writeGroup(group, batch); err != nil {
			return w.fail(err)
		}
		w.rows += int64(n)
		w.pending = 0
		return nil
	}
	groupInFlight <- struct{}{}
	done := make(chan error, 1)
	go func() {
		err := w.writeGroup(group, batch)
		<-groupInFlight
		done <- err
	}()
	w.writing = done
	w.rows += int64(n)
	w.pending = 0
	return nil
}

// groupInFlight holds a token while a row group is encoded and written
// on a goroutine of its own (flush).
var groupInFlight = make(chan struct{}, 1)

// writeGroup writes arrs as the next row group and releases them. It runs
// on a goroutine of its own (flush); first is the group's first row.
func (w *Writer) writeGroup(arrs []arrow.Array, first int64) error {
	// Each column is released once written, not with the group: the
	// group's memory shrinks as it is encoded.
	defer func() {
		for _, a := range arrs {
			if a != nil {
				a.Release()
			}
		}
	}()
	if err := w.fw.NewRowGroupChecked(); err != nil {
		return fmt.Errorf("schema: %s: row group at row %d: %w", w.t.Name, first, err)
	}
	for i, a := range arrs {
		if err := w.fw.WriteColumnData(a); err != nil {
			return fmt.Errorf("schema: %s.%s: row group at row %d: %w", w.t.Name, w.t.Columns[i].Name, first, err)
		}
		a.Release()
		arrs[i] = nil
	}
	return nil
}

// wait waits for the row group in flight, if any, and keeps its error.
func (w *Writer) wait() error {
	if w.writing == nil {
		return nil
	}
	err := <-w.writing
	w.writing = nil
	if err != nil {
		return w.fail(err)
	}
	return nil
}

// Close writes the remaining rows and the footer, flushes everything to the
// io.Writer (without closing it) and returns the number of rows written.
// After an error the output is incomplete and must be discarded.
func (w *Writer) Close() (int64, error) {
	if w.closed {
		return w.rows, w.err
	}
	w.closed = true
	defer w.rb.Release()
	if w.err == nil {
		_ = w.flush() // a failure is kept in w.err
	}
	_ = w.wait()
	if w.fw == nil && w.err == nil { // no rows at all
		if err := w.open(true); err != nil {
			w.fail(err)
		}
	}
	if w.fw != nil {
		if err := w.fw.Close(); err != nil {
			w.fail(fmt.Errorf("schema: %s: closing: %w", w.t.Name, err))
		}
	}
	if err := w.buf.Flush(); err != nil {
		w.fail(fmt.Errorf("schema: %s: %w", w.t.Name, err))
	}
	return w.rows, w.err
}

// WriteEmpty writes a valid Parquet file of t with no rows: the typed empty
// anchor that lets a fresh workspace define every view.
func WriteEmpty(t *Table, w io.Writer) error {
	wr, err := newWriter(t, w, 0, Common{})
	if err != nil {
		return err
	}
	_, err = wr.Close()
	return err
}

var errClosed = errors.New("schema: writer is closed")
