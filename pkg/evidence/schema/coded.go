package schema

import (
	"fmt"
	"slices"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Coded string columns are written as Parquet dictionary pages plus
// integer indices, straight from indices the caller already has, instead
// of one string per row through an Arrow string builder.
//
// Why: a profile's call edges, stacks and frame measurements repeat the
// same few identifiers (run, artifact, generation, and frame ids of 71
// bytes) on every row. Appended as strings, a large profile pushed the
// same bytes through the builders, the plain encoder and zstd over and
// over: most of its import's Parquet writing (docs/performance.md). The
// extractor already holds
// each frame id once and refers to frames by index, so it hands the writer
// that index; a value constant over the rows (SetString) costs nothing per
// row. The file is an ordinary Parquet string column either way (the
// stored Arrow schema still says string), so readers see no difference.
type coded struct {
	src   []string // the caller's dictionary
	dict  []string // src as valid UTF-8 (src itself unless an entry was not); konst: dict[0] for every row
	sums  []string // per entry of dict replaced: its original's digest (only for a table with Originals), else nil
	name  string   // the column's name, for sums
	orig  *originals
	konst bool
	list  bool
	idx   []int32 // values: indices into dict, -1 for a null value
	offs  []int32 // list: offsets into idx, one per row plus the start
	null  []bool  // list: null rows, nil until the first
	nulls int     // null values (non-list) or rows (list)
	hint  int     // the last row group's values: idx's capacity when it is next needed
	width int     // list: the mean length of dict's strings, for the row group's byte budget
}

// room makes room in idx for n more values. After reset, idx is allocated
// again at the last group's size only when a value comes: a writer whose
// table is done keeps no empty buffers until its file is closed.
func (c *coded) room(n int) {
	if c.idx == nil && c.hint > 0 {
		c.idx = make([]int32, 0, max(c.hint, n))
		return
	}
	c.idx = grow(c.idx, n)
}

// rows is the number of rows the column holds (-1: any, for a constant).
func (c *coded) rows() int {
	switch {
	case c.konst:
		return -1
	case c.list:
		return len(c.offs) - 1
	}
	return len(c.idx)
}

// reset empties the column for the next row group. The indices start a
// new slice (at the next value, room): the last group's array holds the
// old one (array remaps it in place) until its row group is written,
// which the Writer does beside the next group's rows.
func (c *coded) reset() {
	c.hint = max(c.hint, cap(c.idx))
	c.idx, c.nulls, c.null = nil, 0, c.null[:0]
	if c.list {
		c.offs = append(c.offs[:0], 0)
	}
}

// same reports whether c already codes a column with dict in this mode.
func (c *coded) same(dict []string, konst, list bool) bool {
	return c != nil && c.konst == konst && c.list == list && len(c.src) == len(dict) &&
		(len(dict) == 0 || unsafe.SliceData(c.src) == unsafe.SliceData(dict) || (konst && c.src[0] == dict[0]))
}

var (
	dictOfStrings  = &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
	constOfStrings = &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.BinaryTypes.String}
)

// array builds the column's values for n rows: a dictionary array holding
// only the entries these rows use (a row group's dictionary page then stays
// as small as its rows allow), or a list of one.
//
// With plain set (a small file, written without dictionary pages) the
// values are materialized as a plain string array instead.
func (c *coded) array(n int, plain bool) (arrow.Array, error) {
	mem := memory.DefaultAllocator
	if plain {
		return c.dense(n)
	}
	if c.konst {
		// One-byte indices, all zero (a quarter of the memory of 32-bit
		// ones for a column that says the same thing on every row).
		db := array.NewStringBuilder(mem)
		defer db.Release()
		db.Append(c.dict[0])
		dict := db.NewArray()
		defer dict.Release()
		data := array.NewData(arrow.PrimitiveTypes.Int8, n, []*memory.Buffer{nil, memory.NewBufferBytes(make([]byte, n))}, nil, 0, 0)
		defer data.Release()
		indices := array.MakeFromData(data)
		defer indices.Release()
		return array.NewDictionaryArray(constOfStrings, indices, dict), nil
	}
	idx, nulls := c.idx, c.nulls
	if c.list {
		nulls = 0 // list entries are never null; rows may be
	}
	used := make([]int32, len(c.dict))
	for i := range used {
		used[i] = -1
	}
	out := idx // remapped in place: the column is reset after this
	var valid []byte
	if nulls > 0 {
		valid = make([]byte, bitutil.BytesForBits(int64(len(idx))))
	}
	var sub []string
	for i, v := range idx {
		if v < 0 && !c.list {
			out[i] = 0 // null: the value is ignored
			continue
		}
		if v < 0 || int(v) >= len(c.dict) {
			return nil, fmt.Errorf("dictionary index %d out of range (dictionary of %d)", v, len(c.dict))
		}
		if used[v] < 0 {
			used[v] = int32(len(sub))
			sub = append(sub, c.dict[v])
		}
		out[i] = used[v]
		if valid != nil {
			bitutil.SetBit(valid, i)
		}
	}
	db := array.NewStringBuilder(mem)
	defer db.Release()
	size := 0
	for _, s := range sub {
		size += len(s)
	}
	db.Reserve(len(sub))
	db.ReserveData(size)
	for _, s := range sub {
		db.Append(s)
	}
	dict := db.NewArray()
	defer dict.Release()
	var vb *memory.Buffer
	if valid != nil {
		vb = memory.NewBufferBytes(valid)
	}
	data := array.NewData(arrow.PrimitiveTypes.Int32, len(out),
		[]*memory.Buffer{vb, memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(out))}, nil, nulls, 0)
	defer data.Release()
	indices := array.MakeFromData(data)
	defer indices.Release()
	values := array.NewDictionaryArray(dictOfStrings, indices, dict)
	if !c.list {
		return values, nil
	}
	defer values.Release()
	var lv *memory.Buffer
	if c.nulls > 0 {
		b := make([]byte, bitutil.BytesForBits(int64(n)))
		for r := range n {
			if r >= len(c.null) || !c.null[r] {
				bitutil.SetBit(b, r)
			}
		}
		lv = memory.NewBufferBytes(b)
	}
	offs := append([]int32(nil), c.offs...)
	ld := array.NewData(arrow.ListOf(dictOfStrings), n,
		[]*memory.Buffer{lv, memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(offs))},
		[]arrow.ArrayData{values.Data()}, c.nulls, 0)
	defer ld.Release()
	return array.MakeFromData(ld), nil
}

// sparseMin is the fewest values on which sparse judges a column: a small
// table's dictionary costs nothing worth deciding over. A first row group
// with fewer, but at least sparseFew, values is judged all the same when
// its dictionary has sparseDict entries or more: the producer's file is
// then large, and its first group may be short by design (a
// 10^6-location profile's frame_measurements start with the top ranks of
// each metric; with dictionary pages, arrow-go hashed every id of each
// later group into its memo table, and the file came out larger;
// docs/performance.md).
const (
	sparseMin  = 4096
	sparseFew  = 256
	sparseDict = 1 << 18
)

// sparse reports whether the rows so far use more than a quarter as many
// distinct entries as they hold values. A value repeated a few times (a
// frame's rows, one per metric) costs a plain page little once zstd has
// seen it, but a dictionary costs arrow-go a hash of every distinct value
// per row group. Lists are never sparse: a stack's frames are shared with
// other stacks or repeated on its next rows (its other sample types,
// stackRows), and a dictionary holds each once where plain pages held
// every copy (a deep profile's stacks, written type after type, came out
// at 67 MB plain against 38 MB; docs/performance.md).
func (c *coded) sparse() bool {
	if c.konst || c.list || len(c.idx) < sparseFew || len(c.idx) < sparseMin && len(c.dict) < sparseDict {
		return false
	}
	seen := make([]uint64, (len(c.dict)+63)/64)
	distinct := 0
	for _, v := range c.idx {
		if v < 0 || int(v) >= len(c.dict) {
			continue
		}
		if w, bit := v/64, uint64(1)<<(v%64); seen[w]&bit == 0 {
			seen[w] |= bit
			distinct++
		}
	}
	return 4*distinct > len(c.idx)
}

// dense returns the column's n rows as plain strings (list<string> for a
// list column).
func (c *coded) dense(n int) (arrow.Array, error) {
	mem := memory.DefaultAllocator
	b := array.NewStringBuilder(mem)
	defer b.Release()
	if !c.list && !c.konst {
		size := 0
		for _, v := range c.idx {
			if v >= 0 && int(v) < len(c.dict) {
				size += len(c.dict[v])
			}
		}
		b.Reserve(len(c.idx))
		b.ReserveData(size)
	}
	value := func(v int32) error {
		if v < 0 || int(v) >= len(c.dict) {
			return fmt.Errorf("dictionary index %d out of range (dictionary of %d)", v, len(c.dict))
		}
		b.Append(c.dict[v])
		return nil
	}
	switch {
	case c.konst:
		for range n {
			b.Append(c.dict[0])
		}
	case c.list:
		lb := array.NewListBuilder(mem, arrow.BinaryTypes.String)
		defer lb.Release()
		vb := lb.ValueBuilder().(*array.StringBuilder)
		for r := range n {
			if r < len(c.null) && c.null[r] {
				lb.AppendNull()
				continue
			}
			lb.Append(true)
			for _, v := range c.idx[c.offs[r]:c.offs[r+1]] {
				if v < 0 || int(v) >= len(c.dict) {
					return nil, fmt.Errorf("dictionary index %d out of range (dictionary of %d)", v, len(c.dict))
				}
				vb.Append(c.dict[v])
			}
		}
		return lb.NewArray(), nil
	default:
		for _, v := range c.idx {
			if v < 0 {
				b.AppendNull()
				continue
			}
			if err := value(v); err != nil {
				return nil, err
			}
		}
	}
	return b.NewArray(), nil
}

// DictStringCol appends to a string column by index into a dictionary the
// caller holds (see Writer.DictStringCol).
type DictStringCol struct{ c *coded }

// Append appends dict[i].
func (c DictStringCol) Append(i int) {
	if c.c.sums != nil && i >= 0 && i < len(c.c.sums) && c.c.sums[i] != "" {
		c.c.orig.names, c.c.orig.sums = append(c.c.orig.names, c.c.name), append(c.c.orig.sums, c.c.sums[i])
	}
	c.c.room(1)
	c.c.idx = append(c.c.idx, int32(i))
}

// AppendNull appends a null.
func (c DictStringCol) AppendNull() {
	c.c.room(1)
	c.c.idx = append(c.c.idx, -1)
	c.c.nulls++
}

// grow makes room for n more elements, doubling the capacity when it must
// grow (append's small steps for large slices allocate several times the
// final size of a large column; docs/performance.md).
func grow[T any](s []T, n int) []T {
	if len(s)+n <= cap(s) {
		return s
	}
	return slices.Grow(s, max(n, cap(s)))
}

// DictStringListCol appends to a list<string> column by indices into a
// dictionary the caller holds (see Writer.DictStringListCol).
type DictStringListCol struct{ c *coded }

// Append appends the list dict[is[0]], dict[is[1]], ...; empty is an empty
// list, not null.
func (c DictStringListCol) Append(is []int32) {
	c.c.room(len(is))
	c.c.idx = append(c.c.idx, is...)
	c.c.offs = append(grow(c.c.offs, 1), int32(len(c.c.idx)))
}

// AppendNull appends a null list.
func (c DictStringListCol) AppendNull() {
	r := len(c.c.offs) - 1
	for len(c.c.null) < r {
		c.c.null = append(c.c.null, false)
	}
	c.c.null = append(c.c.null, true)
	c.c.nulls++
	c.c.offs = append(c.c.offs, int32(len(c.c.idx)))
}

// DictStringCol returns a handle that appends to the string column name by
// index into dict, which the caller must not change while the handle is in
// use. Rows already ended with other values of the column are written as a
// row group first.
func (w *Writer) DictStringCol(name string, dict []string) DictStringCol {
	return DictStringCol{w.code(name, tStr, dict, false, false)}
}

// DictStringListCol is DictStringCol for a list<string> column.
func (w *Writer) DictStringListCol(name string, dict []string) DictStringListCol {
	return DictStringListCol{w.code(name, tStrList, dict, false, true)}
}

// SetString gives the string column name the value v in every row ended
// from now on, until it is set again or the column is appended to through
// another handle. Rows already ended with other values of the column are
// written as a row group first. v is never null.
func (w *Writer) SetString(name, v string) {
	w.code(name, tStr, []string{v}, true, false)
}

// code makes column name coded; it flushes rows pending with other values.
func (w *Writer) code(name string, typ arrow.DataType, dict []string, konst, list bool) *coded {
	i := w.column(name, typ)
	if c := w.coded[i]; c.same(dict, konst, list) {
		return c
	}
	if w.pending > 0 {
		_ = w.flush() // a failure is sticky in w.err
	}
	c := &coded{src: dict, konst: konst, list: list, name: name, orig: &w.orig}
	if list && len(dict) > 0 {
		size := 0
		for _, s := range dict {
			size += len(s)
		}
		c.width = max(1, size/len(dict))
	}
	// Invalid UTF-8 is replaced once per dictionary, not per row; the
	// digests of list entries are not recorded (see utf8.go).
	c.dict, c.sums = cleanDict(dict, w.orig.col >= 0 && !list)
	if konst && c.sums != nil {
		w.orig.konst = true
	}
	if list {
		c.offs = []int32{0}
	}
	w.coded[i] = c
	return c
}

// uncode returns column i to its builder, flushing rows that were coded.
func (w *Writer) uncode(i int) {
	if i < NumCommon || w.coded[i] == nil {
		return
	}
	if w.pending > 0 {
		_ = w.flush()
	}
	w.coded[i] = nil
}
