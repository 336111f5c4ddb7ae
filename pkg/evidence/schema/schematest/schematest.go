// Package schematest reads evidence Parquet files back as Go values, for
// tests that check what a writer or an extractor produced.
package schematest

import (
	"context"
	"fmt"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// File is a Parquet file read back whole.
type File struct {
	Schema     *arrow.Schema
	FooterRows int64   // row count the footer states
	RowGroups  int     // row groups in the footer
	Rows       [][]any // values in schema order, row by row
}

// Read opens path with pqarrow and returns every value as a Go value:
// string, int32, int64, uint64, float64, bool, time.Time (UTC), []string,
// map[string]string, or nil for null.
func Read(t testing.TB, path string) *File {
	t.Helper()
	pf, err := file.OpenParquetFile(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: 4096}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	s, err := fr.Schema()
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Release()
	out := &File{Schema: s, FooterRows: pf.NumRows(), RowGroups: pf.NumRowGroups(), Rows: make([][]any, tbl.NumRows())}
	for ci := 0; ci < int(tbl.NumCols()); ci++ {
		r := 0
		for _, chunk := range tbl.Column(ci).Data().Chunks() {
			for i := 0; i < chunk.Len(); i++ {
				out.Rows[r] = append(out.Rows[r], Value(chunk, i))
				r++
			}
		}
	}
	return out
}

// Maps returns the rows as column name → value.
func (f *File) Maps() []map[string]any {
	out := make([]map[string]any, len(f.Rows))
	for r, row := range f.Rows {
		out[r] = make(map[string]any, len(row))
		for c, v := range row {
			out[r][f.Schema.Field(c).Name] = v
		}
	}
	return out
}

// Value is element i of a as a Go value (see Read).
func Value(a arrow.Array, i int) any {
	if a.IsNull(i) {
		return nil
	}
	switch a := a.(type) {
	case *array.String:
		return a.Value(i)
	case *array.Int32:
		return a.Value(i)
	case *array.Int64:
		return a.Value(i)
	case *array.Uint64:
		return a.Value(i)
	case *array.Float64:
		return a.Value(i)
	case *array.Boolean:
		return a.Value(i)
	case *array.Timestamp:
		return time.UnixMicro(int64(a.Value(i))).UTC()
	case *array.Map:
		start, end := a.ValueOffsets(i)
		m := map[string]string{}
		for j := start; j < end; j++ {
			m[a.Keys().(*array.String).Value(int(j))] = a.Items().(*array.String).Value(int(j))
		}
		return m
	case *array.List:
		start, end := a.ValueOffsets(i)
		l := []string{}
		for j := start; j < end; j++ {
			l = append(l, a.ListValues().(*array.String).Value(int(j)))
		}
		return l
	}
	panic(fmt.Sprintf("schematest: no reader for %T", a))
}

// InvalidUTF8 lists, as "row R column C", every string value of f (in
// lists and maps too) that is not valid UTF-8; DuckDB refuses to read a
// file holding one.
func (f *File) InvalidUTF8() []string {
	var out []string
	for r, row := range f.Rows {
		for c, v := range row {
			var ss []string
			switch v := v.(type) {
			case string:
				ss = []string{v}
			case []string:
				ss = v
			case map[string]string:
				for k, x := range v {
					ss = append(ss, k, x)
				}
			}
			for _, s := range ss {
				if !utf8.ValidString(s) {
					out = append(out, fmt.Sprintf("row %d column %s: %q", r, f.Schema.Field(c).Name, s))
					break
				}
			}
		}
	}
	return out
}
