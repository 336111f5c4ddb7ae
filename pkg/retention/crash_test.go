//go:build faultinject

package retention_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/flameox/flameox/pkg/artifact"
	"github.com/flameox/flameox/pkg/retention"
	"github.com/flameox/flameox/pkg/workspace"
)

// TestMain lets the test binary act as a collector that a fault point
// kills: with FLAMEOX_RETENTION_CHILD set it runs one gc operation on that
// workspace and exits.
func TestMain(m *testing.M) {
	root := os.Getenv("FLAMEOX_RETENTION_CHILD")
	if root == "" {
		os.Exit(m.Run())
	}
	ws, err := workspace.Open(root)
	if err == nil {
		switch id := os.Getenv("FLAMEOX_RETENTION_TRASH"); id {
		case "":
			_, err = retention.Apply(context.Background(), ws, retention.Options{MinAge: &zero, KeepCommits: keep(0)}, "")
		default:
			_, err = retention.Restore(context.Background(), ws, id)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// tree maps every file of the workspace that gc may touch (not trash, the
// log, the locks) to a digest of its bytes.
func tree(t *testing.T, root string) map[string][32]byte {
	t.Helper()
	out := map[string][32]byte{}
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		top, _, _ := strings.Cut(filepath.ToSlash(rel), "/")
		if d.IsDir() && top == "trash" {
			return filepath.SkipDir
		}
		if d.Type().IsRegular() && !strings.HasSuffix(rel, ".lock") && rel != "operations.jsonl" {
			b, _ := os.ReadFile(p)
			out[filepath.ToSlash(rel)] = sha256.Sum256(b)
		}
		return nil
	})
	return out
}

// TestCrashAtEveryBoundary kills a real process at every named boundary of
// gc --apply and restore, repeatedly: nothing reachable is ever missing,
// every file is at its place or in trash with its bytes, and after the
// next command (which puts interrupted trash back) and a restore, the
// workspace is exactly what it was.
func TestCrashAtEveryBoundary(t *testing.T) {
	iterations := 20
	if testing.Short() {
		iterations = 2
	}
	if v, err := strconv.Atoi(os.Getenv("FLAMEOX_CRASH_ITERATIONS")); err == nil && v > 0 {
		iterations = v
	}
	ctx := context.Background()
	for _, step := range retention.Steps() {
		restoring := slices.Contains([]string{retention.StepRestoring, retention.StepItemRestored, retention.StepRestored}, step)
		t.Run(step, func(t *testing.T) {
			for i := range iterations {
				w := build(t)
				before := tree(t, w.ws.Root)
				env := append(os.Environ(), "FLAMEOX_RETENTION_CHILD="+w.ws.Root, "FLAMEOX_FAULTPOINT="+step)
				if restoring {
					res, err := retention.Apply(ctx, w.ws, retention.Options{MinAge: &zero, KeepCommits: keep(0)}, "")
					if err != nil {
						t.Fatal(err)
					}
					env = append(env, "FLAMEOX_RETENTION_TRASH="+res.TrashID)
				}
				cmd := exec.Command(os.Args[0], "-test.run=^$")
				cmd.Env = env
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				err := cmd.Run()
				var ee *exec.ExitError
				if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
					t.Fatalf("trial %d: the child was not killed at %s: %v %s", i, step, err, stderr.String())
				}
				// Nothing reachable is missing, nothing is half-moved.
				checkIntact(t, w)
				after := tree(t, w.ws.Root)
				for rel, sum := range before {
					if got, ok := after[rel]; ok {
						if got != sum {
							t.Fatalf("trial %d: %s changed", i, rel)
						}
						continue
					}
					if !inTrash(w.ws.Root, rel, sum) {
						t.Fatalf("trial %d: %s is neither in place nor in trash", i, rel)
					}
				}
				// The next command puts interrupted trash back; a restore
				// brings back what was recoverable.
				if _, err := retention.Resume(ctx, w.ws); err != nil {
					t.Fatal(err)
				}
				list, _ := retention.List(w.ws)
				for _, tr := range list.Trash {
					if tr.State == retention.StateRecoverable {
						if _, err := retention.Restore(ctx, w.ws, tr.TrashID); err != nil {
							t.Fatal(err)
						}
					}
				}
				final := tree(t, w.ws.Root)
				for rel, sum := range before {
					if final[rel] != sum {
						t.Fatalf("trial %d: %s not back after recovery", i, rel)
					}
				}
			}
		})
	}
}

func inTrash(root, rel string, sum [32]byte) bool {
	ents, _ := os.ReadDir(filepath.Join(root, "trash"))
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(root, "trash", e.Name(), "objects", filepath.FromSlash(rel)))
		if err == nil && sha256.Sum256(b) == sum {
			return true
		}
	}
	return false
}

// TestSymlinkSwappedInDuringGC swaps a symlink to a directory outside the
// workspace in for what gc --apply is about to move, while a real gc
// process stalls between its journal and its first move (the object
// directory itself, or a directory above it): gc refuses with a
// structured error, nothing outside is read, written or moved, and after
// the swap is undone the next command puts the workspace back as it was.
func TestSymlinkSwappedInDuringGC(t *testing.T) {
	for _, tc := range []struct {
		name string
		swap func(w *world) string // the path replaced by a symlink
	}{
		{"object directory", func(w *world) string {
			return filepath.Join(w.ws.Root, artifact.ObjectRel(w.garbage[retention.KindArtifact][0]))
		}},
		{"parent directory", func(w *world) string {
			return filepath.Dir(filepath.Join(w.ws.Root, artifact.ObjectRel(w.garbage[retention.KindArtifact][0])))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := build(t)
			before := tree(t, w.ws.Root)
			outside := t.TempDir()
			for _, n := range []string{"payload", "artifact.json", "x/y"} {
				os.MkdirAll(filepath.Dir(filepath.Join(outside, n)), 0o700)
				if err := os.WriteFile(filepath.Join(outside, n), []byte("outside "+n), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			outBefore := tree(t, outside)
			ready := filepath.Join(t.TempDir(), "ready")
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), "FLAMEOX_RETENTION_CHILD="+w.ws.Root,
				"FLAMEOX_FAULTPOINT="+retention.StepManifestWritten+":sleep", "FLAMEOX_FAULTPOINT_READY="+ready)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			for {
				if _, err := os.Stat(ready); err == nil {
					break
				}
				if cmd.ProcessState != nil {
					t.Fatal("gc ended before its journal")
				}
				time.Sleep(5 * time.Millisecond)
			}
			target := tc.swap(w)
			away := target + ".away"
			if err := os.Rename(target, away); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(outside, target); err != nil {
				t.Fatal(err)
			}
			err := cmd.Wait()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(stderr.String(), "symlink") {
				t.Fatalf("gc was not refused: %v\n%s", err, stderr.String())
			}
			if got := tree(t, outside); !maps.Equal(got, outBefore) {
				t.Fatalf("outside the workspace changed: %v, was %v", got, outBefore)
			}
			// Undo the swap; the next command rolls the interrupted trash
			// back and the workspace is as it was.
			if err := os.Remove(target); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(away, target); err != nil {
				t.Fatal(err)
			}
			if _, err := retention.Resume(context.Background(), w.ws); err != nil {
				t.Fatal(err)
			}
			checkIntact(t, w)
			if got := tree(t, w.ws.Root); !maps.Equal(got, before) {
				t.Fatalf("the workspace is not back as it was")
			}
		})
	}
}
