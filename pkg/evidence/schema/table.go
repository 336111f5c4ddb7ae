package schema

import (
	"fmt"
	"strconv"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
)

// Schema metadata keys stored in every evidence file's Arrow schema.
const (
	MetaTable = "flameox.table"
	MetaMajor = "flameox.schema.major"
	MetaMinor = "flameox.schema.minor"
)

// The Arrow types evidence columns may use. Nothing else is allowed: in
// particular no arrow.Duration (pqarrow cannot write it) and no timestamp
// other than microseconds in UTC.
var (
	tStr     arrow.DataType = arrow.BinaryTypes.String
	tI32     arrow.DataType = arrow.PrimitiveTypes.Int32
	tI64     arrow.DataType = arrow.PrimitiveTypes.Int64
	tU64     arrow.DataType = arrow.PrimitiveTypes.Uint64
	tF64     arrow.DataType = arrow.PrimitiveTypes.Float64
	tBool    arrow.DataType = arrow.FixedWidthTypes.Boolean
	tTime    arrow.DataType = arrow.FixedWidthTypes.Timestamp_us // timestamp[us, UTC]
	tStrList arrow.DataType = arrow.ListOf(arrow.BinaryTypes.String)
	tStrMap  arrow.DataType = arrow.MapOf(arrow.BinaryTypes.String, arrow.BinaryTypes.String)
)

// Column describes one evidence column.
type Column struct {
	Name     string
	Type     arrow.DataType
	Nullable bool
	Unit     string // unit of the values ("ns", "bytes", "count"), or ""
	Doc      string // meaning, one line
	Dict     bool   // low-cardinality string: dictionary-encode it in Parquet
	// Digest: the values are digests (frame and stack ids), whose min/max
	// statistics never let a reader skip a row group; none are written.
	Digest bool
	// Text: free text read from an artifact (function names), which no
	// query filters by range. Its min/max statistics would never let a
	// reader skip a row group, and the writer would copy one huge hostile
	// name into every page's statistics; none are written.
	Text bool
	// Originals: the Writer fills this map<string,string> column with,
	// for each string column of the row whose value was not valid UTF-8
	// and was stored with U+FFFD replacements, the column name and
	// "sha256:<hex>" of the original bytes (null when none was); see
	// utf8.go. At most one column of a table.
	Originals bool
	// Since is the minor version of its table that added the column (0:
	// the major version's first). Minor versions only append optional
	// columns, so a file of an older minor reads as the current table with
	// the later columns null (Table.At).
	Since int
}

// TypeName is the short type name used in docs/tables.md, e.g. "int64",
// "timestamp[us, UTC]", "list<string>".
func (c Column) TypeName() string { return typeName(c.Type) }

func typeName(t arrow.DataType) string {
	switch t := t.(type) {
	case *arrow.StringType:
		return "string"
	case *arrow.BooleanType:
		return "bool"
	case *arrow.TimestampType:
		return "timestamp[" + t.Unit.String() + ", " + t.TimeZone + "]"
	case *arrow.MapType:
		return "map<" + typeName(t.KeyType()) + "," + typeName(t.ItemType()) + ">"
	case *arrow.ListType:
		return "list<" + typeName(t.Elem()) + ">"
	}
	return t.String()
}

// req and opt declare a required (non-null) or optional column.
func req(name string, t arrow.DataType, doc string) Column {
	return Column{Name: name, Type: t, Doc: doc}
}

func opt(name string, t arrow.DataType, doc string) Column {
	return Column{Name: name, Type: t, Nullable: true, Doc: doc}
}

// dict marks a low-cardinality string column; unit sets the value unit.
func (c Column) dict() Column         { c.Dict = true; return c }
func (c Column) digest() Column       { c.Digest = true; return c }
func (c Column) text() Column         { c.Text = true; return c }
func (c Column) unit(u string) Column { c.Unit = u; return c }
func (c Column) ns() Column           { return c.unit("ns") }
func (c Column) bytes() Column        { return c.unit("bytes") }
func (c Column) count() Column        { return c.unit("count") }
func (c Column) since(m int) Column   { c.Since = m; return c }
func (c Column) originals() Column    { c.Originals = true; return c }

// NumCommon is the number of publication columns every table starts with.
const NumCommon = 5

// commonColumns returns the publication columns, filled by the Writer.
func commonColumns() []Column {
	return []Column{
		req("schema_version", tI32, "major schema version of this table"),
		req("evidence_generation_id", tStr, "generation that published this row"),
		req("published_at", tTime, "when the generation was published"),
		req("extractor_name", tStr, "publisher or extractor that produced the row"),
		req("extractor_version", tStr, "its version"),
	}
}

// Table is one versioned evidence table. Tables are package-level values
// (Runs, Measurements, ...); treat them as read-only.
type Table struct {
	Name    string
	Major   int
	Minor   int
	Doc     string
	Columns []Column // publication columns first

	once   sync.Once
	schema *arrow.Schema
	index  map[string]int
}

func newTable(name string, major, minor int, doc string, cols ...Column) *Table {
	return &Table{Name: name, Major: major, Minor: minor, Doc: doc,
		Columns: append(commonColumns(), cols...)}
}

// At returns the table as minor version m of its major had it: the
// columns added up to m. It returns nil unless 0 <= m <= t.Minor. Files
// an older flameox published carry an older minor; readers accept them
// (their later columns read as null), and tests write them with At.
func (t *Table) At(m int) *Table {
	if m < 0 || m > t.Minor {
		return nil
	}
	if m == t.Minor {
		return t
	}
	old := &Table{Name: t.Name, Major: t.Major, Minor: m, Doc: t.Doc}
	for _, c := range t.Columns {
		if c.Since <= m {
			old.Columns = append(old.Columns, c)
		}
	}
	return old
}

// ID names the table and its version, e.g. "runs@1.0"; generation manifests
// record it next to each file.
func (t *Table) ID() string { return fmt.Sprintf("%s@%d.%d", t.Name, t.Major, t.Minor) }

func (t *Table) build() {
	t.once.Do(func() {
		fields := make([]arrow.Field, len(t.Columns))
		t.index = make(map[string]int, len(t.Columns))
		for i, c := range t.Columns {
			fields[i] = arrow.Field{Name: c.Name, Type: c.Type, Nullable: c.Nullable}
			t.index[c.Name] = i
		}
		md := arrow.NewMetadata(
			[]string{MetaTable, MetaMajor, MetaMinor},
			[]string{t.Name, strconv.Itoa(t.Major), strconv.Itoa(t.Minor)})
		t.schema = arrow.NewSchema(fields, &md)
	})
}

// Schema returns the table's Arrow schema with its flameox metadata. It is
// built once and shared; do not modify it.
func (t *Table) Schema() *arrow.Schema { t.build(); return t.schema }

// Index returns the position of the named column, or -1.
func (t *Table) Index(name string) int {
	t.build()
	if i, ok := t.index[name]; ok {
		return i
	}
	return -1
}

// Tables returns every evidence table in a stable order.
func Tables() []*Table { return append([]*Table(nil), all...) }

var byName = func() map[string]*Table {
	m := make(map[string]*Table, len(all))
	for _, t := range all {
		m[t.Name] = t
	}
	return m
}()

// Lookup finds a table by name.
func Lookup(name string) (*Table, bool) {
	t, ok := byName[name]
	return t, ok
}

var all = []*Table{
	Runs, Artifacts, Environments, SourceStates,
	Measurements, Frames, FrameMeasurements, CallEdges, Stacks, Observations,
	Investigations, Hypotheses, Experiments, Variants, Trials, RunSets,
	Analyses, EvidenceRefs, Comparisons, Findings,
}
