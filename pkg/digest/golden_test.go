package digest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/flameox/flameox/pkg/fault"
)

// tenth is a variable so that 0.1+0.2 is computed in float64, not exactly.
var tenth = 0.1

type goldenRun struct {
	Name    string            `json:"name"`
	Count   int               `json:"count"`
	Ratio   float64           `json:"ratio"`
	Tags    []string          `json:"tags"`
	At      time.Time         `json:"at"`
	Meta    map[string]string `json:"meta,omitempty"`
	Skipped *string           `json:"skipped"`
}

// TestGoldenDigests pins the canonical bytes and digests of fixed values.
// The expected digests were computed independently (Python hashlib over the
// expected canonical text); a change here means every stored id changes.
func TestGoldenDigests(t *testing.T) {
	cases := []struct {
		name  string
		v     any
		canon string
		id    string
	}{
		{
			name: "struct",
			v: goldenRun{
				Name: "bench <fast> & \"slow\"", Count: 3, Ratio: tenth + 2*tenth,
				Tags: []string{"b", "a"},
				At:   time.Date(2026, 1, 2, 3, 4, 5, 600, time.UTC),
				Meta: map[string]string{"z": "1", "é": "2", "A": "3"},
			},
			canon: `{"at":"2026-01-02T03:04:05.0000006Z","count":3,"meta":{"A":"3","z":"1","é":"2"},` +
				`"name":"bench <fast> & \"slow\"","ratio":0.30000000000000004,"skipped":null,"tags":["b","a"]}`,
			id: "sha256:62949a33113ec5faa4f0e47634e1d043d68b6c219ee84874d2efaf0f15fdd120",
		},
		{
			name:  "nested map",
			v:     map[string]any{"b": []any{1e21, true, nil}, "a": map[string]any{}},
			canon: `{"a":{},"b":[1e+21,true,null]}`,
			id:    "sha256:8c1730fb91ebd1542fa11d17628ce2a63b15de860378293d7d244495017435ec",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := canon(t, c.v); got != c.canon {
				t.Fatalf("canonical\n got  %s\n want %s", got, c.canon)
			}
			id, err := Of(c.v)
			if err != nil {
				t.Fatal(err)
			}
			if id != c.id {
				t.Errorf("Of = %s, want %s", id, c.id)
			}
			if b := Bytes([]byte(c.canon)); b != id {
				t.Errorf("Bytes(canonical) = %s, Of = %s", b, id)
			}
		})
	}
}

func TestBytesValidHex(t *testing.T) {
	empty := "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
	if got := Bytes(nil); got != empty {
		t.Fatalf("Bytes(nil) = %s", got)
	}
	sum := sha256.Sum256([]byte("abc"))
	if got := Bytes([]byte("abc")); got != "sha256:"+hex.EncodeToString(sum[:]) {
		t.Fatalf("Bytes(abc) = %s", got)
	}
	if !Valid(empty) {
		t.Fatal("Valid(empty digest) = false")
	}
	h, err := Hex(empty)
	if err != nil || h != empty[7:] {
		t.Fatalf("Hex = %q, %v", h, err)
	}
	bad := []string{
		"", "sha256:", empty[7:], "SHA256:" + empty[7:], "sha256:" + strings.ToUpper(empty[7:]),
		empty + "0", empty[:len(empty)-1], "sha512:" + empty[7:], " " + empty,
		"sha256:" + strings.Repeat("g", 64), "sha256:" + strings.Repeat("é", 32),
	}
	for _, s := range bad {
		if Valid(s) {
			t.Errorf("Valid(%q) = true", s)
		}
		if _, err := Hex(s); !fault.Is(err, fault.InvalidArguments) {
			t.Errorf("Hex(%q) err = %v", s, err)
		}
	}
}

// FuzzCanonical: for any input encoding/json accepts, canonicalizing the
// decoded value never panics, and canonicalizing the canonical output again
// (both as raw JSON and as a decoded value) returns identical bytes.
func FuzzCanonical(f *testing.F) {
	for _, s := range []string{
		`{}`, `[]`, `null`, `0`, `-0`, `1e21`, `1e-7`, `0.000001`, `123456789012345678901`,
		`{"b":1,"a":[1.5,"x",true,null,{"😀":"\u2028","\ufb33":"<&>"}]}`,
		`"\ud83d\ude00\u0000\u001f\"\\"`, `{"a":1,"a":2}`, `[5e-324,1.7976931348623157e308]`,
		"\"\xff\"", `[[[[[[[[[[[]]]]]]]]]]]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) {
			return
		}
		var v any
		if err := json.Unmarshal(data, &v); err != nil {
			return // valid syntax, but e.g. a number beyond float64 range
		}
		first, err := Canonical(v)
		if err != nil {
			t.Fatalf("Canonical(decode(%q)): %v", data, err)
		}
		var again any
		if err := json.Unmarshal(first, &again); err != nil {
			t.Fatalf("canonical output %q is not JSON: %v", first, err)
		}
		second, err := Canonical(again)
		if err != nil {
			t.Fatalf("Canonical(decode(%q)): %v", first, err)
		}
		if !bytes.Equal(first, second) {
			t.Fatalf("not idempotent:\n first  %q\n second %q", first, second)
		}
		if raw, err := Canonical(json.RawMessage(first)); err != nil || !bytes.Equal(raw, first) {
			t.Fatalf("raw re-canonicalization: %q, %v (want %q)", raw, err, first)
		}
		if id := Bytes(first); !Valid(id) {
			t.Fatalf("Bytes produced invalid digest %q", id)
		}
	})
}
