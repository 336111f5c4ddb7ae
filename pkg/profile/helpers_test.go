package profile

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flameox/flameox/pkg/internal/testenv"
)

// sharedFixtures holds the fixtures that may not be copied into testdata/
// (CDDL or unlicensed). It exists on CI and on every developer machine.
const sharedFixtures = "../../../shared/fixtures"

// shared returns the path of a shared fixture, skipping the test when the
// folder is absent, unless CI=true, where its absence is a failure.
func shared(t testing.TB, rel string) string {
	t.Helper()
	if _, err := os.Stat(sharedFixtures); err != nil {
		testenv.Unable(t, "shared fixtures", "absent", "%v", err)
	}
	p := filepath.Join(sharedFixtures, rel)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("shared fixture missing: %v", err)
	}
	return p
}

// readPlain reads a file, gunzipping it when it is gzip, for the tests' own
// independent scans.
func readPlain(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.HasPrefix(b, []byte{0x1f, 0x8b}) {
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		if b, err = io.ReadAll(zr); err != nil {
			t.Fatal(err)
		}
	}
	return b
}

func parseFile(t testing.TB, path string) *Profile {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := Parse(f, Options{})
	if err != nil {
		t.Fatalf("Parse(%s): %v", path, err)
	}
	if err := p.P.CheckValid(); err != nil {
		t.Fatalf("Parse(%s) gave an invalid profile: %v", path, err)
	}
	return p
}

func mustIndex(t testing.TB, p *Profile, name string) int {
	t.Helper()
	idx, err := p.P.SampleIndexByName(name)
	if err != nil {
		t.Fatalf("sample type %q: %v", name, err)
	}
	return idx
}

// total is Totals' first result for a named sample type.
func total(t testing.TB, p *Profile, name string) int64 {
	t.Helper()
	tot, _ := Totals(p.P, mustIndex(t, p, name))
	return tot
}

// labelTotals sums one sample type per value of a string label.
func labelTotals(t testing.TB, p *Profile, typ, key string) map[string]int64 {
	t.Helper()
	idx := mustIndex(t, p, typ)
	out := map[string]int64{}
	for _, s := range p.P.Sample {
		if len(s.Label[key]) != 1 {
			t.Fatalf("sample without exactly one %q label: %v", key, s.Label)
		}
		out[s.Label[key][0]] += s.Value[idx]
	}
	return out
}

// scanLines calls fn on every line of b.
func scanLines(b []byte, fn func(string)) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		fn(strings.TrimRight(sc.Text(), "\r"))
	}
}
