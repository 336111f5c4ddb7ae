package schema

import (
	"io"
	"testing"
)

// BenchmarkSmallFiles writes what a one-run publication stages: a runs
// row and five measurement rows, each table a small file written in one
// go (the capture path; docs/performance.md).
func BenchmarkSmallFiles(b *testing.B) {
	rows := func(tb *Table, n int) [][]any {
		out := make([][]any, n)
		for r := range n {
			for _, c := range tb.Columns[NumCommon:] {
				out[r] = append(out[r], sample(c, r))
			}
		}
		return out
	}
	runs, meas := rows(Runs, 1), rows(Measurements, 5)
	b.ReportAllocs()
	for b.Loop() {
		for _, t := range []struct {
			tb   *Table
			rows [][]any
		}{{Runs, runs}, {Measurements, meas}} {
			w, err := NewWriter(t.tb, io.Discard, Options{Common: testCommon})
			if err != nil {
				b.Fatal(err)
			}
			for _, r := range t.rows {
				if err := w.AppendRow(r); err != nil {
					b.Fatal(err)
				}
			}
			if _, err := w.Close(); err != nil {
				b.Fatal(err)
			}
		}
	}
}
