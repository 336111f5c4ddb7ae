package schema

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/flameox/flameox/pkg/fault"
)

// Every string the Writer stores is valid UTF-8.
//
// Why here: the strings of an evidence row come from artifacts flameox
// does not control (a pprof function name, a perf script symbol, a sample
// label), and DuckDB refuses to read a Parquet string column that holds
// invalid UTF-8 — one bad byte made every analysis of the run fail. Each
// extractor reaches Parquet through this Writer's column handles, so
// sanitizing in them covers every extractor, present and future, in one
// place. A value that is not valid UTF-8 is stored with U+FFFD in place
// of each invalid sequence (strings.ToValidUTF8). Valid strings, nearly
// all of them, cost one utf8.ValidString.
//
// What the replacement loses is kept as a digest: a table with a column
// marked Column.Originals (frames.invalid_utf8) gets, in that column, for
// each string column of the row whose value was replaced, the column name
// and "sha256:<hex>" of the original bytes. The Writer fills it; callers
// never append to it. Only scalar string columns are recorded; the
// elements of list<string> and the keys and values of map<string,string>
// are replaced without a digest.

// replacement stands for each invalid UTF-8 sequence.
const replacement = "\uFFFD"

// clean returns s as valid UTF-8 and whether it had to be changed.
func clean(s string) (string, bool) {
	if utf8.ValidString(s) {
		return s, false
	}
	return strings.ToValidUTF8(s, replacement), true
}

// cleanString returns s as valid UTF-8.
func cleanString(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, replacement)
}

// originalDigest is "sha256:<hex>" of the bytes of s.
func originalDigest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// originals collects, for the row being written, the digests of the
// original values the Writer replaced.
type originals struct {
	col   int      // index of the table's Originals column, -1: none
	names []string // columns replaced in the current row
	sums  []string // their original bytes' digests
	konst bool     // a constant coded column was replaced (it counts in every row)
}

// add records that column name of the current row held s, not valid UTF-8.
func (o *originals) add(name, s string) {
	if o == nil || o.col < 0 {
		return
	}
	o.names = append(o.names, name)
	o.sums = append(o.sums, originalDigest(s))
}

// replace returns s (invalid UTF-8, in column i) with U+FFFD replacements,
// recording its digest for the current row.
func (w *Writer) replace(i int, s string) string {
	if w != nil && w.orig.col >= 0 {
		w.orig.add(w.t.Columns[i].Name, s)
	}
	return strings.ToValidUTF8(s, replacement)
}

// endOriginals fills the Originals column of the row being ended: the
// digests recorded since the previous row, with those of constant coded
// columns, or null.
func (w *Writer) endOriginals() {
	o := &w.orig
	for i := 0; o.konst && i < len(w.coded); i++ {
		if c := w.coded[i]; c != nil && c.konst && c.sums != nil {
			o.names, o.sums = append(o.names, c.name), append(o.sums, c.sums[0])
		}
	}
	b := w.builders[o.col].(*array.MapBuilder)
	if len(o.names) == 0 {
		b.AppendNull()
		return
	}
	if len(o.names) > 1 {
		// Column order, and one entry per column (the last value wins, as
		// a row holds one value per column).
		idx := make([]int, len(o.names))
		for i := range idx {
			idx[i] = i
		}
		slices.SortStableFunc(idx, func(a, b int) int { return w.t.Index(o.names[a]) - w.t.Index(o.names[b]) })
		names, sums := make([]string, 0, len(idx)), make([]string, 0, len(idx))
		for _, i := range idx {
			if n := len(names); n > 0 && names[n-1] == o.names[i] {
				sums[n-1] = o.sums[i]
				continue
			}
			names, sums = append(names, o.names[i]), append(sums, o.sums[i])
		}
		o.names, o.sums = names, sums
	}
	StringMapCol{b, b.KeyBuilder().(*array.StringBuilder), b.ItemBuilder().(*array.StringBuilder)}.AppendPairs(o.names, o.sums)
	o.names, o.sums = o.names[:0], o.sums[:0]
}

// cleanDict returns dict as valid UTF-8: dict itself when every entry is
// valid, else a copy with the invalid entries replaced, and (when digests
// are wanted) each replaced entry's original digest at its index.
func cleanDict(dict []string, digests bool) ([]string, []string) {
	bad := -1
	for i, s := range dict {
		if !utf8.ValidString(s) {
			bad = i
			break
		}
	}
	if bad < 0 {
		return dict, nil
	}
	out := slices.Clone(dict)
	var sums []string
	if digests {
		sums = make([]string, len(dict))
	}
	for i := bad; i < len(out); i++ {
		if s, changed := clean(out[i]); changed {
			if sums != nil {
				sums[i] = originalDigest(out[i])
			}
			out[i] = s
		}
	}
	return out, sums
}

// cleanKeys replaces invalid map keys; a replaced key that would collide
// with another key of the same map gets its original's digest appended,
// so that the map keeps one entry per original key.
func cleanKeys(keys []string) []string {
	var out []string
	for i, k := range keys {
		if s, changed := clean(k); changed {
			if out == nil {
				out = slices.Clone(keys)
			}
			out[i] = s
		}
	}
	if out == nil {
		return keys
	}
	// Keys that were valid keep their name; a replaced one yields on a
	// collision, with the valid keys or an earlier replaced one.
	seen := make(map[string]bool, len(out))
	for i, k := range out {
		if k == keys[i] {
			seen[k] = true
		}
	}
	for i, k := range out {
		if k == keys[i] {
			continue
		}
		if seen[k] {
			k += " (" + originalDigest(keys[i]) + ")"
			out[i] = k
		}
		seen[k] = true
	}
	return out
}

// checkUTF8 is the defence behind the column handles: every string of the
// arrays about to be written is valid UTF-8, or the row group is refused
// (EVIDENCE_SCHEMA_MISMATCH) rather than written where DuckDB could not
// read it. It checks each array's data buffer in one pass.
func (w *Writer) checkUTF8(i int, a arrow.Array) error {
	if !validArray(a) {
		return fault.New(fault.EvidenceSchemaMismatch, "%s.%s: a value is not valid UTF-8; it was not written", w.t.Name, w.t.Columns[i].Name).
			With("table", w.t.Name).With("column", w.t.Columns[i].Name).
			Fix("This is a bug in flameox (the evidence writer replaces invalid UTF-8); please report it with the artifact that caused it.")
	}
	return nil
}

// validArray reports whether every string in a (a string, list<string>,
// map<string,string> or dictionary-of-strings array) is valid UTF-8.
func validArray(a arrow.Array) bool {
	switch a := a.(type) {
	case *array.String:
		return validStrings(a)
	case *array.Dictionary:
		return validArray(a.Dictionary())
	case *array.Map:
		return validArray(a.Keys()) && validArray(a.Items())
	case *array.List:
		return validArray(a.ListValues())
	}
	return true
}

// validStrings checks the data of a's values in one pass, then that each
// value starts at a rune: a valid buffer can still cut a rune between two
// values ("\xc3" then "\xa9"), and a value that starts at a rune in a
// valid buffer ends at one.
func validStrings(a *array.String) bool {
	data, offs := a.ValueBytes(), a.ValueOffsets()
	if !utf8.Valid(data) {
		return false
	}
	for _, o := range offs {
		if j := int(o - offs[0]); j < len(data) && !utf8.RuneStart(data[j]) {
			return false
		}
	}
	return true
}
