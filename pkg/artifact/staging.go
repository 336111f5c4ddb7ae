package artifact

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/flameox/flameox/pkg/contain"
	"github.com/flameox/flameox/pkg/durable"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/faultpoint"
	"github.com/flameox/flameox/pkg/lease"
)

// Staged is a payload copied into staging and hashed, not yet placed.
type Staged struct {
	ArtifactID string
	Size       int64
	Path       string // the staged payload
	Dir        string // the staging directory (removed by Discard)
	HashedAt   time.Time
	// Head holds the first bytes, for format floors and sniffing.
	Head []byte
	// Stored says the bytes were found in the store already (Path is the
	// stored payload, read-only, and Dir is empty): only hashed, never
	// copied.
	Stored bool
}

// Discard removes the staging directory.
func (st *Staged) Discard() {
	if st != nil && st.Dir != "" {
		os.RemoveAll(st.Dir)
	}
}

// StagingOwner is written into every staging directory so that status and
// recovery can tell abandoned staging from work in progress.
const StagingOwner = "owner.json"

// NewStagingDir creates staging/<prefix>-<random>/ with an owner file.
func NewStagingDir(root, prefix string) (string, error) {
	dir := filepath.Join(root, "staging", prefix+"-"+durable.RandomHex(8))
	if err := os.Mkdir(dir, 0o700); err != nil {
		return "", fmt.Errorf("create staging directory: %w", err)
	}
	owner, err := lease.Self()
	if err == nil {
		// Not synced: after a reboot every owner is gone, and an owner
		// record lost or emptied by the crash reads as gone too.
		var b []byte
		if b, err = durable.MarshalIndent(owner); err == nil {
			err = durable.WriteVolatile(filepath.Join(dir, StagingOwner), b, 0o600)
		}
	}
	if err != nil {
		os.RemoveAll(dir)
		return "", fmt.Errorf("record staging owner: %w", err)
	}
	return dir, nil
}

// StageImport copies the file at src into a new staging directory under a
// byte budget, hashing it on the way, with the safety checks of SPEC §4.
// Nothing is left in staging when it fails.
func (s *Store) StageImport(ctx context.Context, src string, maxBytes int64) (*Staged, error) {
	f, before, err := openSource(src)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if s.Beneath != "" {
		if err := openedBeneath(f, src, s.Beneath, s.Root); err != nil {
			return nil, err
		}
	}
	if before.Size > maxBytes {
		return nil, fault.New(fault.ArtifactTooLarge, "%s is %d bytes; the limit is %d", src, before.Size, maxBytes).
			With("byte_length", fmt.Sprint(before.Size)).With("limit", fmt.Sprint(maxBytes)).
			Fix("Raise capture.max_artifact_bytes in .diagnostics/config.toml if this size is expected.")
	}
	if s.sizeSeen(before.Size) {
		// Bytes of a size the store has held: hash them first, and copy
		// them only if no stored object has that digest (a second read,
		// from the page cache).
		st, err := s.findStored(ctx, f, src, before, maxBytes)
		if st != nil || err != nil {
			return st, err
		}
	}
	dir, err := NewStagingDir(s.Root, "import")
	if err != nil {
		return nil, err
	}
	st := &Staged{Dir: dir, Path: filepath.Join(dir, "payload")}
	ok := false
	defer func() {
		if !ok {
			st.Discard()
		}
	}()
	out, err := os.OpenFile(st.Path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("create staged payload: %w", err)
	}
	defer out.Close()
	h := sha256.New()
	n, head, err := s.read(ctx, out, h, f, src, before, maxBytes)
	if err != nil {
		return nil, err
	}
	if err := out.Sync(); err != nil {
		return nil, fmt.Errorf("fsync staged payload: %w", err)
	}
	if err := out.Close(); err != nil {
		return nil, err
	}
	st.Size = n
	st.ArtifactID = "sha256:" + hex.EncodeToString(h.Sum(nil))
	st.HashedAt = time.Now().UTC()
	st.Head = head
	ok = true
	return st, nil
}

// read hashes f (opened as src, identity before) into h, copying it into
// out unless out is nil, and refuses a source over maxBytes or one that
// changed meanwhile. It returns the bytes read and their head.
func (s *Store) read(ctx context.Context, out *os.File, h hash.Hash, f *os.File, src string, before fileIdentity, maxBytes int64) (int64, []byte, error) {
	n, head, err := copyHash(ctx, out, h, f, maxBytes)
	if err != nil {
		return n, nil, err
	}
	if out != nil {
		faultpoint.Hit("import.copied")
	}
	if s.AfterCopy != nil {
		s.AfterCopy(src)
	}
	if n > maxBytes {
		return n, nil, fault.New(fault.ArtifactTooLarge, "%s grew past the limit of %d bytes while being read", src, maxBytes).With("limit", fmt.Sprint(maxBytes))
	}
	if err := unchanged(f, src, before, n); err != nil {
		return n, nil, err
	}
	return n, head, nil
}

// unchanged refuses the import when src, read as f (n bytes), is not the
// file it was when opened (before): another size, time or inode.
func unchanged(f *os.File, src string, before fileIdentity, n int64) error {
	after, err := fstatIdentity(f)
	if err != nil {
		return err
	}
	again, lerr := lstatIdentity(src)
	if after != before || n != before.Size || lerr != nil || again.Dev != before.Dev || again.Ino != before.Ino {
		return fault.New(fault.ArtifactIntegrityFailed, "%s changed while it was being imported (size %d → %d, read %d bytes)", src, before.Size, after.Size, n).
			Retry().Fix("Import the file again once the program writing it has finished.")
	}
	return nil
}

// findStored hashes f without copying it and returns it as the stored
// object with that digest, or nil when there is none (or it does not
// match its record, which Place then reports): the caller copies it then.
func (s *Store) findStored(ctx context.Context, f *os.File, src string, before fileIdentity, maxBytes int64) (*Staged, error) {
	h := sha256.New()
	n, head, err := s.read(ctx, nil, h, f, src, before, maxBytes)
	if err != nil {
		return nil, err
	}
	sum := hex.EncodeToString(h.Sum(nil))
	c, err := s.readContent(sum)
	if err != nil || c.ByteLength != n {
		return nil, nil
	}
	payload := filepath.Join(s.objectDir(sum), c.PayloadName)
	if fi, err := os.Lstat(payload); err != nil || !fi.Mode().IsRegular() || fi.Size() != n {
		return nil, nil
	}
	return &Staged{ArtifactID: "sha256:" + sum, Size: n, Path: payload, HashedAt: time.Now().UTC(), Head: head, Stored: true}, nil
}

type fileIdentity struct {
	Dev, Ino  uint64
	Size      int64
	MtimeNano int64
}

// openSource opens src without following a final symlink and without
// blocking on FIFOs, then insists on a regular file with exactly one link.
func openSource(src string) (*os.File, fileIdentity, error) {
	fd, err := syscall.Open(src, syscall.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC|syscall.O_NOCTTY, 0)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, fileIdentity{}, refuse(src, "it is a symbolic link; import the file it points to")
		}
		if errors.Is(err, syscall.ENOENT) {
			return nil, fileIdentity{}, fault.New(fault.InvalidArguments, "%s does not exist", src)
		}
		if errors.Is(err, syscall.ENXIO) {
			return nil, fileIdentity{}, refuse(src, "it is a socket or device, not a regular file")
		}
		return nil, fileIdentity{}, fault.Wrap(fault.ExecutionRefused, err, "cannot open %s", src)
	}
	f := os.NewFile(uintptr(fd), src)
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		f.Close()
		return nil, fileIdentity{}, fault.Wrap(fault.ExecutionRefused, err, "stat %s", src)
	}
	switch st.Mode & syscall.S_IFMT {
	case syscall.S_IFREG:
	case syscall.S_IFDIR:
		f.Close()
		return nil, fileIdentity{}, refuse(src, "it is a directory")
	case syscall.S_IFIFO:
		f.Close()
		return nil, fileIdentity{}, refuse(src, "it is a FIFO")
	default:
		f.Close()
		return nil, fileIdentity{}, refuse(src, "it is not a regular file")
	}
	if st.Nlink != 1 {
		f.Close()
		return nil, fileIdentity{}, refuse(src, fmt.Sprintf("it has %d hard links; copy it to a file of its own first", st.Nlink))
	}
	// Regular-file reads never block; clear O_NONBLOCK anyway for clarity.
	syscall.SetNonblock(fd, false)
	return f, identityOf(&st), nil
}

// openedBeneath checks that the file f, opened as src, is under dir and
// not in the workspace ws (re-importing a stored artifact could launder
// its sensitivity): the
// kernel's name for the open file (/proc/self/fd) is the path it was
// reached by after every symlink, whatever changed since the caller
// resolved src. O_NOFOLLOW covers only the last component, and
// openat2's RESOLVE_BENEATH would need a file descriptor for dir held
// from the moment the path was checked; the check after open needs
// neither. Without /proc, every component from dir down is checked not
// to be a symlink.
func openedBeneath(f *os.File, src, dir, ws string) error {
	real, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(int(f.Fd())))
	if err != nil {
		rel, rerr := filepath.Rel(dir, src)
		if rerr != nil || rel == ".." || strings.HasPrefix(rel, "../") {
			return refuse(src, "it is outside "+dir)
		}
		p := dir
		for _, part := range strings.Split(filepath.Dir(rel), string(filepath.Separator)) {
			if part == "." {
				continue
			}
			p = filepath.Join(p, part)
			if fi, err := os.Lstat(p); err != nil || fi.Mode()&os.ModeSymlink != 0 {
				return refuse(src, p+" is a symbolic link (or vanished) while the file was being opened")
			}
		}
		return nil
	}
	if !contain.Under(real, dir) {
		return refuse(src, "the file opened is "+real+", outside "+dir+": a directory above it was swapped for a symbolic link")
	}
	if wsReal, err := filepath.EvalSymlinks(ws); err == nil && contain.Under(real, wsReal) {
		return refuse(src, "the file opened is "+real+", inside the workspace: a directory above it was swapped for a symbolic link")
	}
	return nil
}

func refuse(src, why string) error {
	return fault.New(fault.ExecutionRefused, "refusing to import %s: %s", src, why).With("path", src)
}

func identityOf(st *syscall.Stat_t) fileIdentity {
	return fileIdentity{Dev: uint64(st.Dev), Ino: st.Ino, Size: st.Size, MtimeNano: st.Mtim.Nano()}
}

func fstatIdentity(f *os.File) (fileIdentity, error) {
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil {
		return fileIdentity{}, fmt.Errorf("stat source: %w", err)
	}
	return identityOf(&st), nil
}

func lstatIdentity(path string) (fileIdentity, error) {
	var st syscall.Stat_t
	if err := syscall.Lstat(path, &st); err != nil {
		return fileIdentity{}, err
	}
	return identityOf(&st), nil
}

// hashReader hashes r and returns the sha256: id and the length.
func hashReader(r io.Reader) (string, int64, error) {
	h := sha256.New()
	n, err := io.Copy(h, r)
	if err != nil {
		return "", n, err
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), n, nil
}

// Precheck refuses, before any run is created, a source that StageImport
// would refuse anyway: missing, not a regular file, hard-linked, or over
// budget. StageImport checks all of it again on the opened file.
func Precheck(src string, maxBytes int64) error {
	var st syscall.Stat_t
	if err := syscall.Lstat(src, &st); err != nil {
		if errors.Is(err, syscall.ENOENT) {
			return fault.New(fault.InvalidArguments, "%s does not exist", src)
		}
		return fault.Wrap(fault.ExecutionRefused, err, "cannot stat %s", src)
	}
	switch st.Mode & syscall.S_IFMT {
	case syscall.S_IFREG:
	case syscall.S_IFLNK:
		return refuse(src, "it is a symbolic link; import the file it points to")
	case syscall.S_IFDIR:
		return refuse(src, "it is a directory")
	case syscall.S_IFIFO:
		return refuse(src, "it is a FIFO")
	case syscall.S_IFSOCK:
		return refuse(src, "it is a socket or device, not a regular file")
	default:
		return refuse(src, "it is not a regular file")
	}
	if st.Nlink != 1 {
		return refuse(src, fmt.Sprintf("it has %d hard links; copy it to a file of its own first", st.Nlink))
	}
	if st.Size > maxBytes {
		return fault.New(fault.ArtifactTooLarge, "%s is %d bytes; the limit is %d", src, st.Size, maxBytes).
			With("byte_length", fmt.Sprint(st.Size)).With("limit", fmt.Sprint(maxBytes)).
			Fix("Raise capture.max_artifact_bytes in .diagnostics/config.toml if this size is expected.")
	}
	return nil
}
