package schema

import (
	"context"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// Copy writes every row of the Parquet files srcs (all of table t, each
// checked with Validate) into one new Parquet file on w, in order, with the
// same writer settings as NewWriter. Rows keep their own publication
// columns (generation id, publication time, extractor), which is what
// compaction needs: merged rows still say where they came from.
//
// Sources of one row group share row groups (a capture's few rows each).
// A source of several row groups keeps its boundaries: its writer chose
// them (the profile extractor puts a profile's top ranks in a small first
// row group, which hotspots find by statistics), and a large source
// fills its row groups anyway.
func Copy(ctx context.Context, t *Table, w io.Writer, srcs []string) (int64, error) {
	cw, err := newWriter(t, w, 0, Common{})
	if err != nil {
		return 0, err
	}
	if err := cw.open(false); err != nil { // segments are large: zstd
		cw.rb.Release()
		return 0, err
	}
	var rows, inGroup int64
	for _, src := range srcs {
		n, err := copyFile(ctx, t, cw, src, &inGroup)
		rows += n
		if err != nil {
			cw.Close()
			return rows, fmt.Errorf("schema: copy %s: %w", src, err)
		}
	}
	if err := cw.fw.Close(); err != nil {
		return rows, fmt.Errorf("schema: %s: closing: %w", t.Name, err)
	}
	cw.closed = true
	cw.rb.Release()
	if err := cw.buf.Flush(); err != nil {
		return rows, err
	}
	return rows, nil
}

// copyFile appends src's rows to cw; inGroup counts the rows in cw's
// current buffered row group.
func copyFile(ctx context.Context, t *Table, cw *Writer, src string, inGroup *int64) (int64, error) {
	pf, err := file.OpenParquetFile(src, false)
	if err != nil {
		return 0, err
	}
	defer pf.Close()
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: 64 * 1024}, memory.DefaultAllocator)
	if err != nil {
		return 0, err
	}
	sch, err := fr.Schema()
	if err != nil {
		return 0, err
	}
	if err := t.Validate(sch); err != nil {
		return 0, err
	}
	// Columns an older minor did not have are appended as nulls.
	missing := t.Columns[sch.NumFields():]
	groups := [][]int{nil} // every row group, buffered with its neighbours
	if n := pf.NumRowGroups(); n > 1 {
		groups = groups[:0]
		for g := range n {
			groups = append(groups, []int{g})
		}
	}
	var rows int64
	for _, g := range groups {
		if g != nil && *inGroup > 0 {
			if err := cw.fw.NewBufferedRowGroupChecked(); err != nil {
				return rows, err
			}
			*inGroup = 0
		}
		n, err := copyGroups(ctx, t, cw, fr, g, missing)
		rows += n
		*inGroup += n
		if err != nil {
			return rows, err
		}
	}
	return rows, nil
}

// copyGroups appends the rows of fr's row groups g (all when nil) to cw,
// with missing columns as nulls.
func copyGroups(ctx context.Context, t *Table, cw *Writer, fr *pqarrow.FileReader, g []int, missing []Column) (int64, error) {
	rr, err := fr.GetRecordReader(ctx, nil, g)
	if err != nil {
		return 0, err
	}
	defer rr.Release()
	var rows int64
	for rr.Next() {
		rec := rr.RecordBatch()
		// Same columns, but the schema read back carries Parquet field ids;
		// re-label the batch with the table's own schema.
		cols := rec.Columns()
		var nulls []arrow.Array
		for _, c := range missing {
			nulls = append(nulls, array.MakeArrayOfNull(memory.DefaultAllocator, c.Type, int(rec.NumRows())))
		}
		out := array.NewRecordBatch(t.Schema(), append(cols[:len(cols):len(cols)], nulls...), rec.NumRows())
		err := cw.fw.WriteBuffered(out) // small sources share row groups
		out.Release()
		for _, a := range nulls {
			a.Release()
		}
		if err != nil {
			return rows, err
		}
		rows += rec.NumRows()
	}
	if err := rr.Err(); err != nil && err != io.EOF {
		return rows, err
	}
	return rows, nil
}
