package schema

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/flameox/flameox/pkg/evidence/schema/schematest"
	"github.com/flameox/flameox/pkg/fault"
)

// TestOriginalsColumnIsTheWriters: callers cannot write the digests.
func TestOriginalsColumnIsTheWriters(t *testing.T) {
	w, err := NewWriter(Frames, &bytes.Buffer{}, Options{Common: testCommon})
	if err != nil {
		t.Fatal(err)
	}
	vals := make([]any, 0, len(Frames.Columns)-NumCommon)
	for _, c := range Frames.Columns[NumCommon:] {
		vals = append(vals, sample(c, 0))
	}
	vals[Frames.Index("invalid_utf8")-NumCommon] = map[string]string{"function": "sha256:forged"}
	if err := w.AppendRow(vals); err == nil || !strings.Contains(err.Error(), "invalid_utf8") {
		t.Fatalf("AppendRow with a value for invalid_utf8: %v", err)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("StringMapCol(invalid_utf8) did not panic")
		}
	}()
	w.StringMapCol("invalid_utf8")
}

// TestWriterRefusesInvalidUTF8 is the defence behind the handles: a
// string that reached a builder without them is refused with a
// structured EVIDENCE_SCHEMA_MISMATCH, and no file is produced.
func TestWriterRefusesInvalidUTF8(t *testing.T) {
	w, err := NewWriter(Observations, &bytes.Buffer{}, Options{Common: testCommon})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.AppendRow([]any{"o", "run", nil, "annotation", "x", `"v"`, nil, nil, nil, nil, "observed"}); err != nil {
		t.Fatal(err)
	}
	// Bypass the handles, as a future code path might.
	for i := NumCommon; i < len(w.builders); i++ {
		switch b := w.builders[i].(type) {
		case *array.StringBuilder:
			if i == Observations.Index("name") {
				b.Append("y\xff")
			} else {
				b.Append("x")
			}
		default:
			b.AppendNull()
		}
	}
	if err := w.EndRow(); err != nil {
		t.Fatal(err)
	}
	_, err = w.Close()
	var fe *fault.Error
	if !errors.As(err, &fe) || fe.Code != fault.EvidenceSchemaMismatch || !strings.Contains(fe.Message, "observations.name") {
		t.Fatalf("Close = %v, want EVIDENCE_SCHEMA_MISMATCH naming observations.name", err)
	}
}

func TestValidArray(t *testing.T) {
	for _, tc := range []struct {
		vals []string
		want bool
	}{
		{nil, true},
		{[]string{"a", "", "é", "\uFFFD"}, true},
		{[]string{"a", "\xff"}, false},
		{[]string{"\xc3", "\xa9"}, false}, // the buffer is "é"; each value is not
		{[]string{"a\xc3", "\xa9b"}, false},
		{[]string{"ok", "\xc3"}, false},
	} {
		b := array.NewStringBuilder(memory.DefaultAllocator)
		for _, v := range tc.vals {
			b.Append(v)
		}
		b.AppendNull()
		a := b.NewArray()
		if got := validArray(a); got != tc.want {
			t.Errorf("validArray(%q) = %t, want %t", tc.vals, got, tc.want)
		}
		a.Release()
		b.Release()
	}
}

func TestCleanKeys(t *testing.T) {
	keys := []string{"a", "k\xff", "k\xfe", "k\uFFFD"}
	got := cleanKeys(keys)
	seen := map[string]bool{}
	for _, k := range got {
		if seen[k] || !strings.HasPrefix(k, "k\uFFFD") && k != "a" {
			t.Fatalf("cleanKeys(%q) = %q", keys, got)
		}
		seen[k] = true
	}
	if valid := []string{"a", "b"}; &cleanKeys(valid)[0] != &valid[0] {
		t.Fatal("valid keys are copied")
	}
}

// FuzzStrings writes arbitrary bytes through every kind of string handle
// of frames and checks what reached the row group: valid UTF-8 only, the
// value unchanged when it was valid, and the digest of the original
// recorded exactly for the replaced scalar values.
func FuzzStrings(f *testing.F) {
	for _, s := range []string{"", "main.f", "bad\xff\xfe", "\xc3", "é\xa9", "\uFFFD", "a\x00b", "\xed\xa0\x80", "\xf4\x90\x80\x80"} {
		f.Add(s, "k")
	}
	f.Fuzz(func(t *testing.T, s, k string) {
		var buf bytes.Buffer
		w, err := NewWriter(Frames, &buf, Options{Common: testCommon})
		if err != nil {
			t.Fatal(err)
		}
		fn, sym := w.StringCol("function"), w.StringCol("symbolization")
		mod := w.DictStringCol("module", []string{s, k})
		chain := w.StringListCol("inline_chain")
		w.SetString("artifact_id", k)
		for r := range 2 {
			for i := NumCommon; i < len(w.builders); i++ {
				switch Frames.Columns[i].Name {
				case "function", "symbolization", "module", "inline_chain", "artifact_id", "invalid_utf8":
				case "frame_id":
					w.builders[i].(*array.StringBuilder).Append("sha256:x")
				default:
					w.builders[i].AppendNull()
				}
			}
			fn.Append(s)
			sym.Append(k)
			mod.Append(r)
			chain.Append([]string{s, k})
			if err := w.EndRow(); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := w.Close(); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "frames.parquet")
		if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
			t.Fatal(err)
		}
		back := schematest.Read(t, path)
		if bad := back.InvalidUTF8(); bad != nil {
			t.Fatalf("invalid UTF-8 stored: %v", bad)
		}
		row := back.Maps()[0]
		if utf8.ValidString(s) && (row["function"] != s || row["module"] != s) {
			t.Fatalf("valid %q stored as %q, %q", s, row["function"], row["module"])
		}
		want := map[string]string{}
		if !utf8.ValidString(s) {
			want["function"], want["module"] = originalDigest(s), originalDigest(s)
		}
		if !utf8.ValidString(k) {
			want["symbolization"], want["artifact_id"] = originalDigest(k), originalDigest(k)
		}
		got, _ := row["invalid_utf8"].(map[string]string)
		if len(want) == 0 && row["invalid_utf8"] != nil || len(got) != len(want) {
			t.Fatalf("row 0 digests %v, want %v", row["invalid_utf8"], want)
		}
		for c, d := range want {
			if got[c] != d {
				t.Fatalf("row 0 digests %v, want %v", got, want)
			}
		}
		if got := cleanKeys([]string{s, k}); len(got) != 2 || (s != k && got[0] == got[1]) {
			t.Fatalf("cleanKeys(%q, %q) = %q", s, k, got)
		}
	})
}
