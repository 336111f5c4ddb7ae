package schema

import (
	"fmt"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// Typed column handles. Get them once per Writer, by column name, and append
// through them on the hot path: each Append is a direct call on the Arrow
// builder. The getters panic when the column does not exist, has another
// type, or is a publication column (the Writer fills those); these are
// programming errors, like a bad regexp in regexp.MustCompile. Handles stay
// valid across row groups.

// StringCol appends to a string column.
type StringCol struct {
	b *array.StringBuilder
	w *Writer // records the digests of replaced values
	i int     // the column's index
}

// Append appends v; invalid UTF-8 in v is stored as U+FFFD (see clean).
func (c StringCol) Append(v string) {
	if !utf8.ValidString(v) {
		v = c.w.replace(c.i, v)
	}
	c.b.Append(v)
}

func (c StringCol) AppendNull() { c.b.AppendNull() }

// AppendOrNull appends v, or null when v is empty.
func (c StringCol) AppendOrNull(v string) {
	if v == "" {
		c.b.AppendNull()
		return
	}
	c.Append(v)
}

// Int32Col appends to an int32 column.
type Int32Col struct{ b *array.Int32Builder }

func (c Int32Col) Append(v int32) { c.b.Append(v) }
func (c Int32Col) AppendNull()    { c.b.AppendNull() }

// Int64Col appends to an int64 column.
type Int64Col struct{ b *array.Int64Builder }

func (c Int64Col) Append(v int64) { c.b.Append(v) }
func (c Int64Col) AppendNull()    { c.b.AppendNull() }

// Uint64Col appends to a uint64 column.
type Uint64Col struct{ b *array.Uint64Builder }

func (c Uint64Col) Append(v uint64) { c.b.Append(v) }
func (c Uint64Col) AppendNull()     { c.b.AppendNull() }

// Float64Col appends to a float64 column.
type Float64Col struct{ b *array.Float64Builder }

func (c Float64Col) Append(v float64) { c.b.Append(v) }
func (c Float64Col) AppendNull()      { c.b.AppendNull() }

// BoolCol appends to a bool column.
type BoolCol struct{ b *array.BooleanBuilder }

func (c BoolCol) Append(v bool) { c.b.Append(v) }
func (c BoolCol) AppendNull()   { c.b.AppendNull() }

// TimeCol appends to a timestamp[us, UTC] column.
type TimeCol struct{ b *array.TimestampBuilder }

func (c TimeCol) Append(t time.Time)    { c.b.Append(arrow.Timestamp(t.UnixMicro())) }
func (c TimeCol) AppendMicros(us int64) { c.b.Append(arrow.Timestamp(us)) }
func (c TimeCol) AppendNull()           { c.b.AppendNull() }

// AppendOrNull appends t, or null when t is the zero time.
func (c TimeCol) AppendOrNull(t time.Time) {
	if t.IsZero() {
		c.b.AppendNull()
		return
	}
	c.Append(t)
}

// StringListCol appends to a list<string> column.
type StringListCol struct {
	b *array.ListBuilder
	v *array.StringBuilder
}

// Append appends vs as one list; a nil or empty vs is an empty list, not null.
func (c StringListCol) Append(vs []string) {
	c.b.Append(true)
	// One Append per value: StringBuilder.AppendValues reserves exactly the
	// bytes it needs each call, which regrows the data buffer on every list
	// and turns a column of many lists quadratic.
	for _, v := range vs {
		c.v.Append(cleanString(v))
	}
}
func (c StringListCol) AppendNull() { c.b.AppendNull() }

// StringMapCol appends to a map<string,string> column.
type StringMapCol struct {
	b    *array.MapBuilder
	k, v *array.StringBuilder
}

// Append appends m with its keys sorted, so equal maps give equal files.
func (c StringMapCol) Append(m map[string]string) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	c.b.Append(true)
	for i, k := range cleanKeys(keys) {
		c.k.Append(k)
		c.v.Append(cleanString(m[keys[i]]))
	}
}

// AppendPairs appends parallel keys and values as one map, in the given
// order. It panics when their lengths differ.
func (c StringMapCol) AppendPairs(keys, values []string) {
	if len(keys) != len(values) {
		panic("schema: StringMapCol.AppendPairs: keys and values differ in length")
	}
	c.b.Append(true)
	for i, k := range cleanKeys(keys) {
		c.k.Append(k)
		c.v.Append(cleanString(values[i]))
	}
}
func (c StringMapCol) AppendNull() { c.b.AppendNull() }

// builder returns the builder of a non-publication column of the given type
// (a coded column returns to its builder; see Writer.DictStringCol).
func (w *Writer) builder(name string, want arrow.DataType) array.Builder {
	i := w.column(name, want)
	w.uncode(i)
	return w.builders[i]
}

// column returns the index of a non-publication column of the given type;
// it panics on a missing, publication or mistyped column.
func (w *Writer) column(name string, want arrow.DataType) int {
	i := w.t.Index(name)
	switch {
	case i < 0:
		panic(fmt.Sprintf("schema: table %s has no column %q", w.t.Name, name))
	case i < NumCommon:
		panic(fmt.Sprintf("schema: %s.%s is a publication column; the Writer fills it", w.t.Name, name))
	case i == w.orig.col:
		panic(fmt.Sprintf("schema: %s.%s holds the digests of replaced strings; the Writer fills it", w.t.Name, name))
	case !arrow.TypeEqual(w.t.Columns[i].Type, want):
		panic(fmt.Sprintf("schema: %s.%s is %s, not %s", w.t.Name, name, w.t.Columns[i].TypeName(), typeName(want)))
	}
	return i
}

// StringCol returns the handle of the string column name.
func (w *Writer) StringCol(name string) StringCol {
	b := w.builder(name, tStr).(*array.StringBuilder)
	return StringCol{b, w, w.t.Index(name)}
}

// Int32Col returns the handle of the int32 column name.
func (w *Writer) Int32Col(name string) Int32Col {
	return Int32Col{w.builder(name, tI32).(*array.Int32Builder)}
}

// Int64Col returns the handle of the int64 column name.
func (w *Writer) Int64Col(name string) Int64Col {
	return Int64Col{w.builder(name, tI64).(*array.Int64Builder)}
}

// Uint64Col returns the handle of the uint64 column name.
func (w *Writer) Uint64Col(name string) Uint64Col {
	return Uint64Col{w.builder(name, tU64).(*array.Uint64Builder)}
}

// Float64Col returns the handle of the float64 column name.
func (w *Writer) Float64Col(name string) Float64Col {
	return Float64Col{w.builder(name, tF64).(*array.Float64Builder)}
}

// BoolCol returns the handle of the bool column name.
func (w *Writer) BoolCol(name string) BoolCol {
	return BoolCol{w.builder(name, tBool).(*array.BooleanBuilder)}
}

// TimeCol returns the handle of the timestamp column name.
func (w *Writer) TimeCol(name string) TimeCol {
	return TimeCol{w.builder(name, tTime).(*array.TimestampBuilder)}
}

// StringListCol returns the handle of the list<string> column name.
func (w *Writer) StringListCol(name string) StringListCol {
	b := w.builder(name, tStrList).(*array.ListBuilder)
	return StringListCol{b, b.ValueBuilder().(*array.StringBuilder)}
}

// StringMapCol returns the handle of the map<string,string> column name.
func (w *Writer) StringMapCol(name string) StringMapCol {
	b := w.builder(name, tStrMap).(*array.MapBuilder)
	return StringMapCol{b, b.KeyBuilder().(*array.StringBuilder), b.ItemBuilder().(*array.StringBuilder)}
}
