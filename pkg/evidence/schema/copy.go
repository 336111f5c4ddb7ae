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
func Copy(ctx context.Context, t *Table, w io.Writer, srcs []string) (int64, error) {
	cw, err := newWriter(t, w, 0, Common{})
	if err != nil {
		return 0, err
	}
	if err := cw.open(false); err != nil { // segments are large: zstd
		cw.rb.Release()
		return 0, err
	}
	var rows int64
	for _, src := range srcs {
		n, err := copyFile(ctx, t, cw, src)
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

func copyFile(ctx context.Context, t *Table, cw *Writer, src string) (int64, error) {
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
	rr, err := fr.GetRecordReader(ctx, nil, nil)
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
