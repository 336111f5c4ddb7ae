package schema

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite docs/tables.md")

const tablesDoc = "../../../docs/tables.md"

// TestTablesDoc fails when docs/tables.md differs from the schemas in code;
// `go test ./pkg/evidence/schema -run TestTablesDoc -update` rewrites it.
func TestTablesDoc(t *testing.T) {
	want := renderTables()
	if *update {
		if err := os.WriteFile(tablesDoc, want, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := os.ReadFile(tablesDoc)
	if err != nil || !bytes.Equal(got, want) {
		t.Errorf("docs/tables.md is out of date (%v); run: go test ./pkg/evidence/schema -run TestTablesDoc -update", err)
	}
}

func renderTables() []byte {
	var b bytes.Buffer
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("# Evidence tables\n\n")
	p("<!-- Generated from pkg/evidence/schema by `go test ./pkg/evidence/schema -run TestTablesDoc -update`. Do not edit. -->\n\n")
	p("Evidence is published as immutable Parquet files under `evidence/<table>/generation=<id>/`.\n")
	p("Each file's Arrow schema carries the metadata `%s`, `%s` and `%s`;\n", MetaTable, MetaMajor, MetaMinor)
	p("readers reject files whose schema differs (EVIDENCE_SCHEMA_MISMATCH).\n")
	p("Timestamps are `timestamp[us, UTC]` (DuckDB TIMESTAMPTZ), durations are int64 nanoseconds\n")
	p("in `*_ns` columns, uint64 is DuckDB UBIGINT, `list<string>` is VARCHAR[].\n")
	p("\"dict\" marks low-cardinality strings written with dictionary encoding.\n")
	p("Rows are never edited: a re-extraction publishes a superseding generation.\n\n")
	p("Every string is valid UTF-8 (DuckDB reads no other). A string from an artifact that is not\n")
	p("(a pprof function name, a perf script symbol, a sample label) is stored with U+FFFD in place\n")
	p("of each invalid sequence, whatever the extractor: the writer replaces it. Where the original\n")
	p("matters, the table has a map column the writer fills (`frames.invalid_utf8`): for each string\n")
	p("column of the row that was replaced, the column name and `sha256:<hex>` of the original bytes;\n")
	p("null when every value was valid. Frame ids hash the original bytes, so two names that differ\n")
	p("only in invalid bytes stay two frames; `flameox evidence get frame FRAME_ID` shows the digests.\n")
	p("Elements of lists and keys and values of maps are replaced without a digest (a replaced map key\n")
	p("that would collide with another gets ` (sha256:<hex>)` appended).\n\n")
	p("Every table starts with these publication columns, filled by the writer:\n\n")
	columnTable(&b, commonColumns())
	p("\n| table | version | rows |\n|---|---|---|\n")
	for _, t := range Tables() {
		p("| [%s](#%s) | %d.%d | %s |\n", t.Name, t.Name, t.Major, t.Minor, t.Doc)
	}
	for _, t := range Tables() {
		p("\n## %s\n\n`%s`. %s Publication columns, then:\n\n", t.Name, t.ID(), t.Doc)
		columnTable(&b, t.Columns[NumCommon:])
	}
	return b.Bytes()
}

func columnTable(b *bytes.Buffer, cols []Column) {
	b.WriteString("| column | type | null | unit | meaning |\n|---|---|---|---|---|\n")
	for _, c := range cols {
		null := "not null"
		if c.Nullable {
			null = "null"
		}
		typ := c.TypeName()
		if c.Dict {
			typ += " (dict)"
		}
		fmt.Fprintf(b, "| `%s` | %s | %s | %s | %s |\n", c.Name, typ, null, c.Unit,
			strings.ReplaceAll(c.Doc, "|", "\\|"))
	}
}
