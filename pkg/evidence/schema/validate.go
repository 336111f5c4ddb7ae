package schema

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
)

// MismatchError reports how a file's Arrow schema differs from the table it
// claims to hold. Callers map it to EVIDENCE_SCHEMA_MISMATCH.
type MismatchError struct {
	Table string   // expected table ID, e.g. "runs@1.0"; "" when unknown
	Diffs []string // one line per difference, naming the column or key
}

func (e *MismatchError) Error() string {
	name := e.Table
	if name == "" {
		name = "unknown table"
	}
	return "evidence schema mismatch for " + name + ": " + strings.Join(e.Diffs, "; ")
}

// Validate checks s against the table named by its flameox.table metadata.
func Validate(s *arrow.Schema) error {
	if s == nil {
		return &MismatchError{Diffs: []string{"no schema"}}
	}
	name, _ := s.Metadata().GetValue(MetaTable)
	t, ok := Lookup(name)
	if !ok {
		return &MismatchError{Diffs: []string{fmt.Sprintf("metadata %s = %q names no evidence table", MetaTable, name)}}
	}
	return t.Validate(s)
}

// Validate checks that s, an evidence file's Arrow schema as read back by
// pqarrow, has exactly t's columns (names, order, types, nullability) and
// t's flameox metadata, or, for a file of an older minor version of t's
// major, exactly that minor's columns (Table.At). Field metadata and
// non-flameox schema metadata (for example PARQUET:field_id) are ignored.
func (t *Table) Validate(s *arrow.Schema) error {
	if s == nil {
		return &MismatchError{Table: t.ID(), Diffs: []string{"no schema"}}
	}
	var diffs []string
	md := s.Metadata()
	// A file of an older minor of the same major has that minor's columns.
	if got, ok := md.GetValue(MetaMinor); ok && got != strconv.Itoa(t.Minor) {
		if m, err := strconv.Atoi(got); err == nil && got == strconv.Itoa(m) {
			if old := t.At(m); old != nil && old != t {
				return old.Validate(s)
			}
		}
	}
	want := map[string]string{MetaTable: t.Name, MetaMajor: strconv.Itoa(t.Major), MetaMinor: strconv.Itoa(t.Minor)}
	for _, k := range []string{MetaTable, MetaMajor, MetaMinor} {
		if got, ok := md.GetValue(k); !ok {
			diffs = append(diffs, fmt.Sprintf("metadata %s missing, want %q", k, want[k]))
		} else if got != want[k] {
			diffs = append(diffs, fmt.Sprintf("metadata %s = %q, want %q", k, got, want[k]))
		}
	}
	for i, k := range md.Keys() {
		if _, known := want[k]; !known && strings.HasPrefix(k, "flameox.") {
			diffs = append(diffs, fmt.Sprintf("unexpected metadata %s = %q", k, md.Values()[i]))
		}
	}
	sameSet := s.NumFields() == len(t.Columns)
	for _, c := range t.Columns {
		idx := s.FieldIndices(c.Name)
		if len(idx) == 0 {
			diffs = append(diffs, fmt.Sprintf("column %s (%s) missing", c.Name, c.TypeName()))
			sameSet = false
			continue
		}
		if len(idx) > 1 {
			diffs = append(diffs, fmt.Sprintf("column %s appears %d times", c.Name, len(idx)))
		}
		f := s.Field(idx[0])
		if !arrow.TypeEqual(f.Type, c.Type) {
			diffs = append(diffs, fmt.Sprintf("column %s is %s, want %s", c.Name, typeName(f.Type), c.TypeName()))
		}
		if f.Nullable != c.Nullable {
			diffs = append(diffs, fmt.Sprintf("column %s nullable=%t, want %t", c.Name, f.Nullable, c.Nullable))
		}
	}
	for _, f := range s.Fields() {
		if t.Index(f.Name) < 0 {
			diffs = append(diffs, fmt.Sprintf("unexpected column %s (%s)", f.Name, typeName(f.Type)))
		}
	}
	// Report order only when the columns are otherwise the same set; after a
	// missing or extra column every later position would differ.
	for i := 0; sameSet && i < len(t.Columns); i++ {
		if got := s.Field(i).Name; got != t.Columns[i].Name {
			diffs = append(diffs, fmt.Sprintf("column order differs at position %d: %s, want %s", i, got, t.Columns[i].Name))
			break
		}
	}
	if diffs != nil {
		return &MismatchError{Table: t.ID(), Diffs: diffs}
	}
	return nil
}
