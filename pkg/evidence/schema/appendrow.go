package schema

import (
	"fmt"
	"math"
	"time"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// AppendRow appends one row given as values for the table's own columns, in
// column order, publication columns excluded (len(vals) must be
// len(t.Columns)-NumCommon). nil means null. It accepts, per column type:
//
//	string              string
//	int32, int64        any Go integer that fits; int64 also time.Duration (ns)
//	uint64              any non-negative Go integer
//	float64             float64, float32
//	bool                bool
//	timestamp[us, UTC]  time.Time
//	list<string>        []string
//	map<string,string>  map[string]string
//
// The whole row is checked before anything is appended, so a rejected row
// leaves the Writer usable. AppendRow boxes every value; use the typed column
// handles for large tables.
func (w *Writer) AppendRow(vals []any) error {
	if w.err != nil || w.closed {
		return w.EndRow() // reports the sticky or closed error
	}
	cols := w.t.Columns[NumCommon:]
	for i := NumCommon; i < len(w.coded); i++ {
		w.uncode(i)
	}
	if len(vals) != len(cols) {
		return fmt.Errorf("schema: %s: AppendRow got %d values, want %d", w.t.Name, len(vals), len(cols))
	}
	for pass := range 2 {
		for i, v := range vals {
			if err := w.appendValue(NumCommon+i, v, pass == 1); err != nil {
				return fmt.Errorf("schema: %s.%s: %w", w.t.Name, cols[i].Name, err)
			}
		}
	}
	return w.EndRow()
}

// appendValue converts v for column i and, when do is set, appends it.
func (w *Writer) appendValue(i int, v any, do bool) error {
	col, b := w.t.Columns[i], w.builders[i]
	if i == w.orig.col {
		if v != nil {
			return fmt.Errorf("the Writer fills this column (digests of replaced strings); pass nil")
		}
		return nil
	}
	if v == nil {
		if !col.Nullable {
			return fmt.Errorf("null in a non-nullable column")
		}
		if do {
			b.AppendNull()
		}
		return nil
	}
	switch b := b.(type) {
	case *array.StringBuilder:
		s, ok := v.(string)
		if !ok {
			return mismatch(v, col)
		}
		if do {
			if !utf8.ValidString(s) {
				s = w.replace(i, s)
			}
			b.Append(s)
		}
	case *array.Int32Builder:
		n, ok := toInt64(v)
		if !ok || n < math.MinInt32 || n > math.MaxInt32 {
			return mismatch(v, col)
		}
		if do {
			b.Append(int32(n))
		}
	case *array.Int64Builder:
		n, ok := toInt64(v)
		if d, isDur := v.(time.Duration); isDur {
			n, ok = int64(d), true
		}
		if !ok {
			return mismatch(v, col)
		}
		if do {
			b.Append(n)
		}
	case *array.Uint64Builder:
		var u uint64
		switch x := v.(type) {
		case uint64:
			u = x
		case uint:
			u = uint64(x)
		case uint32:
			u = uint64(x)
		default:
			n, ok := toInt64(v)
			if !ok || n < 0 {
				return mismatch(v, col)
			}
			u = uint64(n)
		}
		if do {
			b.Append(u)
		}
	case *array.Float64Builder:
		var f float64
		switch x := v.(type) {
		case float64:
			f = x
		case float32:
			f = float64(x)
		default:
			return mismatch(v, col)
		}
		if do {
			b.Append(f)
		}
	case *array.BooleanBuilder:
		x, ok := v.(bool)
		if !ok {
			return mismatch(v, col)
		}
		if do {
			b.Append(x)
		}
	case *array.TimestampBuilder:
		t, ok := v.(time.Time)
		if !ok {
			return mismatch(v, col)
		}
		if do {
			b.Append(arrow.Timestamp(t.UnixMicro()))
		}
	case *array.ListBuilder:
		x, ok := v.([]string)
		if !ok {
			return mismatch(v, col)
		}
		if do {
			StringListCol{b, b.ValueBuilder().(*array.StringBuilder)}.Append(x)
		}
	case *array.MapBuilder:
		x, ok := v.(map[string]string)
		if !ok {
			return mismatch(v, col)
		}
		if do {
			StringMapCol{b, b.KeyBuilder().(*array.StringBuilder), b.ItemBuilder().(*array.StringBuilder)}.Append(x)
		}
	default:
		return fmt.Errorf("unsupported builder %T", b)
	}
	return nil
}

func mismatch(v any, col Column) error {
	return fmt.Errorf("cannot store %T in a %s column", v, col.TypeName())
}

// toInt64 converts Go signed and small unsigned integers.
func toInt64(v any) (int64, bool) {
	switch x := v.(type) {
	case int:
		return int64(x), true
	case int8:
		return int64(x), true
	case int16:
		return int64(x), true
	case int32:
		return int64(x), true
	case int64:
		return x, true
	case uint8:
		return int64(x), true
	case uint16:
		return int64(x), true
	case uint32:
		return int64(x), true
	case uint64:
		if x > math.MaxInt64 {
			return 0, false
		}
		return int64(x), true
	case uint:
		if uint64(x) > math.MaxInt64 {
			return 0, false
		}
		return int64(x), true
	}
	return 0, false
}
