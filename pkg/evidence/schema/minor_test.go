package schema

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/flameox/flameox/pkg/evidence/schema/schematest"
)

// TestOlderMinor writes a file as an older flameox did (frames@1.0,
// without frame_index), and checks that it validates against the current
// table and that compaction's Copy carries it into the current schema with
// the later column null.
func TestOlderMinor(t *testing.T) {
	old := Frames.At(0)
	if old == nil || old.Minor != 0 || len(old.Columns) != len(Frames.Columns)-2 || old.Index("frame_index") >= 0 || old.Index("invalid_utf8") >= 0 {
		t.Fatalf("Frames.At(0) = %+v", old)
	}
	if Frames.At(Frames.Minor) != Frames || Frames.At(-1) != nil || Frames.At(Frames.Minor+1) != nil {
		t.Fatal("At outside the older minors")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "old.parquet")
	var buf bytes.Buffer
	w, err := NewWriter(old, &buf, Options{Common: testCommon})
	if err != nil {
		t.Fatal(err)
	}
	for row := range 5 {
		vals := make([]any, 0, len(old.Columns)-NumCommon)
		for _, c := range old.Columns[NumCommon:] {
			vals = append(vals, sample(c, row))
		}
		if err := w.AppendRow(vals); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(src, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	f := schematest.Read(t, src)
	if err := Frames.Validate(f.Schema); err != nil {
		t.Fatalf("a frames@1.0 file does not validate as frames: %v", err)
	}
	if err := Validate(f.Schema); err != nil {
		t.Fatalf("package Validate: %v", err)
	}
	// The current minor's files must still have every column.
	if err := Frames.At(0).Validate(schematest.Read(t, writeCurrent(t, dir)).Schema); err == nil {
		t.Fatal("a current frames file validates as frames@1.0")
	}

	out := filepath.Join(dir, "copy.parquet")
	of, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	n, err := Copy(context.Background(), Frames, of, []string{src})
	of.Close()
	if err != nil || n != 5 {
		t.Fatalf("Copy: %d rows, %v", n, err)
	}
	got := schematest.Read(t, out)
	if err := Frames.Validate(got.Schema); err != nil {
		t.Fatal(err)
	}
	if v, _ := got.Schema.Metadata().GetValue(MetaMinor); v != strconv.Itoa(Frames.Minor) {
		t.Fatalf("copied file has minor %q", v)
	}
	for i, m := range got.Maps() {
		if m["frame_index"] != nil || m["invalid_utf8"] != nil {
			t.Fatalf("row %d: frame_index %v, invalid_utf8 %v, want null", i, m["frame_index"], m["invalid_utf8"])
		}
		if m["frame_id"] != sample(Frames.Columns[Frames.Index("frame_id")], i) {
			t.Fatalf("row %d: frame_id %v", i, m["frame_id"])
		}
	}
}

// writeCurrent writes one frames row at the current minor.
func writeCurrent(t *testing.T, dir string) string {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(Frames, &buf, Options{Common: testCommon})
	if err != nil {
		t.Fatal(err)
	}
	vals := make([]any, 0, len(Frames.Columns)-NumCommon)
	for _, c := range Frames.Columns[NumCommon:] {
		vals = append(vals, sample(c, 0))
	}
	if err := w.AppendRow(vals); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "current.parquet")
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestCopyKeepsRowGroups: sources of one row group share the segment's row
// groups; a source of several keeps its boundaries (the profile
// extractor's small first row group of top ranks survives compaction).
func TestCopyKeepsRowGroups(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, groups ...int) string {
		var buf bytes.Buffer
		w, err := NewWriter(Frames, &buf, Options{Common: testCommon})
		if err != nil {
			t.Fatal(err)
		}
		row := 0
		for gi, n := range groups {
			for range n {
				vals := make([]any, 0, len(Frames.Columns)-NumCommon)
				for _, c := range Frames.Columns[NumCommon:] {
					vals = append(vals, sample(c, row))
				}
				if err := w.AppendRow(vals); err != nil {
					t.Fatal(err)
				}
				row++
			}
			if gi < len(groups)-1 {
				if err := w.Flush(); err != nil {
					t.Fatal(err)
				}
			}
		}
		if _, err := w.Close(); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	srcs := []string{write("a", 3), write("b", 4, 5, 6), write("c", 2), write("d", 1)}
	out := filepath.Join(dir, "segment.parquet")
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	n, err := Copy(context.Background(), Frames, f, srcs)
	f.Close()
	if err != nil || n != 21 {
		t.Fatalf("Copy: %d rows, %v", n, err)
	}
	pf, err := file.OpenParquetFile(out, false)
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	var got []int64
	for g := range pf.NumRowGroups() {
		got = append(got, pf.MetaData().RowGroup(g).NumRows())
	}
	if want := []int64{3, 4, 5, 6 + 2 + 1}; !slices.Equal(got, want) {
		t.Fatalf("row groups %v, want %v", got, want)
	}
}
