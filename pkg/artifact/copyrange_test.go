package artifact

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// TestCopyHashInKernelMatchesBuffered stages files around the chunk
// boundaries through the kernel's copy and through the buffer, and
// checks that both store the source's bytes under its SHA-256 with the
// same head, and that both stop one byte past the limit.
func TestCopyHashInKernelMatchesBuffered(t *testing.T) {
	sizes := []int{0, 1, headSize - 1, headSize + 1, chunkSize - 1, chunkSize, chunkSize + 1, 3*chunkSize + 5}
	rng := rand.New(rand.NewPCG(1, 2))
	dir := t.TempDir()
	for _, size := range sizes {
		data := make([]byte, size)
		for i := range data {
			data[i] = byte(rng.Uint32())
		}
		src := write(t, dir, "src", data)
		sum := sha256.Sum256(data)
		for _, buffered := range []bool{false, true} {
			for _, limit := range []int64{int64(size) + 10, int64(size) - 1} {
				if limit < 0 {
					continue
				}
				n, head, id, staged := copyOnce(t, src, limit, buffered)
				if limit < int64(size) { // over the budget: one byte past it
					if n != limit+1 {
						t.Errorf("size %d limit %d buffered %v: read %d bytes, want %d", size, limit, buffered, n, limit+1)
					}
					continue
				}
				if n != int64(size) || id != hex.EncodeToString(sum[:]) || !bytes.Equal(staged, data) {
					t.Errorf("size %d buffered %v: %d bytes, digest %s, staged bytes equal %v", size, buffered, n, id, bytes.Equal(staged, data))
				}
				if want := data[:min(size, headSize)]; !bytes.Equal(head, want) || head == nil {
					t.Errorf("size %d buffered %v: head of %d bytes, want %d", size, buffered, len(head), len(want))
				}
			}
		}
	}
}

// copyOnce stages src through the buffer or the kernel's copy (which
// must then be available: this test runs on Linux).
func copyOnce(t *testing.T, src string, limit int64, buffered bool) (int64, []byte, string, []byte) {
	t.Helper()
	f, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dstPath := filepath.Join(t.TempDir(), "payload")
	dst, err := os.OpenFile(dstPath, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	h := sha256.New()
	var n int64
	var head []byte
	if buffered {
		n, head, err = copyHashBuffered(context.Background(), dst, h, f, limit)
	} else {
		n, head, err = copyHashInKernel(context.Background(), dst, f, h, limit)
	}
	if err != nil {
		t.Fatal(err)
	}
	staged, _ := os.ReadFile(dstPath)
	return n, head, hex.EncodeToString(h.Sum(nil)), staged
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
