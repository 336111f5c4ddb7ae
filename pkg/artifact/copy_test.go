package artifact

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestCopyHash stages files around the chunk and ring boundaries and
// checks that the staged file holds the source's bytes under its SHA-256,
// with its head, and that an over-budget source stops one byte past the
// limit.
func TestCopyHash(t *testing.T) {
	sizes := []int{0, 1, headSize - 1, headSize + 1, hashChunkSize - 1, hashChunkSize + 1, hashChunks*hashChunkSize + 1, chunkSize - 1, chunkSize, chunkSize + 1,
		chunks*chunkSize - 1, chunks * chunkSize, chunks*chunkSize + 1, 3*chunks*chunkSize + 5}
	rng := rand.New(rand.NewPCG(1, 2))
	dir := t.TempDir()
	for _, size := range sizes {
		data := make([]byte, size)
		for i := range data {
			data[i] = byte(rng.Uint32())
		}
		src := write(t, dir, "src", data)
		sum := sha256.Sum256(data)
		for _, limit := range []int64{int64(size) + 10, int64(size), int64(size) - 1, chunkSize - 1, chunkSize} {
			if limit < 0 {
				continue
			}
			n, head, id, staged, err := copyOnce(t, context.Background(), src, limit)
			if err != nil {
				t.Fatalf("size %d limit %d: %v", size, limit, err)
			}
			if limit < int64(size) { // over the budget: one byte past it
				if n != limit+1 || !bytes.Equal(staged, data[:limit+1]) {
					t.Errorf("size %d limit %d: read %d bytes, staged %d, want %d", size, limit, n, len(staged), limit+1)
				}
				continue
			}
			if n != int64(size) || id != hex.EncodeToString(sum[:]) || !bytes.Equal(staged, data) {
				t.Errorf("size %d limit %d: %d bytes, digest %s, staged bytes equal %v", size, limit, n, id, bytes.Equal(staged, data))
			}
			if want := data[:min(size, headSize)]; !bytes.Equal(head, want) || head == nil {
				t.Errorf("size %d limit %d: head of %d bytes, want %d", size, limit, len(head), len(want))
			}
		}
		// Hashing alone (no destination), with its smaller ring.
		for _, limit := range []int64{int64(size) + 10, int64(size), int64(size) - 1} {
			if limit < 0 {
				continue
			}
			f, err := os.Open(src)
			if err != nil {
				t.Fatal(err)
			}
			h := sha256.New()
			n, head, err := copyHash(context.Background(), nil, h, f, limit)
			f.Close()
			want := data[:min(int64(size), limit+1)]
			wsum := sha256.Sum256(want)
			if err != nil || n != int64(len(want)) || !bytes.Equal(h.Sum(nil), wsum[:]) || !bytes.Equal(head, want[:min(len(want), headSize)]) {
				t.Errorf("hash only, size %d limit %d: %d bytes, %v", size, limit, n, err)
			}
		}
	}
}

// TestCopyHashFailures: a cancelled context, an unreadable source and an
// unwritable destination each end copyHash with an error that says which,
// and leave no goroutine of it behind.
func TestCopyHashFailures(t *testing.T) {
	dir := t.TempDir()
	src := write(t, dir, "src", bytes.Repeat([]byte("x"), 3*chunks*chunkSize))
	before := runtime.NumGoroutine()

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, _, _, err := copyOnce(t, ctx, src, 1<<40); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v, want context.Canceled", err)
	}

	f, err := os.Open(dir) // a directory: every read fails
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dst, err := os.Create(filepath.Join(t.TempDir(), "payload"))
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	if _, _, err := copyHash(context.Background(), dst, sha256.New(), f, 1<<40); err == nil || !strings.Contains(err.Error(), "read source") {
		t.Errorf("unreadable source: %v, want a read error", err)
	}

	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	ro, err := os.Open(dst.Name()) // opened read-only: every write fails
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if _, _, err := copyHash(context.Background(), ro, sha256.New(), in, 1<<40); err == nil || !strings.Contains(err.Error(), "write staged payload") {
		t.Errorf("unwritable destination: %v, want a write error", err)
	}

	for i := 0; runtime.NumGoroutine() > before && i < 100; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Errorf("%d goroutines left behind", n-before)
	}
}

// copyOnce stages src into a fresh file.
func copyOnce(t *testing.T, ctx context.Context, src string, limit int64) (int64, []byte, string, []byte, error) {
	t.Helper()
	f, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dstPath := filepath.Join(t.TempDir(), "payload")
	dst, err := os.OpenFile(dstPath, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	h := sha256.New()
	n, head, err := copyHash(ctx, dst, h, f, limit)
	staged, _ := os.ReadFile(dstPath)
	return n, head, hex.EncodeToString(h.Sum(nil)), staged, err
}

// BenchmarkStageImport stages the file FLAMEOX_STAGE_FILE names (a
// 256 MiB random file when unset) into a fresh store: open, copy, hash,
// fsync, identity recheck. scripts/bench/import.sh runs it beside
// `openssl dgst -sha256` and the whole `flameox import`.
func BenchmarkStageImport(b *testing.B) {
	src := os.Getenv("FLAMEOX_STAGE_FILE")
	if src == "" {
		data := make([]byte, 256<<20)
		rng := rand.New(rand.NewPCG(3, 4))
		for i := 0; i < len(data); i += 8 {
			binary.LittleEndian.PutUint64(data[i:], rng.Uint64())
		}
		src = filepath.Join(b.TempDir(), "big.bin")
		if err := os.WriteFile(src, data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	fi, err := os.Stat(src)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(fi.Size())
	for b.Loop() {
		s := &Store{Root: b.TempDir()}
		for _, d := range []string{"artifacts/sha256", "staging"} {
			os.MkdirAll(filepath.Join(s.Root, d), 0o700)
		}
		st, err := s.StageImport(context.Background(), src, 1<<40)
		if err != nil {
			b.Fatal(err)
		}
		st.Discard()
	}
}
