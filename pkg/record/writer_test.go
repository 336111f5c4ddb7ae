package record

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

type testRun struct {
	Header
	RunID     string   `json:"run_id"`
	Artifacts []string `json:"artifact_ids,omitempty"`
	Note      string   `json:"note,omitempty"`
}

// countingWriter records the size of every Write call.
type countingWriter struct {
	bytes.Buffer
	calls []int
}

func (c *countingWriter) Write(p []byte) (int, error) {
	c.calls = append(c.calls, len(p))
	return c.Buffer.Write(p)
}

func TestWriterWrite(t *testing.T) {
	var out countingWriter
	w := NewWriter(&out)
	recs := []any{
		testRun{Header{KindRun, SchemaVersion}, "r1", []string{"a", "b"}, "<&> é"},
		&testRun{Header: Header{KindRun, 2}, RunID: "r2"},
		map[string]any{"record": "future_kind", "schema_version": 7, "x": map[string]any{"y": []int{1}}},
		json.RawMessage(`{ "record" : "commit",
		  "schema_version" : 1 }`),
	}
	for _, v := range recs {
		if err := w.Write(v); err != nil {
			t.Fatalf("Write(%#v): %v", v, err)
		}
	}
	want := `{"record":"run","schema_version":1,"run_id":"r1","artifact_ids":["a","b"],"note":"<&> é"}
{"record":"run","schema_version":2,"run_id":"r2"}
{"record":"future_kind","schema_version":7,"x":{"y":[1]}}
{"record":"commit","schema_version":1}
`
	if got := out.String(); got != want {
		t.Errorf("output:\n%s\nwant:\n%s", got, want)
	}
	lines := strings.SplitAfter(want, "\n")
	for i, n := range out.calls {
		if n != len(lines[i]) {
			t.Errorf("Write call %d wrote %d bytes, want one call of %d (the whole line)", i, n, len(lines[i]))
		}
	}
	if len(out.calls) != len(recs) {
		t.Errorf("%d Write calls for %d records", len(out.calls), len(recs))
	}

	// What the Writer writes, a Reader reads back and Decode restores.
	r := NewReader(strings.NewReader(out.String()), "out")
	r.Scan()
	var got testRun
	if err := r.Record().(*Raw).Decode(&got); err != nil {
		t.Fatal(err)
	}
	if got.Record != KindRun || got.SchemaVersion != 1 || got.RunID != "r1" || got.Note != "<&> é" {
		t.Errorf("decoded %+v", got)
	}
}

func TestWriterRejects(t *testing.T) {
	deep := strings.Repeat("[", 64) + strings.Repeat("]", 64)
	tests := []struct {
		v    any
		want string
	}{
		{[]int{1}, "not a JSON object"},
		{"run", "not a JSON object"},
		{nil, "not a JSON object"},
		{struct{ A int }{1}, `missing "record"`},
		{map[string]any{"record": "run"}, `missing "schema_version"`},
		{testRun{Header: Header{"", 1}}, `invalid record kind ""`},
		{testRun{Header: Header{"Run", 1}}, `invalid record kind "Run"`},
		{testRun{Header: Header{"run-x", 1}}, `invalid record kind "run-x"`},
		{testRun{Header: Header{"9run", 1}}, `invalid record kind "9run"`},
		{testRun{Header: Header{"run", 0}}, "invalid schema_version 0"},
		{testRun{Header: Header{"run", -3}}, "invalid schema_version -3"},
		{map[string]any{"record": "run", "schema_version": 1.5}, "invalid schema_version 1.5"},
		{map[string]any{"record": "run", "schema_version": 1, "Record": "x"}, "lower case"},
		{json.RawMessage(`{"record":"run","schema_version":1,"d":` + deep + `}`), "nesting deeper than 64"},
		{testRun{Header: Header{"run", 1}, Note: strings.Repeat("x", DefaultMaxLineBytes)}, "line budget"},
		{make(chan int), "unsupported type"},
	}
	for _, tt := range tests {
		var out bytes.Buffer
		err := NewWriter(&out).Write(tt.v)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Write(%.60v) = %v, want error containing %q", tt.v, err, tt.want)
		}
		if out.Len() != 0 {
			t.Errorf("Write(%.60v) wrote %q despite the error", tt.v, out.Bytes())
		}
	}
}

func TestWriteRawRejects(t *testing.T) {
	for _, line := range []string{
		"",
		"[1]",
		`{"record":"run","schema_version":1}` + "\n" + `{"record":"run","schema_version":1}`,
		`{"record":"run","schema_version":"1"}`,
		`{"record":"Run","schema_version":1}`,
	} {
		var out bytes.Buffer
		if err := NewWriter(&out).WriteRaw(&Raw{Line: []byte(line)}); err == nil || out.Len() != 0 {
			t.Errorf("WriteRaw(%q) = %v, wrote %q; want an error and nothing written", line, err, out.Bytes())
		}
	}
}

func TestCheck(t *testing.T) {
	if err := Check(Header{KindRun, 1}, KindRun, 1); err != nil {
		t.Errorf("Check(run v1, max 1) = %v", err)
	}
	err := Check(Header{KindRun, 3}, KindRun, 2)
	var ve *VersionError
	if !errors.As(err, &ve) || ve.Got.SchemaVersion != 3 || ve.Version != 2 {
		t.Fatalf("Check(run v3, max 2) = %#v", err)
	}
	if msg := err.Error(); !strings.Contains(msg, `"run"`) || !strings.Contains(msg, "3") || !strings.Contains(msg, "2") {
		t.Errorf("message %q does not name the kind and both versions", msg)
	}
	if err := Check(Header{KindCommit, 1}, KindRun, 1); err == nil || !strings.Contains(err.Error(), `"commit"`) {
		t.Errorf("Check(commit, want run) = %v", err)
	}
}

func TestDecodeError(t *testing.T) {
	r := NewReader(strings.NewReader("\n"+`{"record":"run","schema_version":1,"run_id":7}`), "in")
	r.Scan()
	var v testRun
	err := r.Record().(*Raw).Decode(&v)
	var se *SyntaxError
	if !errors.As(err, &se) || se.Line != 2 || !strings.HasPrefix(err.Error(), `in:2: decoding "run" record: `) {
		t.Errorf("Decode = %v, want a SyntaxError at in:2", err)
	}
}

func TestWriterConcurrent(t *testing.T) {
	var out bytes.Buffer
	w := NewWriter(&out)
	done := make(chan error)
	for g := range 8 {
		go func() {
			var err error
			for i := 0; i < 100 && err == nil; i++ {
				err = w.Write(testRun{Header: Header{KindRun, 1}, RunID: strings.Repeat("r", g*50+i)})
			}
			done <- err
		}()
	}
	for range 8 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	r := NewReader(&out, "out")
	n := 0
	for r.Scan() {
		if _, ok := r.Record().(*Raw); !ok {
			t.Fatalf("line %d: %v", n+1, r.Record())
		}
		n++
	}
	if n != 800 {
		t.Errorf("read %d records, want 800", n)
	}
}

// TestWriterEscapesControls: encoding/json leaves C1 and bidirectional
// controls raw; the Writer escapes them (in Write and WriteRaw alike), and
// the value a Reader decodes is unchanged.
func TestWriterEscapesControls(t *testing.T) {
	note := "evil\u202eexe\u009b[2J\u2066"
	var out bytes.Buffer
	w := NewWriter(&out)
	if err := w.Write(testRun{Header: Header{KindRun, 1}, RunID: "r1", Note: note}); err != nil {
		t.Fatal(err)
	}
	raw := []byte("{\"record\":\"run\",\"schema_version\":1,\"run_id\":\"r2\",\"note\":\"" + note + "\"}")
	if err := w.WriteRaw(&Raw{Line: raw}); err != nil {
		t.Fatal(err)
	}
	want := `{"record":"run","schema_version":1,"run_id":"r1","note":"evil\u202eexe\u009b[2J\u2066"}
{"record":"run","schema_version":1,"run_id":"r2","note":"evil\u202eexe\u009b[2J\u2066"}
`
	if got := out.String(); got != want {
		t.Errorf("output:\n%s\nwant:\n%s", got, want)
	}
	r := NewReader(strings.NewReader(out.String()), "out")
	for r.Scan() {
		var got testRun
		if err := r.Record().(*Raw).Decode(&got); err != nil {
			t.Fatal(err)
		}
		if got.Note != note {
			t.Errorf("decoded note %q, want %q", got.Note, note)
		}
	}
}
