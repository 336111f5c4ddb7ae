package compare

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"testing"

	"github.com/flameox/flameox/pkg/query"
)

// FuzzBenchView drives the conversion and comparison with arbitrary
// samples (empty, one value, all equal, zeros, NaN, infinities, huge) and
// projections: a structured error or an honest result, never a panic,
// a non-JSON number or a decision from too few values.
func FuzzBenchView(f *testing.F) {
	enc := func(xs ...float64) []byte {
		b := make([]byte, 0, 8*len(xs))
		for _, x := range xs {
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
		}
		return b
	}
	f.Add(enc(), enc(), "", "", "sec/op")
	f.Add(enc(1), enc(2), "", "", "sec/op")
	f.Add(enc(3, 3, 3, 3, 3, 3), enc(3, 3, 3, 3, 3, 3), "", "", "B/op")
	f.Add(enc(0, 0, 0, 0, 0, 0), enc(1, 1, 1, 1, 1, 1, 1), "", "", "sec/op")
	f.Add(enc(math.NaN(), 1, 2), enc(math.Inf(1), 3), ".name:X", "", "B/s")
	f.Add(enc(1, 2, 3, 4, 5, 6, 7), enc(10, 20, 30, 40, 50, 60, 70), "*", "/n", "total-bytes")
	f.Add(enc(1e308, 1e308), enc(-1e308, 5e-324), "bad(", "", "sec/op")
	f.Fuzz(func(t *testing.T, ab, bb []byte, filter, row, unit string) {
		vals := func(b []byte, split int) []query.BenchValue {
			var out []query.BenchValue
			for i := 0; i+8 <= len(b) && i < 8*4096; i += 8 {
				x := math.Float64frombits(binary.LittleEndian.Uint64(b[i:]))
				sub := "X"
				if i/8%split == 1 {
					sub = "Y/n=2"
				}
				out = append(out, query.BenchValue{Producer: "gobench", Worker: "p", Config: map[string]string{"pkg": "p"}, Subject: sub, Procs: "8", Unit: unit, Value: x})
			}
			return out
		}
		for _, th := range []float64{0, 0.05} {
			v, err := BuildBenchView(BenchRequest{RunA: "a", RunB: "b", Filter: filter, Row: row, Limit: 1000, Threshold: th}, vals(ab, 3), vals(bb, 5))
			if err != nil {
				return
			}
			checkBenchView(t, v, th)
		}
	})
}

// checkBenchView: every decision is one of the vocabulary's and claims
// no more than the rows hold.
func checkBenchView(t *testing.T, v *BenchView, th float64) {
	t.Helper()
	if _, err := json.Marshal(v); err != nil {
		t.Fatalf("result does not encode: %v", err)
	}
	for _, r := range v.Rows {
		switch r.Decision {
		case decImprovement, decRegression, decNoDifference, decInconclusive, decDescriptive:
		default:
			t.Fatalf("decision %q", r.Decision)
		}
		meaningful := r.Decision == decImprovement || r.Decision == decRegression
		if meaningful && (!r.Significant || r.Old == nil || r.New == nil) {
			t.Fatalf("%s without a significant comparison: %+v", r.Decision, r)
		}
		// benchmath may call two constant samples different at any
		// size (benchstat shows them so); a decision needs 6 values a side.
		if r.Old != nil && r.New != nil && (r.Old.N < 6 || r.New.N < 6) && (meaningful || r.Decision == decNoDifference) {
			t.Fatalf("%s from %d and %d values", r.Decision, r.Old.N, r.New.N)
		}
		if r.Validity != validityExploratory {
			t.Fatalf("validity %s for unpaired samples", r.Validity)
		}
		// No difference is shown only inside a band, by both medians'
		// intervals: never at threshold 0, never from a point estimate.
		if r.Decision == decNoDifference {
			o, n := r.Old, r.New
			if th == 0 || o.Lo == nil || o.Hi == nil || n.Lo == nil || n.Hi == nil || !(*o.Lo > 0) ||
				*n.Lo / *o.Hi < 1-th || *n.Hi / *o.Lo > 1+th {
				t.Fatalf("no_meaningful_difference at threshold %v without bounds inside it: %+v %+v", th, o, n)
			}
		}
		if th > 0 && meaningful && r.Ratio != nil && math.Abs(*r.Ratio-1) <= th {
			t.Fatalf("%s at threshold %v from a ratio of %v", r.Decision, th, *r.Ratio)
		}
	}
}
