package schema

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// Scan reads the named flat columns of every row of src, a Parquet file of
// table t (checked with Validate), and calls fn with each row's values in
// the order of cols: string, int32, int64, uint64, float64, bool,
// time.Time (UTC) or nil for null. It is for writers that must read what a
// commit already holds without DuckDB (the publisher's compare-and-swap
// checks, run-set freezing); analyses read through the catalog. A column
// the file's older minor does not have reads as null.
func Scan(ctx context.Context, t *Table, src string, cols []string, fn func(row []any) error) error {
	for _, c := range cols {
		i := t.Index(c)
		if i < 0 {
			return fmt.Errorf("schema: %s has no column %q", t.Name, c)
		}
		if _, nested := t.Columns[i].Type.(arrow.NestedType); nested {
			return fmt.Errorf("schema: %s.%s is not a flat column", t.Name, c)
		}
	}
	pf, err := file.OpenParquetFile(src, false)
	if err != nil {
		return fmt.Errorf("schema: open %s: %w", src, err)
	}
	defer pf.Close()
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: 64 * 1024}, memory.DefaultAllocator)
	if err != nil {
		return fmt.Errorf("schema: read %s: %w", src, err)
	}
	sch, err := fr.Schema()
	if err != nil {
		return fmt.Errorf("schema: read %s: %w", src, err)
	}
	if err := t.Validate(sch); err != nil {
		return err
	}
	var leaves []int
	for _, c := range cols {
		if i := pf.MetaData().Schema.ColumnIndexByName(c); i >= 0 {
			leaves = append(leaves, i)
		}
	}
	row := make([]any, len(cols))
	if len(leaves) == 0 { // only columns of a later minor: all null
		for range pf.NumRows() {
			if err := fn(row); err != nil {
				return err
			}
		}
		return nil
	}
	rr, err := fr.GetRecordReader(ctx, leaves, nil)
	if err != nil {
		return fmt.Errorf("schema: read %s: %w", src, err)
	}
	return emitRows(ctx, rr, src, cols, row, value, fn)
}

// emitRows calls fn with each row of rr's record batches, its values in
// the order of cols (nil for a column the file lacks) as conv makes them,
// reusing row; it releases rr.
func emitRows(ctx context.Context, rr pqarrow.RecordReader, src string, cols []string, row []any, conv func(arrow.Array, int) any, fn func([]any) error) error {
	defer rr.Release()
	arrs := make([]arrow.Array, len(cols))
	for rr.Next() {
		rec := rr.RecordBatch()
		for i, c := range cols {
			arrs[i] = nil
			if idx := rec.Schema().FieldIndices(c); len(idx) == 1 {
				arrs[i] = rec.Column(idx[0])
			}
		}
		for r := range int(rec.NumRows()) {
			if err := ctx.Err(); err != nil {
				return err
			}
			for i, a := range arrs {
				row[i] = conv(a, r)
			}
			if err := fn(row); err != nil {
				return err
			}
		}
	}
	if err := rr.Err(); err != nil && err != io.EOF {
		return fmt.Errorf("schema: read %s: %w", src, err)
	}
	return nil
}

// value is row r of a as a plain Go value.
func value(a arrow.Array, r int) any {
	if a == nil || a.IsNull(r) {
		return nil
	}
	switch a := a.(type) {
	case *array.String:
		return a.Value(r)
	case *array.LargeString:
		return a.Value(r)
	case *array.Int32:
		return a.Value(r)
	case *array.Int64:
		return a.Value(r)
	case *array.Uint64:
		return a.Value(r)
	case *array.Float64:
		return a.Value(r)
	case *array.Boolean:
		return a.Value(r)
	case *array.Timestamp:
		return time.UnixMicro(int64(a.Value(r))).UTC()
	case *array.Dictionary:
		return value(a.Dictionary(), a.GetValueIndex(r))
	}
	return a.ValueStr(r)
}
