package memray

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/flameox/flameox/pkg/fault"
	"github.com/pierrec/lz4/v4"
)

// A memray capture is readable only by the release line that wrote it:
// memray's record reader compares the header version the capture starts
// with to its own CURRENT_HEADER_VERSION and refuses any other. So the
// extractor reads that version and runs the reporters of a release that
// reads it: the default python3's memray (Version) for its own header
// version, else an extra reader, a Python interpreter whose memray is of
// the right line.

// ReadersEnv names the variable that points flameox at the interpreters
// of other memray releases: RELEASE=PYTHON entries separated by the
// path-list separator (":" on Unix), e.g.
// "1.19.3=/opt/memray-1.19/bin/python". An entry replaces the well-known
// location for its release line; an entry for Version replaces python3.
const ReadersEnv = "FLAMEOX_MEMRAY_READERS"

// ExtraRelease is the older memray release scripts/install-collectors.sh
// installs as a reader, into ReadersDir(ExtraRelease).
const ExtraRelease = "1.19.3"

// headerLine is one memray header version and the releases that write
// (and alone read) it, from CURRENT_HEADER_VERSION in memray's
// src/memray/_memray/records.h at every tag.
type headerLine struct {
	header                int
	firstMinor, lastMinor int    // memray 1.firstMinor.x to 1.lastMinor.x
	span                  string // the releases, as people write them
	pin                   string // the release to install to read it: the line's last
}

var headerLines = []headerLine{
	{7, 1, 1, "1.1.x", "1.1.0"},
	{8, 2, 3, "1.2.0–1.3.x", "1.3.1"},
	{9, 4, 6, "1.4.0–1.6.x", "1.6.0"},
	{10, 7, 10, "1.7.0–1.10.x", "1.10.0"},
	{11, 11, 18, "1.11.0–1.18.x", "1.18.0"},
	{12, 19, 19, "1.19.x", "1.19.3"},
	{13, 20, 20, "1.20.x", "1.20.0"},
}

// defaultHeader is the header version Version writes and reads.
const defaultHeader = 13

func lineOfHeader(h int) (headerLine, bool) {
	for _, l := range headerLines {
		if l.header == h {
			return l, true
		}
	}
	return headerLine{}, false
}

// headerOfRelease is the header version a memray release ("1.19.3")
// reads, or 0 when the release is not one of headerLines'.
func headerOfRelease(release string) int {
	parts := strings.Split(release, ".")
	if len(parts) < 2 || parts[0] != "1" {
		return 0
	}
	minor, err := strconv.Atoi(parts[1])
	if err != nil {
		return 0
	}
	for _, l := range headerLines {
		if minor >= l.firstMinor && minor <= l.lastMinor {
			return l.header
		}
	}
	return 0
}

// maxHeaderBlock bounds the compressed first block HeaderVersion reads:
// LZ4 frames' largest block size.
const maxHeaderBlock = 4 << 20

// HeaderVersion reads the header version a memray capture starts with:
// the magic "memray\0" and a little-endian int32, at the start of the file
// or of the LZ4 frame `memray run` compresses it into. Only the frame's
// first block is decompressed, by github.com/pierrec/lz4 (maintained, and
// already what Arrow uses here); nothing else of memray's format is read.
func HeaderVersion(path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	return headerVersion(f)
}

func headerVersion(f io.Reader) (int, error) {
	var r io.Reader = io.LimitReader(f, maxHeaderBlock+64)
	head := make([]byte, 4)
	if _, err := io.ReadFull(r, head); err != nil {
		return 0, fmt.Errorf("shorter than a memray header")
	}
	r = io.MultiReader(bytes.NewReader(head), r)
	if bytes.Equal(head, lz4Magic) {
		r = lz4.NewReader(r)
	}
	b := make([]byte, len(memrayMagic)+4)
	if _, err := io.ReadFull(r, b); err != nil {
		return 0, fmt.Errorf("no memray header: %v", err)
	}
	if !bytes.Equal(b[:len(memrayMagic)], memrayMagic) {
		return 0, fmt.Errorf("no memray magic")
	}
	return int(int32(binary.LittleEndian.Uint32(b[len(memrayMagic):]))), nil
}

// Reader is one memray release installed for flameox to read captures
// with: a Python interpreter whose memray reads Header.
type Reader struct {
	Release string // "1.19.3"; Version for the default python3
	Header  int
	Python  string // the interpreter, as found
	// From says where flameox found it: "python3 on PATH", "ReadersDir"
	// (the well-known location) or ReadersEnv.
	From string
}

// ReadersDir is the well-known location of the reader for release:
// $XDG_DATA_HOME/flameox/memray/RELEASE, else
// ~/.local/share/flameox/memray/RELEASE, a virtualenv (its interpreter
// is bin/python). It is "" without either variable.
func ReadersDir(getenv func(string) string, release string) string {
	base := getenv("XDG_DATA_HOME")
	if base == "" {
		home := getenv("HOME")
		if home == "" {
			return ""
		}
		base = filepath.Join(home, ".local", "share")
	}
	return filepath.Join(base, "flameox", "memray", release)
}

func (s System) getenv(k string) string {
	if s.Getenv == nil {
		return os.Getenv(k)
	}
	return s.Getenv(k)
}

// overrides parses ReadersEnv: header version → entry.
func overrides(sys System) (map[int]Reader, error) {
	v := sys.getenv(ReadersEnv)
	out := map[int]Reader{}
	for _, e := range filepath.SplitList(v) {
		if strings.TrimSpace(e) == "" {
			continue
		}
		rel, py, ok := strings.Cut(e, "=")
		h := headerOfRelease(rel)
		if !ok || h == 0 || py == "" {
			return nil, fault.New(fault.CapabilityUnavailable, "%s entry %q: want RELEASE=PYTHON, with RELEASE a memray release from 1.1.0 to %s", ReadersEnv, e, Version).
				With("variable", ReadersEnv).Fix("Write " + ReadersEnv + " as RELEASE=PYTHON entries separated by \":\", e.g. " + ExtraRelease + "=/opt/memray-" + ExtraRelease + "/bin/python.")
		}
		out[h] = Reader{Release: rel, Header: h, Python: py, From: ReadersEnv}
	}
	return out, nil
}

// FindReader returns the installed reader of header version h, or false:
// ReadersEnv's entry for h's release line, else for Version's header
// python3 on PATH, else the well-known location of h's line (its pinned
// release first, then the highest release of the line found there).
func FindReader(sys System, h int) (Reader, bool, error) {
	ov, err := overrides(sys)
	if err != nil {
		return Reader{}, false, err
	}
	if r, ok := ov[h]; ok {
		p, err := sys.LookPath(r.Python)
		if err != nil {
			return Reader{}, false, nil
		}
		r.Python = p
		return r, true, nil
	}
	if h == defaultHeader {
		p, err := sys.LookPath("python3")
		if err != nil {
			return Reader{}, false, nil
		}
		return Reader{Release: Version, Header: h, Python: p, From: "python3 on PATH"}, true, nil
	}
	l, ok := lineOfHeader(h)
	if !ok {
		return Reader{}, false, nil
	}
	base := filepath.Dir(ReadersDir(sys.getenv, l.pin))
	if base == "." {
		return Reader{}, false, nil
	}
	releases := []string{l.pin}
	if ents, err := os.ReadDir(base); err == nil {
		var others []string
		for _, e := range ents {
			if e.Name() != l.pin && headerOfRelease(e.Name()) == h {
				others = append(others, e.Name())
			}
		}
		sort.Slice(others, func(i, j int) bool { return releaseLess(others[j], others[i]) })
		releases = append(releases, others...)
	}
	for _, rel := range releases {
		if p, err := sys.LookPath(filepath.Join(base, rel, "bin", "python")); err == nil {
			return Reader{Release: rel, Header: h, Python: p, From: base}, true, nil
		}
	}
	return Reader{}, false, nil
}

// readerRemedy is how to install a reader for header version h.
func readerRemedy(getenv func(string) string, h int) string {
	l, ok := lineOfHeader(h)
	switch {
	case !ok && h > defaultHeader:
		return fmt.Sprintf("header version %d is newer than any memray release flameox knows (memray %s writes %d): read it with the memray release that wrote it, and name its interpreter in %s (RELEASE=PYTHON)", h, Version, defaultHeader, ReadersEnv)
	case !ok:
		return fmt.Sprintf("header version %d is not one any memray release from 1.1.0 to %s writes: the file is corrupt or not a memray capture", h, Version)
	case h == defaultHeader:
		return installRemedy
	}
	dir := ReadersDir(getenv, l.pin)
	if dir == "" {
		dir = "~/.local/share/flameox/memray/" + l.pin
	}
	s := fmt.Sprintf("header version %d: memray %s wrote it, and only that line reads it; ", h, l.span)
	if l.pin == ExtraRelease {
		s += "run scripts/install-collectors.sh, or "
	}
	return s + fmt.Sprintf("python3 -m venv %s && %s/bin/python -m pip install memray==%s (or name an interpreter that has it in %s=%s=PYTHON)", dir, dir, l.pin, ReadersEnv, l.pin)
}

// releaseLess orders memray releases by their numbers (1.9.0 before
// 1.10.0).
func releaseLess(a, b string) bool {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(pa) && i < len(pb); i++ {
		x, _ := strconv.Atoi(pa[i])
		y, _ := strconv.Atoi(pb[i])
		if x != y {
			return x < y
		}
	}
	return len(pa) < len(pb)
}
