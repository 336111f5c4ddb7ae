package record

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"testing/iotest"

	"github.com/flameox/flameox/pkg/cli"
)

// FuzzReader reads arbitrary input with the default budgets and with tiny
// ones (through a one-byte-at-a-time reader, so lines arrive in pieces) and
// checks the Reader's invariants. It runs on its seeds under plain go test.
func FuzzReader(f *testing.F) {
	files, err := filepath.Glob("testdata/*.jsonl")
	if err != nil || len(files) == 0 {
		f.Fatalf("no seed files: %v", err)
	}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("\n\n\r\n \t\n"))
	f.Add([]byte(`{"record":"a","schema_version":1,"s":"\"}{[","t":{"u":[[]]}}`))
	f.Add([]byte(`{"record":"a","schema_version":1,"s":"\"","t":[[1]]}`))
	f.Add([]byte(`{"record":"a","schema_version":1}` + "\r\r\n" + `{"record":"a","schema_version":2}`))

	f.Fuzz(func(t *testing.T, data []byte) {
		items := checkInvariants(t, NewReader(bytes.NewReader(data), "f"), data, DefaultMaxLineBytes, DefaultMaxDepth)
		tiny := checkInvariants(t, NewReader(iotest.OneByteReader(bytes.NewReader(data)), "f",
			MaxLineBytes(64), MaxDepth(2)), data, 64, 2)
		// Tighter budgets can only turn records into errors, never the reverse,
		// and never change which lines are reported.
		if len(items) != len(tiny) {
			t.Fatalf("%d items with default budgets, %d with tiny ones", len(items), len(tiny))
		}
		for i := range items {
			p, q := items[i], tiny[i]
			_, l1 := p.Pos()
			_, l2 := q.Pos()
			if l1 != l2 {
				t.Fatalf("item %d: line %d with default budgets, %d with tiny ones", i, l1, l2)
			}
			if _, ok := p.(*SyntaxError); ok {
				if _, ok := q.(*SyntaxError); !ok {
					t.Fatalf("line %d: malformed with default budgets but not with tiny ones", l1)
				}
			}
			if rq, ok := q.(*Raw); ok && !reflect.DeepEqual(p, rq) {
				t.Fatalf("line %d: %+v with default budgets, %+v with tiny ones", l1, p, q)
			}
		}
	})
}

func checkInvariants(t *testing.T, r *Reader, data []byte, maxLine, maxDepth int) []Item {
	var items []Item
	prev, total := 0, 0
	for r.Scan() {
		it := r.Record()
		file, line := it.Pos()
		if file != "f" || line <= prev {
			t.Fatalf("position %s:%d after line %d", file, line, prev)
		}
		prev = line
		switch it := it.(type) {
		case *Raw:
			checkRaw(t, it, maxLine, maxDepth)
			total += len(it.Line)
		case *SyntaxError:
			if it.Line < 1 || it.Msg == "" {
				t.Fatalf("bad SyntaxError %#v", it)
			}
		default:
			t.Fatalf("Record() = %T", it)
		}
		items = append(items, it)
	}
	if r.Err() != nil {
		t.Fatalf("Err() = %v", r.Err())
	}
	if total > len(data) {
		t.Fatalf("raw lines hold %d bytes, input only %d", total, len(data))
	}
	if n := bytes.Count(data, []byte("\n")) + 1; prev > n {
		t.Fatalf("line %d reported for input of %d lines", prev, n)
	}
	return items
}

// depthOf returns the nesting depth of a decoded JSON value.
func depthOf(v any) int {
	d := 0
	switch v := v.(type) {
	case map[string]any:
		for _, e := range v {
			d = max(d, depthOf(e))
		}
	case []any:
		for _, e := range v {
			d = max(d, depthOf(e))
		}
	default:
		return 0
	}
	return d + 1
}

// checkRaw checks raw independently of parseLine: its line is a JSON object
// within the budgets whose header matches raw.Header, and it passes through
// WriteRaw unchanged but for cli.EscapeJSON's escapes, with the same
// decoded value.
func checkRaw(t *testing.T, raw *Raw, maxLine, maxDepth int) {
	if len(raw.Line) > maxLine || bytes.IndexByte(raw.Line, '\n') >= 0 {
		t.Fatalf("line %d: bad line %q", raw.LineNo, raw.Line)
	}
	var obj map[string]any
	if err := json.Unmarshal(raw.Line, &obj); err != nil || obj == nil {
		t.Fatalf("line %d: %q is not a JSON object: %v", raw.LineNo, raw.Line, err)
	}
	if d := depthOf(obj); d > maxDepth {
		t.Fatalf("line %d: depth %d accepted with a budget of %d", raw.LineNo, d, maxDepth)
	}
	kind, _ := obj["record"].(string)
	v, _ := obj["schema_version"].(float64)
	if kind != raw.Record || !validKind(kind) || v != float64(raw.SchemaVersion) || raw.SchemaVersion < 1 {
		t.Fatalf("line %d: header %+v, object has record=%v schema_version=%v", raw.LineNo, raw.Header, obj["record"], obj["schema_version"])
	}
	var h Header
	if err := raw.Decode(&h); err != nil || h != raw.Header {
		t.Fatalf("line %d: Decode = %+v, %v; want %+v", raw.LineNo, h, err, raw.Header)
	}
	// WriteRaw passes the line on unchanged but for cli.EscapeJSON's
	// escapes of terminal controls (DEL, C1, bidirectional and other
	// format characters), which keep its decoded value.
	var out bytes.Buffer
	if err := NewWriter(&out).WriteRaw(raw); err != nil || out.String() != string(cli.EscapeJSON(raw.Line))+"\n" {
		t.Fatalf("line %d: WriteRaw = %q, %v", raw.LineNo, out.Bytes(), err)
	}
	var back map[string]any
	if err := json.Unmarshal(out.Bytes(), &back); err != nil || !reflect.DeepEqual(back, obj) {
		t.Fatalf("line %d: WriteRaw's %q decodes to %v (%v), the line to %v", raw.LineNo, out.Bytes(), back, err, obj)
	}
}
