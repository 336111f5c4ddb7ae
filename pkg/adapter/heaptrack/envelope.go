package heaptrack

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/klauspost/compress/zstd"

	"github.com/flameox/flameox/pkg/config"
)

// Compression magics of heaptrack's data files.
var (
	gzipMagic = []byte{0x1f, 0x8b}
	zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}
)

// ErrEnvelope is wrapped when a file is not a complete heaptrack file.
var ErrEnvelope = errors.New("not a complete heaptrack data file")

// open returns the decompressed stream of a heaptrack file.
func open(f io.Reader) (io.Reader, func(), error) {
	br := bufio.NewReaderSize(f, 64<<10)
	magic, _ := br.Peek(4)
	switch {
	case bytes.HasPrefix(magic, gzipMagic):
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, nil, err
		}
		return zr, func() { zr.Close() }, nil
	case bytes.HasPrefix(magic, zstdMagic):
		zr, err := zstd.NewReader(br, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(256<<20))
		if err != nil {
			return nil, nil, err
		}
		return zr, zr.Close, nil
	}
	return br, func() {}, nil
}

// validHeader reports whether b starts with heaptrack's first record,
// "v TOOLVERSION FILEVERSION" in hex (e.g. "v 10400 3").
func validHeader(b []byte) bool {
	line, _, _ := bytes.Cut(b, []byte("\n"))
	f := bytes.Fields(line)
	if len(f) != 3 || string(f[0]) != "v" {
		return false
	}
	for _, x := range f[1:] {
		if len(x) > 8 {
			return false
		}
		for _, c := range x {
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
				return false
			}
		}
	}
	return true
}

// Envelope checks what flameox can check of a heaptrack file without
// decoding its private records: the compression stream is whole, the
// first record is heaptrack's version line, and the file ends with the
// "# strings: N" / "# ips: N" trailer heaptrack_interpret writes when the
// profiled program has ended. heaptrack_print itself reads a cut-off
// file without complaint and reports whatever part it got, so this check
// is what refuses a truncated capture. It returns the header line.
func Envelope(path string, lim config.Limits) (string, error) {
	max := lim.MaxDecompressedBytes
	if max <= 0 {
		max = config.DefaultLimits().MaxDecompressedBytes
	}
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	r, done, err := open(f)
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrEnvelope, err)
	}
	defer done()
	head := make([]byte, 64)
	n, err := io.ReadFull(r, head)
	head = head[:n]
	if n == 0 && err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("%w: the compressed stream is cut off or corrupt: %v", ErrEnvelope, err)
	}
	if n == 0 {
		return "", fmt.Errorf("%w: the file is empty", ErrEnvelope)
	}
	if !validHeader(head) {
		return "", fmt.Errorf("%w: it does not start with heaptrack's version record (v TOOL FORMAT)", ErrEnvelope)
	}
	header, _, _ := bytes.Cut(head, []byte("\n"))
	header = bytes.Clone(header)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		return "", fmt.Errorf("%w: %v", ErrEnvelope, err)
	}
	tail := &tailBuffer{keep: 256}
	tail.Write(head)
	total, err := io.Copy(tail, io.LimitReader(r, max+1-int64(n)))
	if err != nil {
		return "", fmt.Errorf("%w: the compressed stream is cut off or corrupt: %v", ErrEnvelope, err)
	}
	if total+int64(n) > max {
		return "", fmt.Errorf("%w: more than %d bytes decompressed (limits.max_decompressed_bytes)", ErrEnvelope, max)
	}
	t := bytes.TrimRight(tail.buf, "\n")
	last := t[bytes.LastIndexByte(t, '\n')+1:]
	before := t[:max0(bytes.LastIndexByte(t, '\n'))]
	prev := before[bytes.LastIndexByte(before, '\n')+1:]
	if !bytes.HasPrefix(last, []byte("# ips: ")) || !bytes.HasPrefix(prev, []byte("# strings: ")) {
		return "", fmt.Errorf("%w: it lacks the closing '# strings:' / '# ips:' lines heaptrack writes when the program ends (cut off, or the program was killed)", ErrEnvelope)
	}
	return string(header), nil
}

func max0(i int) int {
	if i < 0 {
		return 0
	}
	return i
}

// tailBuffer keeps the last keep bytes written.
type tailBuffer struct {
	keep int
	buf  []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	if len(p) >= t.keep {
		t.buf = append(t.buf[:0], p[len(p)-t.keep:]...)
		return len(p), nil
	}
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.keep {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.keep:]...)
	}
	return len(p), nil
}

// Sniff reports whether head (a file's first bytes) may be a heaptrack
// file: compressed with gzip or zstd, or an uncompressed heaptrack
// stream. Compressed heads are decided by decompressing what head holds.
func Sniff(head []byte) bool {
	if validHeader(head) {
		return true
	}
	if !bytes.HasPrefix(head, gzipMagic) && !bytes.HasPrefix(head, zstdMagic) {
		return false
	}
	r, done, err := open(bytes.NewReader(head))
	if err != nil {
		return false
	}
	defer done()
	b := make([]byte, 32)
	n, _ := io.ReadFull(r, b)
	return validHeader(b[:n])
}
