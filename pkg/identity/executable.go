package identity

import (
	"crypto/sha256"
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/flameox/flameox/pkg/digest"
)

// Bounds for reading the workload executable.
const (
	maxExecutableBytes int64 = 4 << 30
	maxNoteBytes             = 1 << 20
)

// ELF note types and owners carrying build ids.
const (
	ntGNUBuildID = 3 // NT_GNU_BUILD_ID, owner "GNU"
	ntGoBuildID  = 4 // the Go linker's build id note, owner "Go"
)

// describeExecutable records the workload executable: where it is (relative
// to the project, or only its base name outside it, so no home or build
// directory leaks), its content digest and its build id. What cannot be
// determined is reported missing ("executable", "build_id").
func describeExecutable(root, exe string, s *SourceState, miss missing) {
	if exe == "" {
		miss.add("executable")
		return
	}
	if !filepath.IsAbs(exe) {
		exe = filepath.Join(root, exe)
	}
	real, err := filepath.EvalSymlinks(exe)
	if err != nil {
		miss.add("executable", "build_id")
		return
	}
	if rel, err := filepath.Rel(root, real); err == nil && filepath.IsAbs(root) && filepath.IsLocal(rel) {
		s.ExecutablePath = filepath.ToSlash(rel)
	} else {
		s.ExecutablePath = filepath.Base(real)
	}

	f, err := os.Open(real)
	if err != nil {
		miss.add("executable", "build_id")
		return
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > maxExecutableBytes {
		miss.add("executable", "build_id")
		return
	}
	h := sha256.New()
	if n, err := io.Copy(h, io.LimitReader(f, maxExecutableBytes+1)); err != nil || n > maxExecutableBytes {
		miss.add("executable", "build_id")
		return
	}
	s.ExecutableDigest = digest.Prefix + hex.EncodeToString(h.Sum(nil))

	// Read the build id from the same open file the digest was taken from.
	if id := buildID(f); id != "" {
		s.BuildID = id
	} else {
		miss.add("build_id")
	}
}

// buildID returns "gnu:<hex>" from an NT_GNU_BUILD_ID note, else "go:<id>"
// from the Go build id note, else "" (not ELF, or no id).
func buildID(r io.ReaderAt) string {
	ef, err := elf.NewFile(r)
	if err != nil {
		return ""
	}
	var goID string
	check := func(data []byte, align uint64) string {
		for _, n := range parseNotes(data, ef.ByteOrder, align) {
			switch {
			case n.name == "GNU" && n.typ == ntGNUBuildID && len(n.desc) > 0:
				return "gnu:" + hex.EncodeToString(n.desc)
			case n.name == "Go" && n.typ == ntGoBuildID && len(n.desc) > 0 && goID == "":
				goID = "go:" + oneLine(n.desc)
			}
		}
		return ""
	}
	// Sections first; program headers cover binaries with stripped section
	// headers.
	for _, sec := range ef.Sections {
		if sec.Type == elf.SHT_NOTE && sec.Size <= maxNoteBytes {
			if data, err := sec.Data(); err == nil {
				if id := check(data, sec.Addralign); id != "" {
					return id
				}
			}
		}
	}
	for _, p := range ef.Progs {
		if p.Type == elf.PT_NOTE && p.Filesz <= maxNoteBytes {
			data := make([]byte, p.Filesz)
			if _, err := p.ReadAt(data, 0); err == nil {
				if id := check(data, p.Align); id != "" {
					return id
				}
			}
		}
	}
	return goID
}

type note struct {
	name string
	typ  uint32
	desc []byte
}

// parseNotes splits an ELF note area into notes. Name and descriptor are
// padded to 4 bytes, or 8 when the area is 8-aligned.
func parseNotes(data []byte, bo binary.ByteOrder, align uint64) []note {
	pad := uint64(4)
	if align == 8 {
		pad = 8
	}
	up := func(n uint64) uint64 { return (n + pad - 1) &^ (pad - 1) }
	var notes []note
	for len(data) >= 12 {
		namesz, descsz := uint64(bo.Uint32(data[0:])), uint64(bo.Uint32(data[4:]))
		typ := bo.Uint32(data[8:])
		rest := data[12:]
		nameEnd := up(namesz)
		if nameEnd > uint64(len(rest)) || nameEnd+descsz > uint64(len(rest)) {
			break
		}
		name := strings.TrimRight(string(rest[:namesz]), "\x00")
		notes = append(notes, note{name: name, typ: typ, desc: rest[nameEnd : nameEnd+descsz]})
		next := nameEnd + up(descsz)
		if next > uint64(len(rest)) {
			break
		}
		data = rest[next:]
	}
	return notes
}
