package hyperfine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"testing"

	"github.com/flameox/flameox/pkg/adapter"
	"github.com/flameox/flameox/pkg/config"
	"github.com/flameox/flameox/pkg/evidence/schema"
)

// FuzzDecode: arbitrary bytes never panic and, within small limits, are
// either refused as malformed (*parseError) or over a limit (*limitError),
// or are valid JSON, recognised by Accepts' sniffing, whose rows match an independent reading of the file,
// each with a finite value and a distinct id. The Parquet writing is left
// out (TestFixtures and TestRefuses check it), so the fuzzer spends its
// time in the decoder.
func FuzzDecode(f *testing.F) {
	for _, p := range local(f) {
		b, _ := os.ReadFile(p)
		f.Add(b)
	}
	f.Add([]byte(`{"results":[{"command":"a","times":[0.1,0.2],"user":[0,0],"system":0,"exit_codes":[0,null],"memory_usage_byte":[1,2],"parameters":{"n":"1"}}]}`))
	f.Add([]byte(`{"results":[{"command":"a","times":[1],"parameter":"x","other":{"k":[[]]}},{"command":"a","times":[2]}]}`))
	lim := config.Limits{MaxSamples: 1 << 12, MaxJSONDepth: 16, MaxStrings: 1 << 10, MaxStringBytes: 1 << 16, MaxDecompressedBytes: 1 << 20}
	f.Fuzz(func(t *testing.T, data []byte) {
		sniffed := sniff(data)
		x, err := decode(bytes.NewReader(data), lim)
		if err != nil {
			var pe *parseError
			var le *limitError
			if !errors.As(err, &pe) && !errors.As(err, &le) {
				t.Fatalf("error %T %v", err, err)
			}
			return
		}
		if !json.Valid(data) {
			t.Fatalf("invalid JSON decoded: %q", data)
		}
		if !sniffed {
			t.Fatalf("decoded but not recognised: %q", data)
		}
		ids := map[string]bool{}
		r := &rows{Measurements: adapter.Measurements{RunID: "r", ArtifactID: "a"}, put: func(m schema.Measurement) error {
			if ids[m.ID] {
				t.Fatalf("duplicate id %s (%s)", m.ID, m.Name)
			}
			ids[m.ID] = true
			return nil
		}}
		if err := r.export(context.Background(), x); err != nil {
			t.Fatal(err)
		}
		want := 0
		for _, n := range counts(t, data) {
			want += n
		}
		if r.N != int64(want) {
			t.Fatalf("%d rows, %d in the file", r.N, want)
		}
		limitations(x)
	})
}
