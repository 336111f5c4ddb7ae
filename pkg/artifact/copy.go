package artifact

import (
	"context"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

const (
	chunkSize = 4 << 20
	headSize  = 4 << 10
)

// copyHash streams src into dst and into h, reading at most limit+1 bytes so
// an over-budget source is detected without copying it all. Writing and
// hashing run concurrently on each chunk (SHA-256 and the page-cache write
// each cost about as much as the read), which keeps a large import close to
// the speed of hashing alone. Each written chunk is handed to the kernel for
// write-back at once (sync_file_range), so the final fsync has little left
// to do.
//
// Where the kernel can copy between the two files, copyHashInKernel does
// it without the buffer; copyHash falls back to the buffer otherwise.
func copyHash(ctx context.Context, dst *os.File, h hash.Hash, src *os.File, limit int64) (int64, []byte, error) {
	n, head, err := copyHashInKernel(ctx, dst, src, h, limit)
	if !errors.Is(err, errNoCopyRange) {
		return n, head, err
	}
	return copyHashBuffered(ctx, dst, h, src, limit)
}

// copyHashBuffered is copyHash through a pair of buffers.
func copyHashBuffered(ctx context.Context, dst *os.File, h hash.Hash, src io.Reader, limit int64) (int64, []byte, error) {
	r := io.LimitReader(src, limit+1)
	bufs := [2][]byte{make([]byte, chunkSize), make([]byte, chunkSize)}
	var head []byte
	var total int64
	writeErr := make(chan error, 1)
	pending := false
	for i := 0; ; i++ {
		if err := ctx.Err(); err != nil {
			if pending {
				<-writeErr
			}
			return total, head, err
		}
		buf := bufs[i%2]
		n, rerr := io.ReadFull(r, buf)
		if pending {
			if err := <-writeErr; err != nil {
				return total, head, fmt.Errorf("write staged payload: %w", err)
			}
			pending = false
		}
		if n > 0 {
			chunk := buf[:n]
			if head == nil {
				head = append([]byte{}, chunk[:min(n, headSize)]...)
			}
			off := total
			go func() {
				_, err := dst.Write(chunk)
				if err == nil {
					// Advisory: start write-back now; errors surface at fsync.
					_ = unix.SyncFileRange(int(dst.Fd()), off, int64(len(chunk)), unix.SYNC_FILE_RANGE_WRITE)
				}
				writeErr <- err
			}()
			pending = true
			h.Write(chunk)
			total += int64(n)
		}
		if rerr == io.EOF || rerr == io.ErrUnexpectedEOF {
			break
		}
		if rerr != nil {
			if pending {
				<-writeErr
			}
			return total, head, fmt.Errorf("read source: %w", rerr)
		}
	}
	if pending {
		if err := <-writeErr; err != nil {
			return total, head, fmt.Errorf("write staged payload: %w", err)
		}
	}
	if head == nil {
		head = []byte{}
	}
	return total, head, nil
}
