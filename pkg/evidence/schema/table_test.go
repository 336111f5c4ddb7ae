package schema

import (
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
)

var wantTables = []string{
	"runs", "artifacts", "environments", "source_states", "measurements",
	"frames", "frame_measurements", "call_edges", "stacks", "observations",
	"investigations", "hypotheses", "experiments", "variants", "trials",
	"run_sets", "analyses", "evidence_refs", "comparisons", "findings",
}

func TestTableList(t *testing.T) {
	var got []string
	for _, tb := range Tables() {
		got = append(got, tb.Name)
		if l, ok := Lookup(tb.Name); !ok || l != tb {
			t.Errorf("Lookup(%q) = %v, %v", tb.Name, l, ok)
		}
	}
	if strings.Join(got, " ") != strings.Join(wantTables, " ") {
		t.Errorf("Tables() = %v\nwant %v", got, wantTables)
	}
	if _, ok := Lookup("artifact_registrations"); ok {
		t.Error("Lookup of an unknown table succeeded")
	}
	if id := Runs.ID(); id != "runs@1.2" {
		t.Errorf("Runs.ID() = %q", id)
	}
}

func TestTableRules(t *testing.T) {
	common := commonColumns()
	for _, tb := range Tables() {
		if tb.Doc == "" || tb.Major < 1 || tb.Minor < 0 {
			t.Errorf("%s: missing doc or bad version %d.%d", tb.Name, tb.Major, tb.Minor)
		}
		s := tb.Schema()
		if s != tb.Schema() {
			t.Errorf("%s: Schema() is not cached", tb.Name)
		}
		md := s.Metadata()
		for k, want := range map[string]string{MetaTable: tb.Name,
			MetaMajor: strconv.Itoa(tb.Major), MetaMinor: strconv.Itoa(tb.Minor)} {
			if got, _ := md.GetValue(k); got != want {
				t.Errorf("%s: metadata %s = %q, want %q", tb.Name, k, got, want)
			}
		}
		if s.NumFields() != len(tb.Columns) {
			t.Errorf("%s: schema has %d fields for %d columns", tb.Name, s.NumFields(), len(tb.Columns))
		}
		seen := map[string]bool{}
		since := 0
		for i, c := range tb.Columns {
			// Minor versions append optional columns: Since never
			// decreases, never passes the table's minor, and a column
			// added after the first minor can be null.
			if c.Since < since || c.Since > tb.Minor || (c.Since > 0 && !c.Nullable) {
				t.Errorf("%s.%s: since %d breaks the minor-version rule (previous %d, table minor %d, nullable %t)",
					tb.Name, c.Name, c.Since, since, tb.Minor, c.Nullable)
			}
			since = c.Since
			if i < NumCommon && (c.Name != common[i].Name || !arrow.TypeEqual(c.Type, common[i].Type) || c.Nullable) {
				t.Errorf("%s: column %d is %s, want publication column %s", tb.Name, i, c.Name, common[i].Name)
			}
			if seen[c.Name] {
				t.Errorf("%s: duplicate column %s", tb.Name, c.Name)
			}
			seen[c.Name] = true
			if c.Doc == "" {
				t.Errorf("%s.%s: no doc", tb.Name, c.Name)
			}
			if tb.Index(c.Name) != i {
				t.Errorf("%s.%s: Index = %d, want %d", tb.Name, c.Name, tb.Index(c.Name), i)
			}
			if c.Dict && c.Type.ID() != arrow.STRING {
				t.Errorf("%s.%s: dictionary on a non-string column", tb.Name, c.Name)
			}
			checkType(t, tb.Name+"."+c.Name, c.Type)
			switch {
			case strings.HasSuffix(c.Name, "_ns"):
				if c.Type.ID() != arrow.INT64 || c.Unit != "ns" {
					t.Errorf("%s.%s: durations are int64 with unit ns", tb.Name, c.Name)
				}
			case strings.HasSuffix(c.Name, "_bytes"):
				if (c.Type.ID() != arrow.INT64 && c.Type.ID() != arrow.UINT64) || c.Unit != "bytes" {
					t.Errorf("%s.%s: byte sizes are integers with unit bytes", tb.Name, c.Name)
				}
			case strings.HasSuffix(c.Name, "_at"):
				if c.Type.ID() != arrow.TIMESTAMP {
					t.Errorf("%s.%s: *_at columns are timestamps", tb.Name, c.Name)
				}
			}
		}
		if tb.Index("no_such_column") != -1 {
			t.Errorf("%s: Index of unknown column != -1", tb.Name)
		}
	}
}

// checkType rejects Duration anywhere and any timestamp but us+UTC.
func checkType(t *testing.T, where string, dt arrow.DataType) {
	t.Helper()
	switch dt := dt.(type) {
	case *arrow.DurationType:
		t.Errorf("%s: arrow.Duration is not allowed", where)
	case *arrow.TimestampType:
		if dt.Unit != arrow.Microsecond || dt.TimeZone != "UTC" {
			t.Errorf("%s: timestamp is %s, want timestamp[us, UTC]", where, dt)
		}
	case arrow.NestedType:
		for _, f := range dt.Fields() {
			checkType(t, where, f.Type)
		}
	}
}

func TestMeasurementsHierarchy(t *testing.T) {
	// The raw hierarchy and the hot filter keys must be plain columns.
	for _, name := range []string{"run_id", "worker_id", "worker_run_index", "value_index",
		"loop_count", "is_warmup", "block_id", "variant_id", "order_in_block", "phase", "unit", "name", "scope"} {
		i := Measurements.Index(name)
		if i < 0 {
			t.Errorf("measurements.%s missing", name)
			continue
		}
		if _, nested := Measurements.Columns[i].Type.(arrow.NestedType); nested {
			t.Errorf("measurements.%s is nested; hot keys must be plain", name)
		}
	}
	if c := Measurements.Columns[Measurements.Index("unit")]; c.Nullable {
		t.Error("measurements.unit must be non-null")
	}
}
