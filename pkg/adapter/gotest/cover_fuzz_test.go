package gotest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/flameox/flameox/pkg/config"
	"github.com/flameox/flameox/pkg/fault"
)

// FuzzCoverProfile: any bytes either parse into blocks within the limits
// whose totals are consistent (covered ≤ statements, percent in 0..100,
// lines forwards and within int32), or are refused with
// ARTIFACT_PARSE_FAILED and a reason; never a panic.
func FuzzCoverProfile(f *testing.F) {
	for _, seed := range []string{
		"mode: set\nexample.com/m/a.go:1.1,2.2 1 1\nexample.com/m/a.go:3.1,4.2 2 0\n",
		"mode: count\na.go:1.1,2.2 1 7\na.go:1.1,2.2 1 3\nb.go:5.2,5.30 1 0\n",
		"mode: atomic\na.go:1.1,2.2 1 9223372036854775807\n",
		"mode: bogus\n", "", "mode: set\na.go:1.1,2", "mode: set\n",
	} {
		f.Add([]byte(seed))
	}
	dir := f.TempDir()
	lim := config.Limits{MaxSamples: 64, MaxDecompressedBytes: 1 << 16}
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(dir, "cover.out")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		p, err := readCover(path, lim)
		if err != nil {
			if fe := fault.As(err); fe.Code != fault.ArtifactParseFailed || fe.Details["reason"] == "" {
				t.Fatalf("error %v: want ARTIFACT_PARSE_FAILED with a reason", err)
			}
			return
		}
		var blocks, stmts, covered int64
		for _, f := range p.files {
			for _, b := range f.Blocks {
				if b.StartLine < 1 || b.EndLine < b.StartLine || b.EndLine > 1<<31-1 || b.Count < 0 || b.NumStmt < 0 {
					t.Fatalf("block %+v let through", b)
				}
				blocks++
				stmts += int64(b.NumStmt)
				if b.Count > 0 {
					covered += int64(b.NumStmt)
				}
			}
		}
		if blocks != p.blocks || blocks > lim.MaxSamples || stmts != p.stmts || covered != p.covered || covered > stmts {
			t.Fatalf("totals %d/%d/%d, recounted %d/%d/%d", p.blocks, p.stmts, p.covered, blocks, stmts, covered)
		}
		if pct := percent(p.covered, p.stmts); pct < 0 || pct > 100 {
			t.Fatalf("percent %v", pct)
		}
		p.mapFiles("example.com/m", ".", true)
		if len(p.names) != len(p.files) || len(p.limitations("example.com/m", true)) == 0 {
			t.Fatal("names or limitations missing")
		}
	})
}
