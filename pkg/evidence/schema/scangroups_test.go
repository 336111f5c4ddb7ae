package schema

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
)

// TestScanGroupsMatchesScan reads files of every table back with
// ScanGroups and with Scan, column for column: dictionary-encoded string
// chunks are read as dictionaries by ScanGroups, and the values must not
// change. The cases cover many row groups, a small file (written without
// dictionaries), a dictionary that overflows its page limit and falls
// back to plain pages within a chunk, and a pruned scan.
func TestScanGroupsMatchesScan(t *testing.T) {
	// One dictionary column's distinct values of 1,000 bytes: a row group
	// ends at 4 MiB of strings, its dictionary page is full at 1 MiB, and
	// the rest of the chunk falls back to plain pages.
	big := strings.Repeat("x", 1000)
	firstDict := func(tb *Table, c Column) bool {
		for _, d := range tb.Columns {
			if d.Dict && d.Type.ID() == arrow.STRING {
				return d.Name == c.Name
			}
		}
		return false
	}
	for _, tc := range []struct {
		name      string
		rows, per int
		value     func(tb *Table, c Column, r int) any
	}{
		{"groups", 300, 7, func(_ *Table, c Column, r int) any { return sample(c, r) }},
		{"small", 5, 0, func(_ *Table, c Column, r int) any { return sample(c, r) }},
		{"dictionary-overflow", 6000, 0, func(tb *Table, c Column, r int) any {
			if v, ok := sample(c, r).(string); ok && firstDict(tb, c) {
				return v + big
			}
			return sample(c, r)
		}},
	} {
		for _, tb := range Tables() {
			t.Run(tc.name+"/"+tb.Name, func(t *testing.T) {
				f := create(t, tb.Name+".parquet")
				w, err := NewWriter(tb, f, Options{Common: testCommon, RowGroupRows: tc.per})
				if err != nil {
					t.Fatal(err)
				}
				for r := range tc.rows {
					vals := make([]any, 0, len(tb.Columns))
					for _, c := range tb.Columns[NumCommon:] {
						vals = append(vals, tc.value(tb, c, r))
					}
					if err := w.AppendRow(vals); err != nil {
						t.Fatal(err)
					}
				}
				if _, err := w.Close(); err != nil {
					t.Fatal(err)
				}
				var cols []string // Scan's: the flat columns
				for _, c := range tb.Columns {
					if id := c.Type.ID(); id != arrow.LIST && id != arrow.MAP {
						cols = append(cols, c.Name)
					}
				}
				read := func(scan func(fn func([]any) error) error) []string {
					var rows []string
					if err := scan(func(r []any) error {
						rows = append(rows, fmt.Sprint(r...))
						return nil
					}); err != nil {
						t.Fatal(err)
					}
					return rows
				}
				want := read(func(fn func([]any) error) error { return Scan(context.Background(), tb, f.Name(), cols, fn) })
				got := read(func(fn func([]any) error) error {
					return ScanGroups(context.Background(), tb, f.Name(), cols, nil, fn)
				})
				if len(got) != tc.rows || len(want) != tc.rows {
					t.Fatalf("ScanGroups read %d rows, Scan %d, want %d", len(got), len(want), tc.rows)
				}
				for r := range want {
					if got[r] != want[r] {
						t.Fatalf("row %d:\nScanGroups %s\nScan       %s", r, got[r], want[r])
					}
				}
				// Pruned: the row groups after the first.
				skipped, n := int64(-1), 0
				if err := ScanGroups(context.Background(), tb, f.Name(), cols, func(g Group) bool {
					if skipped < 0 {
						skipped = g.NumRows()
						return false
					}
					return true
				}, func(r []any) error {
					if at := int(skipped) + n; fmt.Sprint(r...) != want[at] {
						t.Fatalf("pruned scan, row %d: %s, want %s", at, fmt.Sprint(r...), want[at])
					}
					n++
					return nil
				}); err != nil {
					t.Fatal(err)
				}
				if int64(n) != int64(tc.rows)-skipped {
					t.Errorf("pruned scan read %d rows, want %d", n, int64(tc.rows)-skipped)
				}
			})
		}
	}
}
