package cli

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/flameox/flameox/pkg/fault"
)

func TestEscapeJSON(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"plain", `{"a":"b","n":[1,2.5,null,true]}`, `{"a":"b","n":[1,2.5,null,true]}`},
		{"non-ASCII kept", `"é日本🔥"`, `"é日本🔥"`},
		{"RLO", "\"evil\u202eexe.txt\"", `"evil\u202eexe.txt"`},
		{"8-bit CSI", "\"a\u009b31mred\"", `"a\u009b31mred"`},
		{"C1 bounds", "\"\u0080\u009f\u00a0\"", "\"\\u0080\\u009f\u00a0\""},
		{"DEL", "\"a\x7fb\"", `"a\u007fb"`},
		{"bidi set", "\"\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u2066\u2067\u2068\u2069\"",
			`"\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u2066\u2067\u2068\u2069"`},
		{"separators", "\"\u2028\u2029\"", `"\u2028\u2029"`},
		{"zero width and BOM", "\"\u200b\ufeff\"", `"\u200b\ufeff"`},
		{"astral format character", "\"\U000e0001\"", `"\udb40\udc01"`},
		{"key", "{\"k\u202e\":1}", `{"k\u202e":1}`},
		{"existing escapes untouched", `"\u202e\\u009b"`, `"\u202e\\u009b"`},
		{"invalid UTF-8 left alone", "\"\xff\u202e\"", "\"\xff\\u202e\""},
		{"indented", "{\n  \"a\": \"\u202e\"\n}", "{\n  \"a\": \"\\u202e\"\n}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := string(EscapeJSON([]byte(tt.in)))
			if got != tt.want {
				t.Errorf("EscapeJSON(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestEscapeJSONReturnsInputWhenClean(t *testing.T) {
	in := []byte(`{"a":"é"}`)
	if out := EscapeJSON(in); &out[0] != &in[0] {
		t.Error("EscapeJSON copied a clean document")
	}
}

// TestEscapeJSONAfterMarshal checks the case EscapeJSON exists for:
// encoding/json leaves these characters raw, and the escaped document
// decodes to the original string.
func TestEscapeJSONAfterMarshal(t *testing.T) {
	s := "main.\u202eevil\u009b[2J\u2066x\u2069\u0085"
	raw, err := json.Marshal(map[string]string{"function": s})
	if err != nil {
		t.Fatal(err)
	}
	out := EscapeJSON(raw)
	for _, r := range "\u202e\u009b\u2066\u2069\u0085" {
		if strings.ContainsRune(string(out), r) {
			t.Errorf("output holds raw %U: %q", r, out)
		}
	}
	var back map[string]string
	if err := json.Unmarshal(out, &back); err != nil {
		t.Fatal(err)
	}
	if back["function"] != s {
		t.Errorf("decoded %q, want %q", back["function"], s)
	}
}

func FuzzEscapeJSON(f *testing.F) {
	for _, s := range []string{
		`{"a":"b"}`, "\"\u202e\u009b\"", "[\"\U000e0001\",1e9,{\"\u2028\":null}]",
		"\"\xff\xfe\"", `"\ud800"`, "\"\x7f\"", `  [ ]  `,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		if !json.Valid(in) {
			return
		}
		out := EscapeJSON(in)
		if !json.Valid(out) {
			t.Fatalf("EscapeJSON(%q) = %q, not valid JSON", in, out)
		}
		a, b := decodeJSON(t, in), decodeJSON(t, out)
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("EscapeJSON(%q) = %q decodes to %#v, want %#v", in, out, b, a)
		}
		for i := 0; i < len(out); {
			r, n := utf8.DecodeRune(out[i:])
			if jsonUnsafe(r) {
				t.Fatalf("EscapeJSON(%q) = %q holds raw %U", in, out, r)
			}
			i += n
		}
	})
}

// decodeJSON decodes b keeping numbers as written, so that numbers out of
// float64's range compare too.
func decodeJSON(t *testing.T, b []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("decode %q: %v", b, err)
	}
	return v
}

// TestOutputEscapes: every JSON flameox prints through this package (the
// --json result, the error envelope, the error record) and the error text
// on stderr carry no raw bidi or C1 control.
func TestOutputEscapes(t *testing.T) {
	evil := "evil\u202eexe\u009b[2J"
	fe := fault.New(fault.ArtifactParseFailed, "bad frame %s", evil).Fix("rename " + evil)
	for _, mode := range []OutputMode{Human, JSON, Records} {
		var stdout, stderr bytes.Buffer
		env := &Env{Stdout: &stdout, Stderr: &stderr, Mode: mode, Name: "fox-test"}
		Report(env, fe)
		for _, out := range []string{stdout.String(), stderr.String()} {
			if strings.ContainsAny(out, "\u202e\u009b") {
				t.Errorf("mode %d: raw control in %q", mode, out)
			}
		}
		if !strings.Contains(stderr.String(), `evil\u202eexe\u009b[2J`) || !strings.Contains(stderr.String(), "\n  hint: rename") {
			t.Errorf("mode %d: stderr %q", mode, stderr.String())
		}
		if mode != Human && !strings.Contains(stdout.String(), `evil\u202eexe\u009b[2J`) {
			t.Errorf("mode %d: stdout %q", mode, stdout.String())
		}
	}
	var out bytes.Buffer
	if err := PrintJSON(&out, map[string]string{"name": evil}); err != nil {
		t.Fatal(err)
	}
	if want := "{\n  \"name\": \"evil\\u202eexe\\u009b[2J\"\n}\n"; out.String() != want {
		t.Errorf("PrintJSON = %q, want %q", out.String(), want)
	}
}
