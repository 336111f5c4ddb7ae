package artifact

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/flameox/flameox/pkg/fault"
)

func newStore(t *testing.T) *Store {
	root := t.TempDir()
	for _, d := range []string{"artifacts/sha256", "staging"} {
		os.MkdirAll(filepath.Join(root, d), 0o700)
	}
	return &Store{Root: root}
}

func stagingEmpty(t *testing.T, s *Store) {
	t.Helper()
	ents, _ := os.ReadDir(filepath.Join(s.Root, "staging"))
	if len(ents) != 0 {
		t.Fatalf("staging not empty: %v", ents)
	}
}

func write(t *testing.T, dir, name string, data []byte) string {
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestStageAndPlace(t *testing.T) {
	s := newStore(t)
	data := bytes.Repeat([]byte("flameox "), 1<<20) // 8 MiB: spans several chunks
	src := write(t, t.TempDir(), "cpu.pb.gz", data)
	st, err := s.StageImport(context.Background(), src, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	if want := "sha256:" + hex.EncodeToString(sum[:]); st.ArtifactID != want || st.Size != int64(len(data)) {
		t.Fatalf("staged %s/%d, want %s/%d", st.ArtifactID, st.Size, want, len(data))
	}
	c, existed, err := s.Place(st, PayloadExt(src))
	if err != nil || existed {
		t.Fatalf("place: %v existed=%v", err, existed)
	}
	st.Discard()
	if c.PayloadName != "payload.pb.gz" {
		t.Fatalf("payload name %q", c.PayloadName)
	}
	if err := s.Verify(c.ArtifactID); err != nil {
		t.Fatal(err)
	}
	// Same bytes again: deduplicated, one object.
	st2, err := s.StageImport(context.Background(), src, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	_, existed, err = s.Place(st2, ".other")
	st2.Discard()
	if err != nil || !existed {
		t.Fatalf("second place: %v existed=%v", err, existed)
	}
	stagingEmpty(t, s)
	objs, _ := filepath.Glob(filepath.Join(s.Root, "artifacts/sha256/*/*"))
	if len(objs) != 1 {
		t.Fatalf("objects: %v", objs)
	}
	// An altered byte is detected.
	_, payload, _ := s.Stat(c.ArtifactID)
	os.Chmod(payload, 0o600)
	b, _ := os.ReadFile(payload)
	b[100] ^= 1
	os.WriteFile(payload, b, 0o600)
	if err := s.Verify(c.ArtifactID); !fault.Is(err, fault.ArtifactIntegrityFailed) {
		t.Fatalf("altered payload not detected: %v", err)
	}
}

func TestStageRefuses(t *testing.T) {
	dir := t.TempDir()
	regular := write(t, dir, "regular", []byte("hello"))
	link := filepath.Join(dir, "link")
	os.Symlink(regular, link)
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	hard := write(t, dir, "hard", []byte("two names"))
	os.Link(hard, filepath.Join(dir, "hard2"))
	big := write(t, dir, "big", bytes.Repeat([]byte("x"), 2048))
	sock := filepath.Join(dir, "sock")
	if fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0); err == nil {
		syscall.Bind(fd, &syscall.SockaddrUnix{Name: sock})
		defer syscall.Close(fd)
	}

	tests := []struct {
		name, path string
		code       fault.Code
		say        string
	}{
		{"symlink", link, fault.ExecutionRefused, "symbolic link"},
		{"fifo", fifo, fault.ExecutionRefused, "FIFO"},
		{"directory", dir, fault.ExecutionRefused, "directory"},
		{"device", "/dev/null", fault.ExecutionRefused, "not a regular file"},
		{"socket", sock, fault.ExecutionRefused, "socket"},
		{"hard link", hard, fault.ExecutionRefused, "hard links"},
		{"over budget", big, fault.ArtifactTooLarge, "limit"},
		{"missing", filepath.Join(dir, "nope"), fault.InvalidArguments, "does not exist"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newStore(t)
			_, err := s.StageImport(context.Background(), tt.path, 1024)
			if !fault.Is(err, tt.code) {
				t.Fatalf("got %v, want %s", err, tt.code)
			}
			if !strings.Contains(err.Error(), tt.say) {
				t.Fatalf("message %q lacks %q", err, tt.say)
			}
			stagingEmpty(t, s)
		})
	}
}

func TestStageDetectsChangeDuringCopy(t *testing.T) {
	tests := []struct {
		name   string
		change func(t *testing.T, src string)
	}{
		{"grows", func(t *testing.T, src string) {
			f, _ := os.OpenFile(src, os.O_APPEND|os.O_WRONLY, 0)
			f.WriteString("more")
			f.Close()
		}},
		{"replaced", func(t *testing.T, src string) {
			tmp := src + ".new"
			os.WriteFile(tmp, []byte("same size!"), 0o644)
			os.Rename(tmp, src)
		}},
		{"rewritten in place", func(t *testing.T, src string) {
			f, _ := os.OpenFile(src, os.O_WRONLY, 0)
			f.WriteAt([]byte("X"), 0)
			f.Close()
			// Make sure the mtime moves even on coarse clocks.
			os.Chtimes(src, timeAfter(), timeAfter())
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newStore(t)
			src := write(t, t.TempDir(), "f", []byte("0123456789"))
			s.AfterCopy = func(p string) { tt.change(t, p) }
			_, err := s.StageImport(context.Background(), src, 1<<20)
			if !fault.Is(err, fault.ArtifactIntegrityFailed) {
				t.Fatalf("got %v, want ARTIFACT_INTEGRITY_FAILED", err)
			}
			if !fault.As(err).Retryable {
				t.Fatal("a changed source should be retryable")
			}
			stagingEmpty(t, s)
		})
	}
}

func TestFloors(t *testing.T) {
	core := make([]byte, 64)
	copy(core, "\x7fELF\x02\x01\x01")
	core[16] = 4 // ET_CORE, little endian
	if _, err := CheckFloor(KindMetadata, core, Normal, true); !fault.Is(err, fault.SensitiveArtifactRefused) {
		t.Fatalf("explicit normal core dump accepted: %v", err)
	}
	if got, err := CheckFloor(KindMetadata, core, Internal, false); err != nil || got != Sensitive {
		t.Fatalf("default not raised: %v %v", got, err)
	}
	if got, _ := CheckFloor(KindSourceSnapshot, nil, Internal, false); got != Sensitive {
		t.Fatal("source snapshot not raised")
	}
	if got, _ := CheckFloor(KindSampleProfile, []byte("\x7fELF\x02\x01\x01"), Normal, true); got != Normal {
		t.Fatal("short ELF header treated as core")
	}
	if Max(Normal, Sensitive, Internal) != Sensitive || Max() != Normal {
		t.Fatal("Max")
	}
}

func TestPayloadExt(t *testing.T) {
	for in, want := range map[string]string{
		"cpu.pb.gz": ".pb.gz", "x.json": ".json", "noext": "", "a.b.c.txt": ".txt",
		"evil.$(x)": "", "trace.json.gz": ".json.gz", ".hidden": ".hidden",
	} {
		if got := PayloadExt(in); got != want {
			t.Errorf("PayloadExt(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestStageBeneath: with Beneath set, the file actually opened must be in
// that directory and not in the workspace. A directory above the source
// that is a symlink by the time it is opened (swapped in after the caller
// resolved the path) is refused before anything is staged; the same path
// through real directories is staged.
func TestStageBeneath(t *testing.T) {
	project, _ := filepath.EvalSymlinks(t.TempDir())
	outside := t.TempDir()
	os.MkdirAll(filepath.Join(outside, "profiles"), 0o700)
	write(t, filepath.Join(outside, "profiles"), "cpu.pb", []byte("outside secret"))
	os.MkdirAll(filepath.Join(project, "real", "profiles"), 0o700)
	write(t, filepath.Join(project, "real", "profiles"), "cpu.pb", []byte("inside"))
	ws := filepath.Join(project, ".diagnostics")
	os.MkdirAll(filepath.Join(ws, "artifacts", "sha256"), 0o700)
	os.MkdirAll(filepath.Join(ws, "staging"), 0o700)
	os.MkdirAll(filepath.Join(ws, "x"), 0o700)
	write(t, filepath.Join(ws, "x"), "cpu.pb", []byte("stored"))
	for _, tt := range []struct {
		name, link, to string // link (in the project) → to
		want           fault.Code
		say            string
	}{
		{"outside", "a", outside, fault.ExecutionRefused, "outside " + project},
		{"into the workspace", "b", filepath.Join(ws, "x"), fault.ExecutionRefused, "inside the workspace"},
		{"inside", "c", filepath.Join(project, "real", "profiles"), "", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if err := os.Symlink(tt.to, filepath.Join(project, tt.link)); err != nil {
				t.Fatal(err)
			}
			src := filepath.Join(project, tt.link, "profiles", "cpu.pb")
			if tt.link == "b" || tt.link == "c" {
				src = filepath.Join(project, tt.link, "cpu.pb")
			}
			s := &Store{Root: ws, Beneath: project}
			st, err := s.StageImport(context.Background(), src, 1024)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("a symlink that stays in the project: %v", err)
				}
				st.Discard()
				return
			}
			if !fault.Is(err, tt.want) || !strings.Contains(err.Error(), tt.say) {
				t.Fatalf("got %v, want %s saying %q", err, tt.want, tt.say)
			}
			stagingEmpty(t, s)
			// Without Beneath (the CLI, where the user names any file),
			// the same path is imported.
			s.Beneath = ""
			st, err = s.StageImport(context.Background(), src, 1024)
			if err != nil {
				t.Fatal(err)
			}
			st.Discard()
		})
	}
}

// TestStageFindsStored: a file of a size the store has noted is hashed
// before it is copied; when the store holds its bytes it is not copied
// at all (no staging directory), and Place deduplicates it. Same size
// and other bytes, a noted size whose object is gone, a source that
// changes while it is hashed and an object removed before Place are each
// handled as a copy would be.
func TestStageFindsStored(t *testing.T) {
	ctx := context.Background()
	data := bytes.Repeat([]byte("flameox "), 1<<18) // 2 MiB, past sizeSeenMin
	stage := func(t *testing.T, s *Store, src string) (*Staged, Content, bool) {
		t.Helper()
		st, err := s.StageImport(ctx, src, 1<<30)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Discard()
		c, existed, err := s.Place(st, ".bin")
		if err != nil {
			t.Fatal(err)
		}
		return st, c, existed
	}
	t.Run("same bytes", func(t *testing.T) {
		s := newStore(t)
		src := write(t, t.TempDir(), "a.bin", data)
		first, c, _ := stage(t, s, src)
		if first.Stored || !s.sizeSeen(int64(len(data))) {
			t.Fatalf("first import: stored %v, size noted %v", first.Stored, s.sizeSeen(int64(len(data))))
		}
		var dirs []string
		s.AfterCopy = func(string) {
			ents, _ := os.ReadDir(filepath.Join(s.Root, "staging"))
			for _, e := range ents {
				dirs = append(dirs, e.Name())
			}
		}
		again, c2, existed := stage(t, s, src)
		if !again.Stored || !existed || c2.ArtifactID != c.ArtifactID || len(dirs) != 0 {
			t.Fatalf("re-import: stored %v, existed %v, %s vs %s, staging %v", again.Stored, existed, c2.ArtifactID, c.ArtifactID, dirs)
		}
		if !bytes.Equal(again.Head, data[:headSize]) {
			t.Error("re-import: head differs")
		}
		if err := s.Verify(c.ArtifactID); err != nil {
			t.Fatal(err)
		}
		stagingEmpty(t, s)
	})
	t.Run("same size, other bytes", func(t *testing.T) {
		s := newStore(t)
		stage(t, s, write(t, t.TempDir(), "a.bin", data))
		other := bytes.Clone(data)
		other[len(other)/2] ^= 1
		st, c, existed := stage(t, s, write(t, t.TempDir(), "b.bin", other))
		sum := sha256.Sum256(other)
		if st.Stored || existed || c.ArtifactID != "sha256:"+hex.EncodeToString(sum[:]) {
			t.Fatalf("stored %v, existed %v, %s", st.Stored, existed, c.ArtifactID)
		}
		if err := s.Verify(c.ArtifactID); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("noted size, object gone", func(t *testing.T) {
		s := newStore(t)
		src := write(t, t.TempDir(), "a.bin", data)
		_, c, _ := stage(t, s, src)
		obj := filepath.Join(s.Root, ObjectRel(c.ArtifactID))
		os.Chmod(obj, 0o700)
		if err := os.RemoveAll(obj); err != nil {
			t.Fatal(err)
		}
		st, c2, existed := stage(t, s, src)
		if st.Stored || existed || c2.ArtifactID != c.ArtifactID {
			t.Fatalf("stored %v, existed %v", st.Stored, existed)
		}
		if err := s.Verify(c.ArtifactID); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("changed while hashed", func(t *testing.T) {
		s := newStore(t)
		src := write(t, t.TempDir(), "a.bin", data)
		stage(t, s, src)
		s.AfterCopy = func(p string) {
			f, _ := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
			f.WriteString("more")
			f.Close()
		}
		if _, err := s.StageImport(ctx, src, 1<<30); !fault.Is(err, fault.ArtifactIntegrityFailed) || !fault.As(err).Retryable {
			t.Fatalf("got %v, want a retryable ARTIFACT_INTEGRITY_FAILED", err)
		}
		stagingEmpty(t, s)
	})
	t.Run("object removed before Place", func(t *testing.T) {
		s := newStore(t)
		src := write(t, t.TempDir(), "a.bin", data)
		_, c, _ := stage(t, s, src)
		st, err := s.StageImport(ctx, src, 1<<30)
		if err != nil || !st.Stored {
			t.Fatalf("stored %v, %v", st != nil && st.Stored, err)
		}
		obj := filepath.Join(s.Root, ObjectRel(c.ArtifactID))
		os.Chmod(obj, 0o700)
		os.RemoveAll(obj)
		if _, _, err := s.Place(st, ".bin"); !fault.Is(err, fault.ArtifactIntegrityFailed) || !fault.As(err).Retryable {
			t.Fatalf("got %v, want a retryable ARTIFACT_INTEGRITY_FAILED", err)
		}
	})
}
