package status

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/flameox/flameox/pkg/publish"
	"github.com/flameox/flameox/pkg/workspace"
)

// TestCachesCounted: status counts the files and bytes of each cache of
// contained captures, and none in a workspace without them.
func TestCachesCounted(t *testing.T) {
	ctx := context.Background()
	res, err := workspace.Init(ctx, t.TempDir(), time.Now(), publish.FirstCommit)
	if err != nil {
		t.Fatal(err)
	}
	ws := res.Workspace
	st, err := Collect(ctx, ws)
	if err != nil || st.Caches == nil || len(st.Caches) != 0 {
		t.Fatalf("fresh workspace caches %v, %v", st, err)
	}
	for path, body := range map[string]string{"go-build/ab/x-a": "abc", "gomod/m@v1/y.go": "go", "gomod/cache/z": "z"} {
		p := filepath.Join(ws.Path(CacheDir), path)
		os.MkdirAll(filepath.Dir(p), 0o700)
		os.WriteFile(p, []byte(body), 0o600)
	}
	st, err = Collect(ctx, ws)
	if err != nil {
		t.Fatal(err)
	}
	want := []CacheStats{{Name: "go-build", Files: 1, Bytes: 3}, {Name: "gomod", Files: 2, Bytes: 3}}
	if !reflect.DeepEqual(st.Caches, want) {
		t.Fatalf("caches %+v, want %+v", st.Caches, want)
	}
}
