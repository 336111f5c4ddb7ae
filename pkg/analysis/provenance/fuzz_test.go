package provenance

import (
	"encoding/json"
	"testing"
)

// FuzzDecode: an analysis record is a line of fox-publish's input and may
// be anything. Decode never panics, and what it accepts survives a
// round trip through its own JSON.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"record":"analysis","schema_version":1,"workspace":"/w","analysis_id":"sha256:00","operation":"hotspots","input_run_ids":["r"],"started_at":"2026-12-01T00:00:00Z","completed_at":"2026-12-01T00:00:01Z"}`))
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"started_at":"not a time"}`))
	f.Add([]byte(`[1,2`))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := Decode(b)
		if err != nil {
			return
		}
		out, err := json.Marshal(r)
		if err != nil {
			t.Fatalf("accepted record does not marshal: %v", err)
		}
		again, err := Decode(out)
		if err != nil {
			t.Fatalf("re-marshalled record %s is refused: %v", out, err)
		}
		// Compared as JSON: a time's zone is a fresh *Location per parse.
		if out2, _ := json.Marshal(again); string(out2) != string(out) {
			t.Fatalf("round trip changed the record:\n%s\n%s", out, out2)
		}
	})
}
