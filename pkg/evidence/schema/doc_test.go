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
