package artifact

import (
	"context"
	"fmt"
	"hash"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

const (
	// chunkSize is one read, hash and write. 1 MiB keeps a chunk in the
	// cores' L2 caches between the read, the hash and the write; in a
	// sketch of this loop, 4 MiB and 256 KiB chunks were both slower.
	chunkSize = 1 << 20
	// chunks is how many chunks are in flight between the three stages.
	chunks = 8
	// hashChunkSize and hashChunks are chunkSize and chunks when nothing
	// is written (copyHash with no dst).
	hashChunkSize = 128 << 10
	hashChunks    = 4
	// writeSize is one write(2) of a chunk into the staged file. The page
	// cache sizes its folios by the write: a 1 MiB write takes 1 MiB
	// folios, which come from the free blocks a virtual machine's balloon
	// (free page reporting) has handed back to its host, and the host
	// then faults every page in again; on the development VM that made
	// some first imports several times slower, all of it in the kernel's
	// copy into those folios, and writes of 16–256 KiB never did
	// (docs/performance.md, "Import + hash of a 256 MiB file").
	writeSize = 64 << 10
	headSize  = 4 << 10
)

// piece is one chunk of the source on its way through copyHash.
type piece struct {
	b   []byte
	off int64
	err error // the read's error; b is empty then
}

// copyHash streams src into dst and into h, reading at most limit+1 bytes
// so that an over-budget source is detected without copying it all. It
// returns the bytes read and the first headSize of them. With dst nil it
// only hashes (StageImport's look for bytes already stored).
//
// Three stages run at once over a ring of chunk buffers: one goroutine
// reads the source into a buffer, the caller hashes it, and another
// goroutine writes that same buffer into dst and hands it to the kernel
// for write-back (sync_file_range), so the final fsync has little left to
// do. The hash, the costliest stage, has a core to itself while the other
// core reads and writes, so on two cores the import keeps pace with
// `openssl dgst`, which reads and hashes on one and writes nothing. The
// bytes written are the bytes hashed, buffer for buffer, so what is
// stored is always what the digest names, whatever another process does
// to the source meanwhile (StageImport's identity checks catch that
// change and refuse the import).
//
// Tried and not kept (docs/performance.md): the kernel's copy
// (copy_file_range) with the staged pages hashed from a mapping, and a
// read-and-hash loop with only the write on a second goroutine; both put
// two of the three passes over the bytes on one core.
func copyHash(ctx context.Context, dst *os.File, h hash.Hash, src *os.File, limit int64) (int64, []byte, error) {
	budget := limit + 1
	// The ring is sized for the source as it is now: a small file needs
	// one small buffer, not 8 MiB that the import's garbage collection
	// then paces itself by (a large profile's import peak RSS). A source
	// that grows meanwhile still streams through it, buffer after buffer.
	//
	// Hashing alone, the ring is smaller: 512 KiB stay in the core's
	// cache between the read and the hash. With 8 MiB the hash read every
	// buffer back from memory and took 220-240 ms for 256 MiB, more than
	// copying and hashing together; with 4 x 128 KiB it takes 145-150 ms.
	most, chunk := chunks, int64(chunkSize)
	if dst == nil {
		most, chunk = hashChunks, hashChunkSize
	}
	n, size := most, chunk
	if fi, err := src.Stat(); err == nil {
		want := min(fi.Size(), budget) + 1 // + 1: the read that finds the end
		n = int(min(int64(most), (want+chunk-1)/chunk))
		if n == 1 {
			size = min(chunk, (want+4095)/4096*4096)
		}
	}
	ring := make([]byte, int64(n)*size)
	free := make(chan []byte, n)
	for i := range int64(n) {
		free <- ring[i*size : (i+1)*size : (i+1)*size]
	}
	read := make(chan piece, n)
	hashed := make(chan piece, n)
	stop := make(chan struct{})
	readerDone := make(chan struct{})
	writeErr := make(chan error, 1)

	go func() { // the reader
		defer close(readerDone)
		defer close(read)
		for off := int64(0); off < budget; {
			var b []byte
			select {
			case b = <-free:
			case <-stop:
				return
			}
			n, err := src.ReadAt(b[:min(int64(len(b)), budget-off)], off)
			p := piece{b: b[:n], off: off}
			if err != nil && err != io.EOF {
				p = piece{err: err}
			}
			if n > 0 || p.err != nil {
				select {
				case read <- p:
				case <-stop:
					return
				}
			}
			if err != nil {
				return
			}
			off += int64(n)
		}
	}()

	go func() { // the writer; with no dst, it only recycles the buffers
		var err error
		for p := range hashed {
			if err == nil && dst != nil {
				for k := 0; k < len(p.b) && err == nil; k += writeSize {
					_, err = dst.WriteAt(p.b[k:min(len(p.b), k+writeSize)], p.off+int64(k))
				}
				if err == nil {
					// Advisory: start write-back now; errors surface at fsync.
					_ = unix.SyncFileRange(int(dst.Fd()), p.off, int64(len(p.b)), unix.SYNC_FILE_RANGE_WRITE)
				}
			}
			free <- p.b[:cap(p.b)]
		}
		writeErr <- err
	}()

	var total int64
	var head []byte
	var err error
	for p := range read {
		if p.err != nil {
			err = fmt.Errorf("read source: %w", p.err)
			break
		}
		if err = ctx.Err(); err != nil {
			free <- p.b[:cap(p.b)]
			break
		}
		if head == nil {
			head = append([]byte{}, p.b[:min(len(p.b), headSize)]...)
		}
		h.Write(p.b)
		total += int64(len(p.b))
		hashed <- p
	}
	close(stop)
	<-readerDone
	close(hashed)
	if werr := <-writeErr; werr != nil && err == nil {
		err = fmt.Errorf("write staged payload: %w", werr)
	}
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		return total, head, err
	}
	if head == nil {
		head = []byte{}
	}
	return total, head, nil
}
