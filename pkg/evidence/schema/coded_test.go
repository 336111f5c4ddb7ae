package schema

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/flameox/flameox/pkg/evidence/schema/schematest"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
)

// Coded columns read back exactly like strings appended one by one: values,
// nulls, lists (empty and null), a constant, a dictionary switched between
// producers, and a column returned to its builder; and the file stores
// them as dictionary pages, each row group's holding only the entries its
// rows use.
func TestCodedColumns(t *testing.T) {
	tb := Stacks
	f := create(t, "coded.parquet")
	w, err := NewWriter(tb, f, Options{Common: testCommon})
	if err != nil {
		t.Fatal(err)
	}
	dictA := []string{"frame-a0", "frame-a1", "frame-a2", "frame-unused"}
	dictB := []string{"frame-b0", "frame-b1"}
	type row struct {
		leaf, thread any
		frames       any
		run          string
	}
	var want []row
	plain := func(r int) {
		// The remaining columns through AppendRow-free typed handles.
		w.StringCol("stack_id").Append("s")
		w.StringCol("artifact_id").Append("art")
		w.Int64Col("start_ns").Append(0)
		w.Int64Col("duration_ns").Append(int64(r))
		w.Uint64Col("track_id").Append(0)
		w.StringCol("metric").Append("cpu")
		w.StringCol("unit").Append("nanoseconds")
		w.Int64Col("value").Append(int64(r))
		w.Uint64Col("sample_count").Append(1)
		w.StringCol("process").AppendNull()
		if err := w.EndRow(); err != nil {
			t.Fatal(err)
		}
	}
	// Producer A: coded leaf, coded lists, constant run id.
	w.SetString("run_id", "run-A")
	leaf, frames := w.DictStringCol("leaf_frame_id", dictA), w.DictStringListCol("frame_ids", dictA)
	thread := w.DictStringCol("thread", dictA)
	for r, is := range [][]int32{{0, 1, 2}, {}, {2, 2, 0}} {
		fs := []string{}
		for _, i := range is {
			fs = append(fs, dictA[i])
		}
		leaf.Append(r)
		frames.Append(is)
		var th any
		if r == 1 {
			thread.AppendNull()
		} else {
			thread.Append(0)
			th = dictA[0]
		}
		want = append(want, row{dictA[r], th, fs, "run-A"})
		plain(r)
	}
	// Producer B: another dictionary and run id flush A's rows first.
	w.SetString("run_id", "run-B")
	leaf, frames = w.DictStringCol("leaf_frame_id", dictB), w.DictStringListCol("frame_ids", dictB)
	w.DictStringCol("thread", dictB).Append(0)
	leaf.Append(1)
	frames.Append([]int32{0, 1})
	want = append(want, row{"frame-b1", "frame-b0", []string{"frame-b0", "frame-b1"}, "run-B"})
	plain(4)
	// Producer C: plain strings again.
	w.StringCol("run_id").Append("run-C")
	w.StringCol("leaf_frame_id").Append("frame-c")
	w.StringListCol("frame_ids").Append([]string{"frame-c"})
	w.StringCol("thread").AppendNull()
	want = append(want, row{"frame-c", nil, []string{"frame-c"}, "run-C"})
	plain(5)
	if n, err := w.Close(); n != 5 || err != nil {
		t.Fatalf("Close() = %d, %v", n, err)
	}
	rf := readBack2(t, f.Name())
	if rf.rows != 5 || rf.groups != 3 {
		t.Fatalf("%d rows in %d row groups, want 5 in 3", rf.rows, rf.groups)
	}
	for r, m := range rf.maps {
		got := row{m["leaf_frame_id"], m["thread"], m["frame_ids"], m["run_id"].(string)}
		if !reflect.DeepEqual(got, want[r]) {
			t.Errorf("row %d: got %#v, want %#v", r, got, want[r])
		}
		if m["evidence_generation_id"] != testCommon.GenerationID || m["extractor_name"] != testCommon.ExtractorName {
			t.Errorf("row %d: publication columns %v, %v", r, m["evidence_generation_id"], m["extractor_name"])
		}
	}
	pf, err := file.OpenParquetFile(f.Name(), false)
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	for _, col := range []string{"leaf_frame_id", "frame_ids", "run_id", "evidence_generation_id"} {
		cc, err := pf.MetaData().RowGroup(0).ColumnChunk(tb.Index(col))
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(cc.Encodings(), parquet.Encodings.RLEDict) {
			t.Errorf("%s: encodings %v, want a dictionary", col, cc.Encodings())
		}
	}
}

// TestCodedSparsePlain checks the dictionary decision for a coded column:
// one whose first row group holds mostly distinct values (a deep
// profile's call edges) is written as plain strings in every group, one
// that repeats its values gets dictionary pages, and both read back the
// same. A first group under sparseMin values is judged only when its
// dictionary has sparseDict entries or more (a 10^6-location profile's
// frame_measurements, whose first group is its 1,024 top ranks).
func TestCodedSparsePlain(t *testing.T) {
	for _, c := range []struct {
		name         string
		group, ndict int
		childDict    bool
	}{
		{"first group of 5000", 5000, 15000, false},
		{"first group of 2048, small dictionary", 2048, 15000, true},
		{"first group of 2048, large dictionary", 2048, sparseDict, false},
	} {
		t.Run(c.name, func(t *testing.T) { checkSparse(t, c.group, c.ndict, c.childDict) })
	}
}

func checkSparse(t *testing.T, group, ndict int, childDict bool) {
	tb := CallEdges
	rows := 3 * group
	ids := make([]string, ndict)
	for i := range ids {
		ids[i] = fmt.Sprintf("sha256:%064d", i)
	}
	f := create(t, "edges.parquet")
	w, err := NewWriter(tb, f, Options{Common: testCommon, RowGroupRows: group})
	if err != nil {
		t.Fatal(err)
	}
	w.SetString("run_id", "run")
	w.SetString("artifact_id", "art")
	parent, child := w.DictStringCol("parent_frame_id", ids), w.DictStringCol("child_frame_id", ids)
	var want [][2]string
	for r := range rows {
		p, c := r%7, r // the parent repeats, the child never does
		if r >= group {
			p = r // a later group that would have suited a dictionary
		}
		parent.Append(p)
		child.Append(c)
		want = append(want, [2]string{ids[p], ids[c]})
		w.Uint64Col("sample_count").Append(1)
		w.Int64Col("duration_ns").Append(0)
		w.Int64Col("value").Append(1)
		for _, col := range []string{"metric", "unit", "thread", "process"} {
			w.StringCol(col).AppendNull()
		}
		if err := w.EndRow(); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := w.Close(); n != int64(rows) || err != nil {
		t.Fatalf("Close() = %d, %v", n, err)
	}
	rf := readBack2(t, f.Name())
	for r, m := range rf.maps {
		if got := [2]string{m["parent_frame_id"].(string), m["child_frame_id"].(string)}; got != want[r] {
			t.Fatalf("row %d: %v, want %v", r, got, want[r])
		}
	}
	pf, err := file.OpenParquetFile(f.Name(), false)
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	for g := range pf.NumRowGroups() {
		for col, dict := range map[string]bool{"parent_frame_id": true, "child_frame_id": childDict} {
			cc, err := pf.MetaData().RowGroup(g).ColumnChunk(tb.Index(col))
			if err != nil {
				t.Fatal(err)
			}
			if got := cc.HasDictionaryPage(); got != dict {
				t.Errorf("group %d, %s: dictionary page %v, want %v", g, col, got, dict)
			}
		}
	}
}

// Misuse of coded columns fails like misuse of the builders: a row short
// of a coded value, a null in a non-nullable coded column, an index
// outside the dictionary.
func TestCodedMisuse(t *testing.T) {
	tb := Stacks
	for name, fill := range map[string]func(t *testing.T, w *Writer) error{
		"short": func(t *testing.T, w *Writer) error {
			w.StringListCol("frame_ids").Append(nil)
			w.DictStringCol("leaf_frame_id", []string{"x"})
			err := w.EndRow()
			if err != nil && !strings.Contains(err.Error(), "leaf_frame_id has 0 values") {
				t.Errorf("wrong complaint: %v", err)
			}
			return err
		},
		"null in required": func(t *testing.T, w *Writer) error {
			w.DictStringListCol("frame_ids", []string{"x"}).AppendNull()
			w.StringCol("leaf_frame_id").Append("x")
			return endAndClose(w)
		},
		"out of range": func(t *testing.T, w *Writer) error {
			w.DictStringListCol("frame_ids", []string{"x"}).Append([]int32{3})
			w.StringCol("leaf_frame_id").Append("x")
			return endAndClose(w)
		},
	} {
		t.Run(name, func(t *testing.T) {
			w, err := NewWriter(tb, create(t, "m.parquet"), Options{Common: testCommon})
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range tb.Columns[NumCommon:] {
				if c.Name == "leaf_frame_id" || c.Name == "frame_ids" {
					continue
				}
				if err := w.appendValue(tb.Index(c.Name), sample(Column{Name: c.Name, Type: c.Type}, 1), true); err != nil {
					t.Fatal(err)
				}
			}
			if err := fill(t, w); err == nil {
				t.Fatal("accepted")
			} else {
				t.Log(err)
			}
		})
	}
}

func endAndClose(w *Writer) error {
	if err := w.EndRow(); err != nil {
		return err
	}
	_, err := w.Close()
	return err
}

type readFile struct {
	rows   int64
	groups int
	maps   []map[string]any
}

func readBack2(t *testing.T, path string) readFile {
	t.Helper()
	f := schematest.Read(t, path)
	return readFile{f.FooterRows, f.RowGroups, f.Maps()}
}

// A small file written in one go gets its coded columns as plain strings
// (no dictionary pages, whose set-up outweighs a few rows), and reads
// back the same.
func TestCodedSmallFile(t *testing.T) {
	tb := Stacks
	f := create(t, "small.parquet")
	w, err := NewWriter(tb, f, Options{Common: testCommon})
	if err != nil {
		t.Fatal(err)
	}
	dict := []string{"f0", "f1", "f2"}
	w.SetString("run_id", "run-S")
	leaf, frames, thread := w.DictStringCol("leaf_frame_id", dict), w.DictStringListCol("frame_ids", dict), w.DictStringCol("thread", dict)
	for r := range 3 {
		leaf.Append(r)
		frames.Append([]int32{0, int32(r)})
		if r == 1 {
			thread.AppendNull()
		} else {
			thread.Append(2)
		}
		for _, c := range tb.Columns[NumCommon:] {
			switch c.Name {
			case "run_id", "leaf_frame_id", "frame_ids", "thread":
				continue
			}
			if err := w.appendValue(tb.Index(c.Name), sample(Column{Name: c.Name, Type: c.Type}, r), true); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.EndRow(); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := w.Close(); n != 3 || err != nil {
		t.Fatalf("Close() = %d, %v", n, err)
	}
	rf := readBack2(t, f.Name())
	for r, m := range rf.maps {
		var th any = "f2"
		if r == 1 {
			th = nil
		}
		if m["run_id"] != "run-S" || m["leaf_frame_id"] != dict[r] || m["thread"] != th ||
			!reflect.DeepEqual(m["frame_ids"], []string{"f0", dict[r]}) {
			t.Errorf("row %d: %v %v %v %v", r, m["run_id"], m["leaf_frame_id"], m["thread"], m["frame_ids"])
		}
	}
	pf, err := file.OpenParquetFile(f.Name(), false)
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	for _, col := range []string{"leaf_frame_id", "run_id", "evidence_generation_id"} {
		cc, err := pf.MetaData().RowGroup(0).ColumnChunk(tb.Index(col))
		if err != nil {
			t.Fatal(err)
		}
		if cc.HasDictionaryPage() {
			t.Errorf("%s: a dictionary page in a small file", col)
		}
	}
}
