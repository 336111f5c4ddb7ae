package fleet

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzReadManifest: whatever an export directory's manifest holds,
// ReadManifest returns an error or a manifest whose every file lies in
// that directory, under its own table and workspace: readers open those
// paths.
func FuzzReadManifest(f *testing.F) {
	const ws = "0b1e3c6e-9a3e-4f2e-8f7c-000000000001"
	f.Add([]byte(`{"schema_version":1,"format":"flameox.corpus-export","workspace_id":"` + ws + `","tables":{},"files":[{"path":"runs/workspace_id=` + ws + `/date=2026-12-02/part-abc-0.parquet","table":"runs"}]}`))
	f.Add([]byte(`{"schema_version":1,"format":"flameox.corpus-export","workspace_id":"` + ws + `","files":[{"path":"../workspace_id=` + ws + `/date=2026-12-02/part-abc-0.parquet","table":".."}]}`))
	f.Add([]byte(`{"files":null}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		os.MkdirAll(filepath.Join(dir, "manifests"), 0o700)
		if err := os.WriteFile(manifestPath(dir, ws), data, 0o600); err != nil {
			t.Fatal(err)
		}
		m, err := ReadManifest(dir, ws)
		if err != nil || m == nil {
			return
		}
		for _, file := range m.Files {
			p := filepath.Join(dir, filepath.FromSlash(file.Path))
			rel, err := filepath.Rel(dir, p)
			if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(file.Path) {
				t.Fatalf("manifest lists %q, outside the export directory", file.Path)
			}
			if top, _, _ := strings.Cut(rel, string(filepath.Separator)); top != file.Table || file.Table == "" || file.Table == "." || file.Table == "manifests" {
				t.Fatalf("manifest lists %q under table %q", file.Path, file.Table)
			}
		}
	})
}
