package trace

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"math/big"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/flameox/flameox/pkg/adapter"
	"github.com/flameox/flameox/pkg/adapter/adaptertest"
	"github.com/flameox/flameox/pkg/internal/testenv"
)

// sharedFixtures holds the chrome-trace fixtures; the largest is read in
// place rather than copied.
const sharedFixtures = "../../../../shared/fixtures/chrome-trace"

const largest = "hta__ns_resolution_rank-0.pt.trace.json.gz"

func local(t testing.TB) []string {
	t.Helper()
	paths, _ := filepath.Glob("testdata/*.json.gz")
	if len(paths) < 4 {
		t.Fatalf("testdata: %v", paths)
	}
	return paths
}

// shared returns the shared fixture path of name, skipping t when the
// folder is absent, unless CI=true, where its absence is a failure.
func shared(t testing.TB, name string) string {
	t.Helper()
	p := filepath.Join(sharedFixtures, name)
	if _, err := os.Stat(p); err != nil {
		testenv.Unable(t, "shared fixtures", "absent", "%s", p)
	}
	return p
}

func newSink(t testing.TB) *adaptertest.Sink {
	return adaptertest.NewSink(t, ExtractorName, ExtractorVersion)
}

func inputOf(t testing.TB, path string) adapter.ExtractInput {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return adapter.ExtractInput{RunID: "run-1", ArtifactID: "sha256:abc", Kind: KindTrace, Path: path, Head: b[:min(len(b), 64<<10)]}
}

func writeFile(t testing.TB, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "trace.json")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func gz(t testing.TB, data []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	z := gzip.NewWriter(&buf)
	z.Write(data)
	z.Close()
	return buf.Bytes()
}

// plain returns the JSON of a fixture, gunzipped.
func plain(t testing.TB, path string) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(z)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// opKey is a slice name and category.
type opKey struct{ name, cat string }

type opTotal struct {
	count, total, self int64
}

// independent is a reading of a trace with encoding/json into generic
// maps, sharing nothing with the streaming reader: complete events and
// B/E pairs (per pid and tid, in time order) and b/e pairs (per pid,
// category and id), with their durations in nanoseconds through float64
// (exact for the fixtures' three decimals), and the per-name totals. When
// self is set it also computes self times by the definition (a slice's
// duration less the durations of the slices whose innermost enclosing
// slice on the same track it is), in quadratic time.
func independent(t testing.TB, raw []byte, self bool) (slices int, ops map[opKey]*opTotal) {
	t.Helper()
	var doc any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	var evs []any
	switch d := doc.(type) {
	case map[string]any:
		evs = d["traceEvents"].([]any)
	case []any:
		evs = d
	}
	type sl struct {
		track      string
		start, end int64
		name, cat  string
		order      int
	}
	var all []sl
	type be struct {
		ts        int64
		begin     bool
		name, cat string
		order     int
	}
	pending := map[string][]be{}
	key := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	for i, e := range evs {
		ev := e.(map[string]any)
		ph, _ := ev["ph"].(string)
		ts := ratNs(ev["ts"])
		name, _ := ev["name"].(string)
		cat, _ := ev["cat"].(string)
		track := key(ev["pid"]) + "/" + key(ev["tid"])
		switch ph {
		case "X":
			dur := max(ratNs(ev["dur"]), 0)
			all = append(all, sl{track, ts, ts + dur, name, cat, i})
		case "B", "E":
			pending[track] = append(pending[track], be{ts, ph == "B", name, cat, i})
		case "b", "e":
			k := key(ev["pid"]) + "/async/" + cat + "/" + key(ev["id"])
			pending[k] = append(pending[k], be{ts, ph == "b", name, cat, i})
		}
	}
	for track, ms := range pending {
		sort.SliceStable(ms, func(i, j int) bool { return ms[i].ts < ms[j].ts })
		var open []be
		for _, m := range ms {
			if m.begin {
				open = append(open, m)
			} else if len(open) > 0 {
				o := open[len(open)-1]
				open = open[:len(open)-1]
				all = append(all, sl{track, o.ts, m.ts, o.name, o.cat, o.order})
			}
		}
	}
	ops = map[opKey]*opTotal{}
	ns := func(v int64) int64 { return v }
	for _, s := range all {
		k := opKey{s.name, s.cat}
		o := ops[k]
		if o == nil {
			o = &opTotal{}
			ops[k] = o
		}
		o.count++
		o.total += ns(s.end) - ns(s.start)
	}
	if self {
		children := make([]int64, len(all))
		for i, c := range all {
			best := -1
			for j, p := range all {
				if j == i || p.track != c.track || p.start > c.start || p.end < c.end || c.start >= p.end {
					continue
				}
				// p encloses c; the innermost is the latest to start, the
				// shortest among those, the earlier in the file.
				if p.start == c.start && p.end == c.end && p.order > c.order {
					continue
				}
				if best < 0 || p.start > all[best].start || (p.start == all[best].start && (p.end < all[best].end || (p.end == all[best].end && p.order > all[best].order))) {
					best = j
				}
			}
			if best >= 0 {
				children[best] += ns(c.end) - ns(c.start)
			}
		}
		for i, s := range all {
			ops[opKey{s.name, s.cat}].self += max(ns(s.end)-ns(s.start)-children[i], 0)
		}
	}
	return len(all), ops
}

// ratNs is a JSON number of microseconds as nanoseconds, through exact
// rational arithmetic (rounded half away from zero); 0 when absent.
func ratNs(v any) int64 {
	n, ok := v.(json.Number)
	if !ok {
		return 0
	}
	r, ok := new(big.Rat).SetString(string(n))
	if !ok {
		return 0
	}
	r.Mul(r, big.NewRat(1000, 1))
	f, _ := new(big.Float).SetRat(r).Float64()
	q := new(big.Int).Quo(r.Num(), r.Denom())
	rem := new(big.Rat).Sub(r, new(big.Rat).SetInt(q))
	half := big.NewRat(1, 2)
	if f >= 0 && rem.Cmp(half) >= 0 {
		q.Add(q, big.NewInt(1))
	} else if f < 0 && rem.Cmp(new(big.Rat).Neg(half)) <= 0 {
		q.Sub(q, big.NewInt(1))
	}
	return q.Int64()
}

// measurementsBy indexes measurement rows by name and subject (and the
// category dimension).
func measurementsBy(rows []map[string]any, name string) map[opKey]int64 {
	out := map[opKey]int64{}
	for _, r := range rows {
		if r["name"] != name {
			continue
		}
		subject, _ := r["subject"].(string)
		dims := dimsOf(r)
		v, _ := r["value_int"].(int64)
		out[opKey{subject, dims["category"]}] = v
	}
	return out
}

func dimsOf(r map[string]any) map[string]string {
	out := map[string]string{}
	switch d := r["dimensions"].(type) {
	case map[string]string:
		return d
	case map[string]any:
		for k, v := range d {
			out[k], _ = v.(string)
		}
	}
	return out
}

func contains(ss []string, sub string) bool {
	for _, s := range ss {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}
