package durable

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// noTemps fails when a temporary file was left in dir.
func noTemps(t *testing.T, dir string) {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(dir, ".*.tmp"))
	if len(m) > 0 {
		t.Fatalf("temporary files left: %v", m)
	}
}

func TestCreateExclusiveAlias(t *testing.T) {
	dir := t.TempDir()
	revs := filepath.Join(dir, "revisions")
	os.Mkdir(revs, 0o700)
	alias := filepath.Join(dir, "manifest.json")
	if err := CreateExclusiveAlias(filepath.Join(revs, "0.json"), alias, []byte("zero"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := CreateExclusiveAlias(filepath.Join(revs, "1.json"), alias, []byte("one"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := read(t, alias); got != "one" {
		t.Fatalf("alias holds %q, want the newest revision", got)
	}
	if got := read(t, filepath.Join(revs, "0.json")); got != "zero" {
		t.Fatalf("replacing the alias changed an older revision: %q", got)
	}
	// A second writer of the same revision loses and changes nothing.
	err := CreateExclusiveAlias(filepath.Join(revs, "1.json"), alias, []byte("other"), 0o600)
	if !errors.Is(err, fs.ErrExist) {
		t.Fatalf("second writer: %v, want ErrExist", err)
	}
	if got := read(t, alias); got != "one" {
		t.Fatalf("a losing writer replaced the alias: %q", got)
	}
	if fi, _ := os.Stat(alias); fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v", fi.Mode())
	}
	noTemps(t, revs)
}

func TestWriteVolatileAndSynced(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "heartbeat")
	for _, v := range []string{"a", "bb"} {
		if err := WriteVolatile(p, []byte(v), 0o600); err != nil {
			t.Fatal(err)
		}
		if got := read(t, p); got != v {
			t.Fatalf("got %q, want %q", got, v)
		}
	}
	noTemps(t, dir)
	s := filepath.Join(dir, "staged")
	if err := WriteSynced(s, []byte("x"), 0o400); err != nil {
		t.Fatal(err)
	}
	if err := WriteSynced(s, []byte("y"), 0o400); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("WriteSynced over an existing file: %v", err)
	}
	if got := read(t, s); got != "x" {
		t.Fatalf("got %q", got)
	}
	if err := SyncDirs(dir, dir, filepath.Join(dir, "missing")); err == nil {
		t.Fatal("SyncDirs of a missing directory succeeded")
	}
}
