package corpus

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"

	"github.com/flameox/flameox/pkg/durable"
	"github.com/flameox/flameox/pkg/evidence/schema"
	"github.com/flameox/flameox/pkg/fault"
)

// AnchorPath returns the typed empty anchor of table in the workspace root:
// evidence/<table>/_anchor-v<major>.<minor>.parquet. The name does not start
// with "generation=", so no generation manifest ever lists it; garbage
// collection must keep it.
func AnchorPath(root string, t *schema.Table) string {
	return filepath.Join(root, "evidence", t.Name, fmt.Sprintf("_anchor-v%d.%d.parquet", t.Major, t.Minor))
}

// anchorBytes renders the typed empty Parquet file of t.
func anchorBytes(t *schema.Table) ([]byte, error) {
	var buf bytes.Buffer
	if err := schema.WriteEmpty(t, &buf); err != nil {
		return nil, fault.Wrap(fault.InternalError, err, "render the empty anchor of %s", t.ID())
	}
	return buf.Bytes(), nil
}

// EnsureAnchors writes, atomically, every table's anchor that is missing or
// differs from the file this binary would write (it is a pure function of
// the schema, so comparing bytes is the validity check). A symlink in its
// place is replaced by a regular file.
//
// The tables are done concurrently, one per core: rendering an empty
// Parquet file is most of `flameox init`'s own work.
func EnsureAnchors(root string) error {
	tables := schema.Tables()
	errs := make([]error, len(tables))
	next := make(chan int, len(tables))
	for i := range tables {
		next <- i
	}
	close(next)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(tables)) {
		wg.Go(func() {
			for i := range next {
				errs[i] = ensureAnchor(root, tables[i])
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err // the first table's, as when they were done in turn
		}
	}
	return nil
}

// ensureAnchor writes t's anchor unless it is there with the right bytes.
func ensureAnchor(root string, t *schema.Table) error {
	want, err := anchorBytes(t)
	if err != nil {
		return err
	}
	path := AnchorPath(root, t)
	if fi, err := os.Lstat(path); err == nil && fi.Mode().IsRegular() && fi.Size() == int64(len(want)) {
		if got, err := os.ReadFile(path); err == nil && bytes.Equal(got, want) {
			return nil
		}
	}
	return writeAnchor(path, want)
}

// Anchors returns the anchor of every table by table name, writing the
// ones that are missing or not regular files. It only Lstats the others: a
// reader's open must stay cheap, and EnsureAnchors does the full check.
func Anchors(root string) (map[string]string, error) {
	out := make(map[string]string, len(schema.Tables()))
	for _, t := range schema.Tables() {
		path := AnchorPath(root, t)
		if fi, err := os.Lstat(path); err != nil || !fi.Mode().IsRegular() || fi.Size() == 0 {
			data, err := anchorBytes(t)
			if err != nil {
				return nil, err
			}
			if err := writeAnchor(path, data); err != nil {
				return nil, err
			}
		}
		out[t.Name] = path
	}
	return out, nil
}

func writeAnchor(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fault.Wrap(fault.WorkspaceInvalid, err, "create %s", filepath.Dir(path))
	}
	if fi, err := os.Lstat(path); err == nil && !fi.Mode().IsRegular() {
		if err := os.Remove(path); err != nil {
			return fault.Wrap(fault.WorkspaceInvalid, err, "remove the non-regular anchor %s", path)
		}
	}
	// Not synced: an anchor is a pure function of the schema, and one that
	// a power loss left missing or empty is written again by the next
	// reader (Anchors) or by EnsureAnchors, which compares bytes. (The
	// 40 fsyncs were a fifth of `flameox init`.)
	if err := durable.WriteVolatile(path, data, 0o644); err != nil {
		return fault.Wrap(fault.WorkspaceInvalid, err, "write anchor %s", path)
	}
	return nil
}
