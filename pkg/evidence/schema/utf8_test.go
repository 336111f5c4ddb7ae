package schema

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flameox/flameox/pkg/evidence/schema/schematest"
)

func sum(s string) string {
	d := sha256.Sum256([]byte(s))
	return "sha256:" + hex.EncodeToString(d[:])
}

// writeFile writes rows to a file of t through fill and reads it back.
func writeFile(t *testing.T, tb *Table, rowGroup int, fill func(w *Writer)) *schematest.File {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(tb, &buf, Options{Common: testCommon, RowGroupRows: rowGroup})
	if err != nil {
		t.Fatal(err)
	}
	fill(w)
	if _, err := w.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), tb.Name+".parquet")
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	f := schematest.Read(t, path)
	if bad := f.InvalidUTF8(); bad != nil {
		t.Fatalf("%s: invalid UTF-8 reached Parquet: %v", tb.Name, bad)
	}
	return f
}

// TestFramesInvalidUTF8 writes frames whose names, files and modules are
// not valid UTF-8, through every kind of handle: the file holds U+FFFD
// instead, and invalid_utf8 the digests of the original bytes, column by
// column; valid rows have it null.
func TestFramesInvalidUTF8(t *testing.T) {
	const a, b = "bad\xff\xfe", "bad\xfe\xff"   // both "bad\uFFFD"
	for _, small := range []bool{true, false} { // plain and dictionary-encoded files
		n := 3
		if !small {
			n = smallFile + 10
		}
		f := writeFile(t, Frames, 0, func(w *Writer) {
			id, fn, sys, file := w.StringCol("frame_id"), w.StringCol("function"), w.StringCol("system_name"), w.StringCol("file")
			sym, mod := w.StringCol("symbolization"), w.DictStringCol("module", []string{"/bin/ok", "/bin/x\xc0"})
			w.SetString("artifact_id", "sha256:art")
			// The other columns are null.
			var rest []int
			for i, c := range Frames.Columns[NumCommon:] {
				switch c.Name {
				case "frame_id", "function", "system_name", "file", "symbolization", "module", "artifact_id", "invalid_utf8":
				default:
					rest = append(rest, NumCommon+i)
				}
			}
			nulls := func() {
				for _, i := range rest {
					w.builders[i].AppendNull()
				}
			}
			for r := range n {
				nulls()
				id.Append("sha256:" + strings.Repeat("0", r%10) + string(rune('a'+r%26)))
				sym.Append("full")
				switch r % 3 {
				case 0:
					fn.Append(a)
					sys.AppendOrNull(a)
					file.AppendOrNull("src/\xff.go")
					mod.Append(1)
				case 1:
					fn.Append(b)
					sys.AppendNull()
					file.AppendNull()
					mod.Append(0)
				default:
					fn.Append("main.ok")
					sys.Append("main.ok")
					file.Append("ok.go")
					mod.AppendNull()
				}
				if err := w.EndRow(); err != nil {
					t.Fatal(err)
				}
			}
			// A constant that is not valid UTF-8 is recorded on every row.
			w.SetString("artifact_id", "art\xff")
			nulls()
			id.Append("sha256:last")
			fn.Append("main.last")
			sys.AppendNull()
			file.AppendNull()
			sym.Append("none")
			mod.AppendNull()
			if err := w.EndRow(); err != nil {
				t.Fatal(err)
			}
		})
		rows := f.Maps()
		if len(rows) != n+1 {
			t.Fatalf("%d rows, want %d", len(rows), n+1)
		}
		for r, m := range rows[:n] {
			var want map[string]string
			switch r % 3 {
			case 0:
				want = map[string]string{"function": sum(a), "system_name": sum(a), "file": sum("src/\xff.go"), "module": sum("/bin/x\xc0")}
				if m["function"] != "bad\uFFFD" || m["file"] != "src/\uFFFD.go" || m["module"] != "/bin/x\uFFFD" {
					t.Fatalf("row %d: %v", r, m)
				}
			case 1:
				want = map[string]string{"function": sum(b)}
			}
			got, _ := m["invalid_utf8"].(map[string]string)
			if want == nil && m["invalid_utf8"] != nil || !mapsEqual(got, want) {
				t.Fatalf("small=%t row %d: invalid_utf8 %v, want %v", small, r, m["invalid_utf8"], want)
			}
		}
		last := rows[n]
		if got := last["invalid_utf8"].(map[string]string); !mapsEqual(got, map[string]string{"artifact_id": sum("art\xff")}) || last["artifact_id"] != "art\uFFFD" {
			t.Fatalf("constant column: %v", last)
		}
		if sum(a) == sum(b) || rows[0]["function"] != rows[1]["function"] {
			t.Fatal("the two names should read the same and keep different digests")
		}
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestInvalidUTF8EveryHandle: every way a string reaches a table without
// an Originals column (AppendRow, the measurement writer with its map,
// coded and list columns) stores valid UTF-8.
func TestInvalidUTF8EveryHandle(t *testing.T) {
	t.Run("measurements", func(t *testing.T) {
		f := writeFile(t, Measurements, 0, func(w *Writer) {
			mw := NewMeasurementWriter(w)
			v := int64(1)
			for r := range 3 {
				if err := mw.Write(Measurement{ID: "m\xff", RunID: "run", Name: "n\xfe", Int: &v, Unit: "count", Aggregation: "sum",
					Scope: "profile", Subject: "s\xc3", WorkerID: string(rune('a' + r)),
					Dimensions: map[string]string{"k\xff": "v\xfe", "k\xfe": "w", "k\uFFFD": "real"}}); err != nil {
					t.Fatal(err)
				}
			}
		})
		m := f.Maps()[0]
		if m["measurement_id"] != "m\uFFFD" || m["name"] != "n\uFFFD" || m["subject"] != "s\uFFFD" {
			t.Fatalf("row: %v", m)
		}
		// Three keys that read the same once replaced stay three entries.
		dims := m["dimensions"].(map[string]string)
		if len(dims) != 3 || dims["k\uFFFD"] != "real" {
			t.Fatalf("dimensions %q", dims)
		}
	})
	t.Run("stacks", func(t *testing.T) {
		ids := []string{"sha256:a", "t\xff"}
		f := writeFile(t, Stacks, 0, func(w *Writer) {
			w.SetString("run_id", "run")
			w.SetString("artifact_id", "art")
			sid, leaf, frames := w.StringCol("stack_id"), w.DictStringCol("leaf_frame_id", ids), w.DictStringListCol("frame_ids", ids)
			thr := w.DictStringCol("thread", ids)
			start, dur, track := w.Int64Col("start_ns"), w.Int64Col("duration_ns"), w.Uint64Col("track_id")
			met, unit, proc := w.StringCol("metric"), w.StringCol("unit"), w.StringCol("process")
			val, cnt := w.Int64Col("value"), w.Uint64Col("sample_count")
			for r := range 2 {
				sid.Append("s")
				leaf.Append(1)
				frames.Append([]int32{0, 1})
				thr.Append(r)
				start.Append(0)
				dur.Append(0)
				track.Append(0)
				met.Append("cpu")
				unit.Append("ns")
				proc.Append("p\xff")
				val.Append(1)
				cnt.Append(1)
				if err := w.EndRow(); err != nil {
					t.Fatal(err)
				}
			}
		})
		m := f.Maps()[1]
		if m["leaf_frame_id"] != "t\uFFFD" || m["thread"] != "t\uFFFD" || m["process"] != "p\uFFFD" {
			t.Fatalf("row: %v", m)
		}
		if l := m["frame_ids"].([]string); len(l) != 2 || l[1] != "t\uFFFD" {
			t.Fatalf("frame_ids %q", l)
		}
	})
	t.Run("AppendRow", func(t *testing.T) {
		f := writeFile(t, Observations, 0, func(w *Writer) {
			if err := w.AppendRow([]any{"o", "run", nil, "annotation", "x\xff", `"v"`, "f\xfe.go", nil, nil, "c\xc0", "observed"}); err != nil {
				t.Fatal(err)
			}
		})
		if m := f.Maps()[0]; m["name"] != "x\uFFFD" || m["file"] != "f\uFFFD.go" || m["context"] != "c\uFFFD" {
			t.Fatalf("row: %v", m)
		}
	})
}
