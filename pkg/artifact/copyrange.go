package artifact

import (
	"context"
	"errors"
	"fmt"
	"hash"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// errNoCopyRange: the kernel or the filesystems cannot copy_file_range
// between src and dst; nothing was written, and copyHash copies through a
// buffer instead.
var errNoCopyRange = errors.New("copy_file_range unsupported")

// copyHashInKernel is copyHash without the buffer: each chunk is copied by
// the kernel (copy_file_range, page cache to page cache, no trip through
// user memory) and then hashed from a read-only mapping of the staged
// file's own pages while the next chunk is copied. The buffered copy paid
// for each byte twice besides the hash (read into the buffer, write out of
// it); this pays once, in the kernel. The digest is of the staged bytes
// themselves, which only this process writes (its staging directory is
// private), so what is stored is always what was hashed; a source that
// changes meanwhile is caught by StageImport's identity checks, as before.
// It returns errNoCopyRange when the first copy fails as unsupported.
func copyHashInKernel(ctx context.Context, dst, src *os.File, h hash.Hash, limit int64) (int64, []byte, error) {
	type copied struct {
		n   int64
		err error
	}
	budget := limit + 1
	var total int64
	var head []byte
	next := make(chan copied, 1)
	start := func(off int64) {
		go func() {
			want := min(int64(chunkSize), budget-off)
			var n int64
			for n < want {
				soff, doff := off+n, off+n
				k, err := unix.CopyFileRange(int(src.Fd()), &soff, int(dst.Fd()), &doff, int(want-n), 0)
				if err != nil {
					if off == 0 && n == 0 && unsupported(err) {
						err = errNoCopyRange
					}
					next <- copied{n, err}
					return
				}
				if k == 0 {
					break // end of the source
				}
				n += int64(k)
			}
			if n > 0 {
				// Advisory: start write-back now; errors surface at fsync.
				_ = unix.SyncFileRange(int(dst.Fd()), off, n, unix.SYNC_FILE_RANGE_WRITE)
			}
			next <- copied{n, nil}
		}()
	}
	start(0)
	for {
		c := <-next
		if c.err != nil {
			if errors.Is(c.err, errNoCopyRange) {
				return 0, nil, c.err
			}
			return total, head, fmt.Errorf("copy into the staged payload: %w", c.err)
		}
		off := total
		total += c.n
		more := c.n == chunkSize && total < budget && ctx.Err() == nil
		if more {
			start(total)
		}
		if c.n > 0 {
			b, err := unix.Mmap(int(dst.Fd()), off, int(c.n), unix.PROT_READ, unix.MAP_SHARED|unix.MAP_POPULATE)
			if err != nil {
				if more {
					<-next
				}
				return total, head, fmt.Errorf("map the staged payload: %w", err)
			}
			if head == nil {
				head = append([]byte{}, b[:min(len(b), headSize)]...)
			}
			h.Write(b)
			_ = unix.Munmap(b)
		}
		if !more {
			if err := ctx.Err(); err != nil {
				return total, head, err
			}
			if head == nil {
				head = []byte{}
			}
			return total, head, nil
		}
	}
}

// unsupported reports whether copy_file_range's error means "not between
// these files" rather than an I/O failure.
func unsupported(err error) bool {
	return errors.Is(err, syscall.ENOSYS) || errors.Is(err, syscall.EXDEV) || errors.Is(err, syscall.EINVAL) ||
		errors.Is(err, syscall.EOPNOTSUPP) || errors.Is(err, syscall.EBADF) || errors.Is(err, syscall.EPERM)
}
