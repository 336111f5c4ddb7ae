package status

import (
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/flameox/flameox/pkg/workspace"
)

// CacheDir is the workspace directory holding the writable caches of
// contained captures (capture.CacheDir).
const CacheDir = "cache"

// CacheStats is one cache directory under .diagnostics/cache.
type CacheStats struct {
	Name  string `json:"name"`
	Files int    `json:"files"`
	Bytes int64  `json:"bytes"`
}

// caches counts each directory of .diagnostics/cache: files and bytes, by
// a walk that follows no link. A missing cache directory counts nothing.
func caches(ws *workspace.Workspace) []CacheStats {
	out := []CacheStats{}
	ents, err := os.ReadDir(ws.Path(CacheDir))
	if err != nil {
		return out
	}
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		c := CacheStats{Name: e.Name()}
		filepath.WalkDir(ws.Path(CacheDir, e.Name()), func(_ string, d fs.DirEntry, err error) error {
			if err != nil || !d.Type().IsRegular() {
				return nil
			}
			if fi, err := d.Info(); err == nil {
				c.Files++
				c.Bytes += fi.Size()
			}
			return nil
		})
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
