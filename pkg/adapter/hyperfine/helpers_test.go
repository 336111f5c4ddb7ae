package hyperfine

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/flameox/flameox/pkg/adapter"
	"github.com/flameox/flameox/pkg/adapter/adaptertest"
	"github.com/flameox/flameox/pkg/internal/testenv"
)

// sharedFixtures holds the hyperfine files that may not be copied into
// testdata/ (no licence). It exists on CI and on every developer machine.
const sharedFixtures = "../../../../shared/fixtures/hyperfine"

// local returns the hyperfine files of testdata/.
func local(t testing.TB) []string {
	t.Helper()
	paths, _ := filepath.Glob("testdata/*.json")
	if len(paths) < 2 {
		t.Fatalf("testdata: %v", paths)
	}
	return paths
}

// shared returns the shared hyperfine files, skipping t when the folder
// is absent, unless CI=true, where its absence is a failure.
func shared(t testing.TB) []string {
	t.Helper()
	paths, _ := filepath.Glob(filepath.Join(sharedFixtures, "*.json"))
	if len(paths) == 0 {
		testenv.Unable(t, "shared fixtures", "absent", "%s", sharedFixtures)
	}
	return paths
}

func newSink(t testing.TB) *adaptertest.Sink {
	return adaptertest.NewSink(t, ExtractorName, ExtractorVersion)
}

func inputOf(t testing.TB, path string) adapter.ExtractInput {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return adapter.ExtractInput{RunID: "run-1", ArtifactID: "sha256:abc", Kind: "benchmark_samples", Path: path, Head: b[:min(len(b), 4096)]}
}

// counts reads a hyperfine file independently of the decoder, with
// encoding/json into generic maps, and returns the rows it should give
// per measurement name: one wall time per entry of times, one exit code
// per non-null entry of exit_codes, one peak memory per entry of
// memory_usage_byte, and one user and system time per command (a number,
// hyperfine's mean) or per run (an array).
func counts(t testing.TB, raw []byte) map[string]int {
	t.Helper()
	var f map[string]any // not a struct: encoding/json matches field names without case
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, r := range f["results"].([]any) {
		r := r.(map[string]any)
		out[nameWall] += len(r["times"].([]any))
		codes, _ := r["exit_codes"].([]any)
		for _, c := range codes {
			if c != nil {
				out[nameExit]++
			}
		}
		mem, _ := r["memory_usage_byte"].([]any)
		out[nameMaxRSS] += len(mem)
		for name, key := range map[string]string{nameUser: "user", nameSystem: "system"} {
			switch v := r[key].(type) {
			case float64:
				out[name]++
			case []any:
				out[name] += len(v)
			}
		}
	}
	for k, v := range out {
		if v == 0 {
			delete(out, k)
		}
	}
	return out
}
