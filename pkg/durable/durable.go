// Package durable writes files so that a crash leaves either the old content
// or the new content, never a torn file: write a temporary file in the same
// directory, fsync it, rename it over the target, then fsync the directory.
//
// Every manifest, projection, commit and HEAD in a workspace goes through
// this package; it is the building block of the commit protocol.
package durable

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// WriteFile atomically replaces path with data (mode perm).
func WriteFile(path string, data []byte, perm fs.FileMode) error {
	name, err := writeTemp(path, data, perm, true)
	if err != nil {
		return err
	}
	if err := os.Rename(name, path); err != nil {
		os.Remove(name)
		return fmt.Errorf("rename into %s: %w", path, err)
	}
	return SyncDir(filepath.Dir(path))
}

// WriteJSON atomically writes v as indented JSON with a trailing newline.
func WriteJSON(path string, v any, perm fs.FileMode) error {
	data, err := MarshalIndent(v)
	if err != nil {
		return fmt.Errorf("encode %s: %w", path, err)
	}
	return WriteFile(path, data, perm)
}

// MarshalIndent is the one JSON layout used for files a person may read.
func MarshalIndent(v any) ([]byte, error) {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}

// CreateExclusive writes data to path only if path does not exist yet,
// atomically: the content is written and synced under a temporary name and
// then hard-linked into place, so readers never see a partial file and two
// writers cannot both win. It returns fs.ErrExist when path already exists.
func CreateExclusive(path string, data []byte, perm fs.FileMode) error {
	name, err := writeTemp(path, data, perm, true)
	if err != nil {
		return err
	}
	defer os.Remove(name)
	if err := link(name, path); err != nil {
		return err
	}
	return SyncDir(filepath.Dir(path))
}

// CreateExclusiveAlias is CreateExclusive plus a second name: after path
// is created, alias is atomically replaced by another link to the same
// bytes (a projection of the newest of several immutable files). The data
// is synced once, and path's directory after both names exist. The
// alias's directory is not synced: the alias is derived, a crash may
// leave the old one, and its readers must not trust it over path (pkg/run
// reads the newest revision; recovery rebuilds the projection). The
// directories in alsoSync (say, the alias's, or the parent of a directory
// just created for path) are synced last.
func CreateExclusiveAlias(path, alias string, data []byte, perm fs.FileMode, alsoSync ...string) error {
	name, err := writeTemp(path, data, perm, true)
	if err != nil {
		return err
	}
	defer os.Remove(name) // a no-op once it is renamed to alias
	if err := link(name, path); err != nil {
		return err
	}
	if err := os.Rename(name, alias); err != nil {
		return fmt.Errorf("rename into %s: %w", alias, err)
	}
	return SyncDirs(append([]string{filepath.Dir(path)}, alsoSync...)...)
}

// WriteSynced creates path (which must not exist) with data and fsyncs
// the data but not the directory: for staged files whose name does not
// have to survive a crash, only their content once they are linked into
// place (and that directory synced). On failure it removes what it created.
func WriteSynced(path string, data []byte, perm fs.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	// The *os.PathError of Write, Sync and Close names path and keeps the
	// errno (fault.As turns ENOSPC into STORAGE_FULL naming its directory).
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(path)
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		os.Remove(path)
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(path)
		return err
	}
	return nil
}

// WriteVolatile atomically replaces path with data, without fsync: a
// process that dies leaves the old or the new content, but after a power
// loss the file may be empty or missing. It is for liveness records
// (heartbeats, staging owners) that mean nothing after a reboot and whose
// readers treat an unreadable record as "owner gone".
func WriteVolatile(path string, data []byte, perm fs.FileMode) error {
	name, err := writeTemp(path, data, perm, false)
	if err != nil {
		return err
	}
	if err := os.Rename(name, path); err != nil {
		os.Remove(name)
		return fmt.Errorf("rename into %s: %w", path, err)
	}
	return nil
}

// writeTemp writes data to a new temporary file beside path (mode perm,
// synced when sync is set) and returns its name; on failure nothing is
// left behind.
func writeTemp(path string, data []byte, perm fs.FileMode, sync bool) (string, error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return "", fmt.Errorf("create temporary file for %s: %w", path, err)
	}
	name := tmp.Name()
	err = tmp.Chmod(perm)
	if err == nil {
		_, err = tmp.Write(data)
	}
	if err == nil && sync {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(name)
		return "", err // an *os.PathError naming the file, errno kept
	}
	return name, nil
}

// link hard-links name to path, reporting fs.ErrExist when path exists.
func link(name, path string) error {
	if err := os.Link(name, path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fs.ErrExist
		}
		return fmt.Errorf("link into %s: %w", path, err)
	}
	return nil
}

// SyncDirs fsyncs each distinct directory in order. Make every change
// first and sync afterwards: the first sync commits the file system's
// journal with all of them, and the rest return almost at once.
func SyncDirs(dirs ...string) error {
	seen := make(map[string]bool, len(dirs))
	for _, d := range dirs {
		if seen[d] {
			continue
		}
		seen[d] = true
		if err := SyncDir(d); err != nil {
			return err
		}
	}
	return nil
}

// SyncDir fsyncs a directory so that renames and creations in it survive a
// crash.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("open directory %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return err // an *os.PathError naming dir
	}
	return nil
}

// SyncFile fsyncs an existing file by path.
func SyncFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

// RandomHex returns n random bytes as lowercase hex, for temporary and
// staging names.
func RandomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand never fails on Linux
	}
	return hex.EncodeToString(b)
}
