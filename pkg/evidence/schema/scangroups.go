package schema

import (
	"bytes"
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// Group is one row group of a file ScanGroups reads: its min/max
// statistics decide whether it is read at all. Every method answers true
// ("may hold") when the statistics are missing, so pruning never drops a
// row it cannot rule out.
type Group struct {
	rg   *metadata.RowGroupMetaData
	leaf map[string]int // flat column name -> leaf index
}

// NumRows is the row group's row count.
func (g Group) NumRows() int64 { return g.rg.NumRows() }

func (g Group) stats(col string) metadata.TypedStatistics {
	i, ok := g.leaf[col]
	if !ok {
		return nil
	}
	cc, err := g.rg.ColumnChunk(i)
	if err != nil {
		return nil
	}
	if set, err := cc.StatsSet(); err != nil || !set {
		return nil
	}
	st, err := cc.Statistics()
	if err != nil || st == nil || !st.HasMinMax() {
		return nil
	}
	return st
}

// MayHoldString reports whether string column col may equal one of vs in
// this row group (a null never equals a string).
func (g Group) MayHoldString(col string, vs ...string) bool {
	st, ok := g.stats(col).(*metadata.ByteArrayStatistics)
	if !ok {
		return true
	}
	lo, hi := []byte(st.Min()), []byte(st.Max())
	for _, v := range vs {
		if bytes.Compare([]byte(v), lo) >= 0 && bytes.Compare([]byte(v), hi) <= 0 {
			return true
		}
	}
	return false
}

// MayHoldInt32 reports whether int32 column col may hold a value in
// [lo, hi].
func (g Group) MayHoldInt32(col string, lo, hi int32) bool {
	st, ok := g.stats(col).(*metadata.Int32Statistics)
	if !ok {
		return true
	}
	return lo <= st.Max() && hi >= st.Min()
}

// ScanGroups reads the named columns of the row groups of src (a Parquet
// file of table t, checked with Validate) that keep accepts (every group
// when keep is nil), and calls fn with each row's values in the order of
// cols: the plain Go values of Scan, plus map[string]string for a string
// map column and []string for a string list column (nil for null). It is
// for the few reads that answer faster without starting DuckDB (a page of
// a profile's ranked frames; pkg/analysis): keep prunes by the row
// groups' statistics, as DuckDB's min/max filter does. fn must not keep
// row.
func ScanGroups(ctx context.Context, t *Table, src string, cols []string, keep func(Group) bool, fn func(row []any) error) error {
	for _, c := range cols {
		if t.Index(c) < 0 {
			return fmt.Errorf("schema: %s has no column %q", t.Name, c)
		}
	}
	pf, err := file.OpenParquetFile(src, false)
	if err != nil {
		return fmt.Errorf("schema: open %s: %w", src, err)
	}
	defer pf.Close()
	md := pf.MetaData()
	leaf := map[string]int{}
	leaves := map[string][]int{} // top-level field -> its leaves
	for i := range md.Schema.NumColumns() {
		p := md.Schema.Column(i).ColumnPath()
		if len(p) == 0 {
			continue
		}
		if len(p) == 1 {
			leaf[p[0]] = i
		}
		leaves[p[0]] = append(leaves[p[0]], i)
	}
	var groups []int
	for i := range md.NumRowGroups() {
		if keep == nil || keep(Group{rg: md.RowGroup(i), leaf: leaf}) {
			groups = append(groups, i)
		}
	}
	if len(groups) == 0 {
		return nil
	}
	// The record reader reserves a batch's worth of every column up front:
	// a batch no larger than the groups read keeps a small read small.
	var rows int64
	for _, g := range groups {
		rows += md.RowGroup(g).NumRows()
	}
	props := pqarrow.ArrowReadProperties{BatchSize: max(1, min(rows, 64*1024))}
	// A string column whose chunks are all dictionary-encoded is read as
	// Arrow dictionary indices over its dictionary page: a row group's run
	// id, metric or thread is one value repeated, and read as strings it
	// was copied into a growing buffer once per row, most of what a small
	// query allocated (docs/performance.md, "Repeat hotspots on a small
	// profile").
	for _, c := range cols {
		if i, ok := leaf[c]; ok && md.Schema.Column(i).PhysicalType() == parquet.Types.ByteArray && dictionaryEncoded(md, groups, i) {
			props.SetReadDict(i, true)
		}
	}
	fr, err := pqarrow.NewFileReader(pf, props, memory.DefaultAllocator)
	if err != nil {
		return fmt.Errorf("schema: read %s: %w", src, err)
	}
	sch, err := fr.Schema()
	if err != nil {
		return fmt.Errorf("schema: read %s: %w", src, err)
	}
	if err := t.Validate(undictionary(sch)); err != nil {
		return err
	}
	var idx []int
	for _, c := range cols {
		idx = append(idx, leaves[c]...)
	}
	row := make([]any, len(cols))
	if len(idx) == 0 { // only columns of a later minor: all null
		for _, g := range groups {
			for range md.RowGroup(g).NumRows() {
				if err := fn(row); err != nil {
					return err
				}
			}
		}
		return nil
	}
	rr, err := fr.GetRecordReader(ctx, idx, groups)
	if err != nil {
		return fmt.Errorf("schema: read %s: %w", src, err)
	}
	return emitRows(ctx, rr, src, cols, row, nestedValue, fn)
}

// dictionaryEncoded reports whether leaf column i has a dictionary page
// in every row group of groups.
func dictionaryEncoded(md *metadata.FileMetaData, groups []int, i int) bool {
	for _, g := range groups {
		cc, err := md.RowGroup(g).ColumnChunk(i)
		if err != nil || !cc.HasDictionaryPage() {
			return false
		}
	}
	return true
}

// undictionary returns s with each dictionary field as its value type: the
// file's schema as Validate knows it, before SetReadDict.
func undictionary(s *arrow.Schema) *arrow.Schema {
	fields := s.Fields()
	changed := false
	for i, f := range fields {
		if d, ok := f.Type.(*arrow.DictionaryType); ok {
			fields[i].Type, changed = d.ValueType, true
		}
	}
	if !changed {
		return s
	}
	md := s.Metadata()
	return arrow.NewSchema(fields, &md)
}

// nestedValue is value, with string maps and lists as Go maps and slices.
func nestedValue(a arrow.Array, r int) any {
	if a == nil || a.IsNull(r) {
		return nil
	}
	switch a := a.(type) {
	case *array.Map:
		lo, hi := a.ValueOffsets(r)
		keys, items := a.Keys(), a.Items()
		m := make(map[string]string, hi-lo)
		for i := int(lo); i < int(hi); i++ {
			k, _ := value(keys, i).(string)
			v, _ := value(items, i).(string)
			m[k] = v
		}
		return m
	case *array.List:
		lo, hi := a.ValueOffsets(r)
		vs := a.ListValues()
		l := make([]string, 0, hi-lo)
		for i := int(lo); i < int(hi); i++ {
			v, _ := value(vs, i).(string)
			l = append(l, v)
		}
		return l
	}
	return value(a, r)
}
