package fleet_test

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/flameox/flameox/pkg/evidence/schema"
)

// TestTrinoDDLMatchesTheSchema keeps docs/fleet.md's Hive connector tables
// true: every column of the table, in order, then the partition columns.
func TestTrinoDDLMatchesTheSchema(t *testing.T) {
	b, err := os.ReadFile("../../docs/fleet.md")
	if err != nil {
		t.Fatal(err)
	}
	ddl := regexp.MustCompile(`(?s)CREATE TABLE hive\.flameox\.([a-z_]+) \((.*?)\n\)`)
	typeArgs := regexp.MustCompile(`\([^()]*\)`) // map(varchar, varchar), decimal(20, 0)
	found := 0
	for _, m := range ddl.FindAllStringSubmatch(string(b), -1) {
		found++
		table, ok := schema.Lookup(m[1])
		if !ok {
			t.Errorf("docs/fleet.md declares unknown table %s", m[1])
			continue
		}
		var got []string
		for _, col := range strings.Split(typeArgs.ReplaceAllString(m[2], ""), ",") {
			if f := strings.Fields(col); len(f) > 0 {
				got = append(got, f[0])
			}
		}
		var want []string
		for _, c := range table.Columns {
			want = append(want, c.Name)
		}
		want = append(want, "workspace_id", "date")
		if !slices.Equal(got, want) {
			t.Errorf("docs/fleet.md %s columns\n%v\nthe schema's\n%v", m[1], got, want)
		}
	}
	if found < 2 {
		t.Errorf("docs/fleet.md declares %d Hive tables, want runs and measurements", found)
	}
}
