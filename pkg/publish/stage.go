package publish

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/flameox/flameox/pkg/artifact"
	"github.com/flameox/flameox/pkg/corpus"
	"github.com/flameox/flameox/pkg/evidence/schema"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/google/uuid"
	"golang.org/x/sys/unix"
)

// Stage is a generation being built in staging: one Parquet file per table,
// written through typed schema writers and closed, synced and hashed by
// Finish. Nothing in a Stage is visible to readers.
type Stage struct {
	ID          string
	Dir         string
	PublishedAt time.Time
	extractor   schema.Common
	files       map[string]*stagedFile
	order       []string
	trial       *schema.Trial
}

type stagedFile struct {
	table *schema.Table
	f     *os.File
	out   *writeBack
	w     *schema.Writer
}

// NewStage creates staging/publish-<hex>/ for a new generation.
func NewStage(root, extractorName, extractorVersion string, now time.Time) (*Stage, error) {
	dir, err := artifact.NewStagingDir(root, "publish")
	if err != nil {
		return nil, err
	}
	id := uuid.NewString()
	at := now.UTC().Truncate(time.Microsecond)
	return &Stage{ID: id, Dir: dir, PublishedAt: at,
		extractor: schema.Common{GenerationID: id, PublishedAt: at, ExtractorName: extractorName, ExtractorVersion: extractorVersion},
		files:     map[string]*stagedFile{}}, nil
}

// Table returns the writer for t, opening its file on first use.
func (s *Stage) Table(t *schema.Table) (*schema.Writer, error) {
	if sf, ok := s.files[t.Name]; ok {
		return sf.w, nil
	}
	f, err := os.OpenFile(filepath.Join(s.Dir, t.Name+".parquet"), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("stage %s: %w", t.Name, err)
	}
	out := &writeBack{f: f}
	w, err := schema.NewWriter(t, out, schema.Options{Common: s.extractor})
	if err != nil {
		f.Close()
		return nil, err
	}
	s.files[t.Name] = &stagedFile{table: t, f: f, out: out, w: w}
	s.order = append(s.order, t.Name)
	w.SetTrial(s.trial)
	return w, nil
}

// SetTrial places the measurements written from now on in an experiment
// trial (nil: none), in every table's writer (schema.Writer.SetTrial).
func (s *Stage) SetTrial(t *schema.Trial) {
	s.trial = t
	for _, sf := range s.files {
		sf.w.SetTrial(t)
	}
}

// Rows counts the rows staged so far.
func (s *Stage) Rows() int64 {
	var n int64
	for _, sf := range s.files {
		n += sf.w.Rows()
	}
	return n
}

// Finish closes every table file, fsyncs it and describes it with its final
// workspace-relative path, sha256, size and row count. Tables without rows
// are dropped. The files are synced concurrently, so that the file system
// can commit them in one journal transaction.
func (s *Stage) Finish() ([]corpus.GenerationFile, error) {
	names := append([]string{}, s.order...)
	sort.Strings(names)
	// Each table is finished (its footer written) and synced on its own
	// goroutine: finishing even a one-run publication's few-row files
	// costs time, mostly per-column set-up in the Parquet writer
	// (docs/performance.md).
	//
	// Each file is hashed on its goroutine too: the files are hashed side
	// by side, and a table finished early while another is still being
	// encoded, rather than one file after another after every close.
	// Hashing the bytes as they were written cost the goroutines that
	// encode them as much as it saved (docs/performance.md).
	rows := make([]int64, len(names))
	sums, sizes := make([]string, len(names)), make([]int64, len(names))
	errs, closeErrs := make([]error, len(names)), make([]error, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Go(func() {
			sf := s.files[name]
			n, err := sf.w.Close()
			if err != nil {
				closeErrs[i] = fault.Wrap(fault.EvidenceSchemaMismatch, err, "write %s rows", name)
				return
			}
			rows[i] = n
			if n == 0 {
				return
			}
			// A large file is hashed from the page cache while the file
			// system writes it to disk; a small one after (a goroutine
			// costs a one-run publication more than it saves).
			var hashErr error
			var hashed sync.WaitGroup
			hash := func() { sums[i], sizes[i], hashErr = hashFile(sf.f.Name()) }
			large := sf.out.off >= writeBackEvery
			if large {
				hashed.Go(hash)
			}
			err = sf.f.Sync()
			hashed.Wait()
			if err == nil && !large {
				hash()
			}
			if err != nil {
				errs[i] = fmt.Errorf("fsync staged %s: %w", name, err)
			} else if hashErr != nil {
				errs[i] = fmt.Errorf("hash staged %s: %w", name, hashErr)
			}
		})
	}
	wg.Wait()
	for _, err := range closeErrs {
		if err != nil {
			return nil, err // the first, as a fault
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	var out []corpus.GenerationFile
	for i, name := range names {
		sf := s.files[name]
		if err := sf.f.Close(); err != nil {
			return nil, err
		}
		if rows[i] == 0 {
			os.Remove(sf.f.Name())
			continue
		}
		sum, size := sums[i], sizes[i]
		out = append(out, corpus.GenerationFile{
			Path:  fmt.Sprintf("evidence/%s/generation=%s/part-00000.parquet", name, s.ID),
			Table: name, SchemaMajor: sf.table.Major, SchemaMinor: sf.table.Minor,
			SHA256: sum, ByteLength: size, RowCount: rows[i],
		})
	}
	return out, nil
}

// writeBack writes a staged file and, every writeBackEvery bytes, asks
// the kernel to start writing them to disk (sync_file_range, advisory;
// errors surface at the fsync): Finish's fsync then finds little left to
// write, where a 10^6-location profile's tables had left 180 MB
// (docs/performance.md).
type writeBack struct {
	f         *os.File
	off, from int64
}

// writeBackEvery is how many written bytes writeBack lets accumulate.
const writeBackEvery = 8 << 20

func (w *writeBack) Write(p []byte) (int, error) {
	n, err := w.f.Write(p)
	w.off += int64(n)
	if w.off-w.from >= writeBackEvery {
		_ = unix.SyncFileRange(int(w.f.Fd()), w.from, w.off-w.from, unix.SYNC_FILE_RANGE_WRITE)
		w.from = w.off
	}
	return n, err
}

// Discard removes the staging directory.
func (s *Stage) Discard() {
	for _, sf := range s.files {
		sf.f.Close()
	}
	os.RemoveAll(s.Dir)
}

func hashFile(path string) (string, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return "", 0, err
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), n, nil
}
