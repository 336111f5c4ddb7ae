package profile

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/google/pprof/profile"
)

// Legacy pprof formats: the text heap, growth, fragmentation, contention,
// mutex, thread and goroutine/threadcreate profiles that gperftools, the
// JVM agents and Go before 1.9 wrote, and the binary gperftools CPU
// profile (C++, Java and old Go CPU profiles). `go tool pprof` reads them
// all, through github.com/google/pprof/profile.Parse.
//
// flameox reads them through the same function instead of parsers of its
// own: the formats are frozen, pprof's parsers are maintained, and values
// that come from the same code cannot disagree with `go tool pprof` (heap
// sample unscaling, contention cycle scaling, the frames gperftools' signal
// handler pushes, memory-map massaging). flameox's own parsers remain for
// what pprof does not read (perf script, speedscope, collapsed stacks) and
// for the pprof protobuf pre-pass (pprofscan.go), which needs to stop
// before the decoder allocates.
//
// profile.Parse cannot be stopped either, so the input goes through two
// bounded pre-passes first, and reaches it only within every limit:
//   - the protobuf walk of pprofscan.go, because profile.Parse tries the
//     protobuf decoder first and that decoder allocates as it goes until
//     the bytes stop making sense as protobuf;
//   - scanLegacy below, which counts what the legacy parsers keep: samples
//     (one per "@" line, thread or binary record), frames in each stack
//     and in all of them, distinct addresses (each becomes a location),
//     memory-map lines (mappings), and Java location lines (functions and
//     their names' bytes).
//
// Two steps of profile.Parse take time that grows faster than the input,
// and the pre-pass bounds them too: it matches every address against every
// mapping (and merges adjacent mappings by walking every location), and it
// rebuilds a string replacer over all earlier "name=value" lines at each
// such line of the memory map. So addresses × mappings is capped at
// legacyMatchBudget and those lines at legacyMaxMapAttrs, both reported
// under max_mappings.
//
// Detection (legacyVariant) mirrors the header checks of each legacy
// parser, in profile.Parse's order, on the first bytes only; Parse then
// reads the whole input and fails with pprof's own reason when the rest
// does not hold.

// legacyRE holds the header expressions of pprof's legacy parsers
// (legacy_profile.go), copied so that detection agrees with them, and the
// address and stack shapes the pre-pass and perf detection look for.
var legacyRE = sync.OnceValue(func() *legacyExprs {
	return &legacyExprs{
		heap:          regexp.MustCompile(`heap profile: *(\d+): *(\d+) *\[ *(\d+): *(\d+) *\] *@ *(heap[_a-z0-9]*)/?(\d*)`),
		growth:        regexp.MustCompile(`heap profile: *(\d+): *(\d+) *\[ *(\d+): *(\d+) *\] @ growthz?`),
		fragmentation: regexp.MustCompile(`heap profile: *(\d+): *(\d+) *\[ *(\d+): *(\d+) *\] @ fragmentationz?`),
		count:         regexp.MustCompile(`\A(\S+) profile: total \d+\z`),
		threadz:       regexp.MustCompile(`--- threadz \d+ ---`),
		thread:        regexp.MustCompile(`--- Thread ([[:xdigit:]]+) \(name: (.*)/(\d+)\) stack: ---`),
		hexAddr:       regexp.MustCompile(`0x[0-9a-f]+`),
		// a legacy sample's stack: "@" then addresses to the end of the line
		stackTail: regexp.MustCompile(`(?:^|\s)@(?:\s+0x[0-9a-fA-F]+)+\s*$`),
	}
})

type legacyExprs struct {
	heap, growth, fragmentation, count, threadz, thread, hexAddr, stackTail *regexp.Regexp
}

// cpuWords are the word readers pprof's parseCPU tries, in its order:
// 32-bit little-endian, 32-bit big-endian, 64-bit little, 64-bit big.
var cpuWords = []struct {
	size int
	get  func([]byte) uint64
}{
	{4, func(b []byte) uint64 { return uint64(binary.LittleEndian.Uint32(b)) }},
	{4, func(b []byte) uint64 { return uint64(binary.BigEndian.Uint32(b)) }},
	{8, binary.LittleEndian.Uint64},
	{8, binary.BigEndian.Uint64},
}

// cpuHeader reads the binary CPU profile header (0, 3, 0|1, period, 0) as
// parseCPU does and returns the word reader that fits, whether it is a
// Java profile (third word 1), and the header's length; size is 0 when
// no reader fits.
func cpuHeader(b []byte) (size int, get func([]byte) uint64, java bool) {
	for _, w := range cpuWords {
		if len(b) < 5*w.size {
			continue
		}
		var n [5]uint64
		for i := range n {
			n[i] = w.get(b[i*w.size:])
		}
		if n[0] == 0 && n[1] == 3 && n[2] <= 1 && n[3] > 0 && n[4] == 0 {
			return w.size, w.get, n[2] == 1
		}
	}
	return 0, nil, false
}

// legacyVariant names the legacy format of head ("" when it is none),
// checking the headers pprof's legacy parsers check, in their order.
func legacyVariant(head []byte) string {
	if size, _, java := cpuHeader(head); size != 0 {
		if java {
			return "Java CPU profile"
		}
		return "gperftools CPU profile"
	}
	first, rest := firstLine(head)
	re := legacyRE()
	switch {
	case re.heap.MatchString(first):
		return "heap profile"
	case re.growth.MatchString(first):
		return "growth profile"
	case re.fragmentation.MatchString(first):
		return "fragmentation profile"
	}
	// parseGoCount and parseThread skip blank and comment lines first.
	header, after := first, rest
	for isSpaceOrComment(header) && len(after) > 0 {
		header, after = firstLine(after)
	}
	if m := re.count.FindStringSubmatch(header); m != nil {
		return m[1] + " profile"
	}
	if re.threadz.MatchString(header) || re.thread.MatchString(header) {
		return "thread profile"
	}
	java := bytes.Contains(head, []byte("\nformat = java"))
	switch {
	case strings.HasPrefix(first, "--- contentionz ") && !java, strings.HasPrefix(first, "--- mutex:"),
		strings.HasPrefix(first, "--- contention:"):
		return "contention profile"
	}
	switch strings.TrimSpace(first) {
	case "--- heapz 1 ---":
		if len(rest) > 0 {
			return "Java heap profile"
		}
	case "--- contentionz 1 ---":
		if len(rest) > 0 {
			return "Java contention profile"
		}
	}
	return ""
}

// firstLine splits b after its first line, which is returned without its
// line ending (bufio.ScanLines' rule: "\n", optionally after "\r").
func firstLine(b []byte) (string, []byte) {
	i := bytes.IndexByte(b, '\n')
	if i < 0 {
		return string(bytes.TrimSuffix(b, []byte("\r"))), nil
	}
	return string(bytes.TrimSuffix(b[:i], []byte("\r"))), b[i+1:]
}

func isSpaceOrComment(line string) bool {
	t := strings.TrimSpace(line)
	return t == "" || t[0] == '#'
}

// memoryMapSentinel is where pprof's legacy text parsers stop reading
// samples and start reading the memory map.
func memoryMapSentinel(line []byte) bool {
	return bytes.Contains(line, []byte("--- Memory map: ---")) || bytes.Contains(line, []byte("MAPPED_LIBRARIES:"))
}

// parseLegacy reads a legacy profile (data is the whole decompressed
// input) through profile.ParseData, after both pre-passes.
func parseLegacy(data []byte, lim Limits) (p *Profile, err error) {
	variant := legacyVariant(data[:min(len(data), detectPrefix)])
	if err := boundProtobufAttempt(data, lim); err != nil {
		return nil, err
	}
	if err := scanLegacy(data, lim); err != nil {
		return nil, err
	}
	defer func() {
		if r := recover(); r != nil {
			p, err = nil, failf(FormatPprofLegacy, 0, "legacy profile parser failed: %v", r)
		}
	}()
	pp, perr := profile.ParseData(data)
	if perr != nil {
		return nil, &ParseError{Format: FormatPprofLegacy, Offset: -1, Err: perr,
			Reason: "not a valid legacy pprof profile (" + orUnknown(variant) + "): " + perr.Error()}
	}
	out, err := fromPprof(pp, FormatPprofLegacy)
	if err != nil {
		return nil, err
	}
	if variant != "" {
		out.Limitations = append([]string{"Legacy pprof format (" + variant + "), read with github.com/google/pprof/profile.Parse as `go tool pprof` reads it."},
			out.Limitations...)
	}
	return out, nil
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown variant"
	}
	return s
}

// boundProtobufAttempt walks data as pprofScan walks a protobuf, counting
// what the decoder allocates before it gives up on input that is not
// protobuf. Only a limit stops the import; the walk's "not protobuf"
// verdict is expected here.
func boundProtobufAttempt(data []byte, lim Limits) error {
	s := newPprofScan(lim)
	for pos := 0; pos < len(data); {
		adv, err := s.field(data[pos:], int64(pos), true)
		if err != nil {
			if _, ok := AsLimit(err); ok {
				return err
			}
			return nil
		}
		if adv == 0 {
			return nil
		}
		pos += adv
	}
	return nil
}

// legacyMatchBudget caps distinct addresses × memory-map lines in a legacy
// profile (pprof's remapMappingIDs and massageMappings cost their
// product); legacyMaxMapAttrs caps the "name=value" lines of its memory
// map (each rebuilds a replacer over all earlier ones). Genuine profiles
// stay far below both.
const (
	legacyMatchBudget = 1 << 30
	legacyMaxMapAttrs = 1024
)

// legacyScan counts what pprof's legacy parsers keep.
type legacyScan struct {
	samples, frames, locations, mappings, functions, stringBytes, labels counter
	depth                                                                int64 // frames in the current sample
	maxDepth                                                             int64
	// addrs are the distinct (address, leaf) pairs: pprof adjusts the
	// callers' addresses by -1 and, in CPU and thread profiles, not the
	// leaf's, so one address may become two locations.
	addrs map[legacyAddr]struct{}
	// sampleLabels is how many labels each sample gets (the heap
	// parsers' "bytes" label).
	sampleLabels int64
	mapAttrs     int64 // "name=value" lines in the memory map
}

type legacyAddr struct {
	addr uint64
	leaf bool
}

func newLegacyScan(l Limits) *legacyScan {
	s := &legacyScan{
		samples:     newCounter(l.MaxSamples, LimitSamples, "legacy profile samples"),
		frames:      newCounter(l.MaxStackFrames, LimitStackFrames, "addresses in all legacy profile stacks"),
		locations:   newCounter(l.MaxLocations, LimitLocations, "distinct addresses (locations) in a legacy profile"),
		mappings:    newCounter(l.MaxMappings, LimitMappings, "legacy profile memory-map lines"),
		functions:   newCounter(l.MaxFunctions, LimitFunctions, "Java location lines"),
		stringBytes: newCounter(l.MaxStringBytes, LimitStringBytes, "bytes of legacy profile names and paths"),
		labels:      newCounter(l.MaxLabels, LimitLabels, "legacy profile sample labels"),
		maxDepth:    l.MaxStackDepth,
		addrs:       map[legacyAddr]struct{}{},
	}
	// The mapping pprof adds for addresses that no memory-map line covers.
	s.mappings.n = 1
	return s
}

// sample starts a new sample.
func (s *legacyScan) sample() error {
	s.depth = 0
	if err := s.labels.add(FormatPprofLegacy, s.sampleLabels); err != nil {
		return err
	}
	return s.samples.add(FormatPprofLegacy, 1)
}

// frame counts one address of the current sample.
func (s *legacyScan) frame(addr uint64) error {
	key := legacyAddr{addr, s.depth == 0}
	s.depth++
	if s.depth > s.maxDepth {
		return tooMany(FormatPprofLegacy, LimitStackDepth, s.maxDepth, s.depth, "addresses in one legacy profile stack")
	}
	if err := s.frames.add(FormatPprofLegacy, 1); err != nil {
		return err
	}
	if _, ok := s.addrs[key]; !ok {
		s.addrs[key] = struct{}{}
		return s.locations.add(FormatPprofLegacy, 1)
	}
	return nil
}

// mapLine counts a memory-map line (a mapping and its path).
func (s *legacyScan) mapLine(line []byte) error {
	if len(bytes.TrimSpace(line)) == 0 {
		return nil
	}
	if bytes.IndexByte(line, '=') >= 0 {
		if s.mapAttrs++; s.mapAttrs > legacyMaxMapAttrs {
			return tooMany(FormatPprofLegacy, LimitMappings, legacyMaxMapAttrs, s.mapAttrs,
				"name=value lines in a legacy profile's memory map")
		}
	}
	if err := s.mappings.add(FormatPprofLegacy, 1); err != nil {
		return err
	}
	return s.stringBytes.add(FormatPprofLegacy, int64(len(line)))
}

// javaLocation counts a Java location line ("0x1f com.example.f (F.java:3)").
func (s *legacyScan) javaLocation(line []byte) error {
	if err := s.functions.add(FormatPprofLegacy, 1); err != nil {
		return err
	}
	return s.stringBytes.add(FormatPprofLegacy, int64(len(line)))
}

// scanLegacy checks a legacy profile against the limits without keeping
// more than the set of its distinct addresses (itself bounded).
func scanLegacy(data []byte, lim Limits) error {
	s := newLegacyScan(lim)
	if err := s.scan(data); err != nil {
		return err
	}
	// Checked once both counts are known: the memory map follows the
	// samples.
	if addrs, maps := int64(len(s.addrs)), s.mappings.n; maps > 1 && addrs > legacyMatchBudget/maps {
		return tooMany(FormatPprofLegacy, LimitMappings, legacyMatchBudget/addrs, maps,
			fmt.Sprintf("memory-map lines for %d distinct addresses (pprof matches every address against every mapping; at most %d matches)", addrs, legacyMatchBudget))
	}
	return nil
}

func (s *legacyScan) scan(data []byte) error {
	if size, get, java := cpuHeader(data); size != 0 {
		rest, err := s.binarySamples(data[5*size:], size, get)
		if err != nil {
			return err
		}
		return s.tail(rest, java)
	}
	variant := legacyVariant(data[:min(len(data), detectPrefix)])
	java := strings.HasPrefix(variant, "Java")
	switch variant {
	case "heap profile", "growth profile", "fragmentation profile", "Java heap profile":
		s.sampleLabels = 1
	}
	re := legacyRE()
	inMap := false
	for len(data) > 0 {
		var line []byte
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			line, data = data, nil
		}
		t := bytes.TrimSpace(line)
		switch {
		case inMap:
			if err := s.mapLine(t); err != nil {
				return err
			}
			continue
		case memoryMapSentinel(t):
			inMap = true
			continue
		case java && len(t) > 2 && t[0] == '0' && t[1] == 'x' && bytes.IndexByte(t, '@') < 0:
			if err := s.javaLocation(t); err != nil {
				return err
			}
			continue
		case bytes.IndexByte(t, '@') >= 0 && !bytes.HasPrefix(t, []byte("heap profile:")) ||
			bytes.HasPrefix(t, []byte("--- Thread ")):
			if err := s.sample(); err != nil {
				return err
			}
		}
		for _, m := range re.hexAddr.FindAll(t, -1) {
			if err := s.frame(hexValue(m[2:])); err != nil {
				return err
			}
		}
	}
	return nil
}

// binarySamples walks the records of a binary CPU profile as
// parseCPUSamples does (count, stack size, addresses; 0 1 0 ends them) and
// returns what follows them.
func (s *legacyScan) binarySamples(b []byte, size int, get func([]byte) uint64) ([]byte, error) {
	word := func() (uint64, bool) {
		if len(b) < size {
			b = nil
			return 0, false
		}
		v := get(b)
		b = b[size:]
		return v, true
	}
	for len(b) > 0 {
		count, _ := word()
		nstk, ok := word()
		if !ok || nstk > uint64(len(b)/4) {
			return nil, nil // pprof refuses the record: nothing more is allocated
		}
		if count == 0 && nstk == 1 && len(b) >= size && get(b) == 0 {
			b = b[size:]
			return b, nil // the end-of-data record
		}
		if err := s.sample(); err != nil {
			return nil, err
		}
		if int64(nstk) > s.maxDepth {
			return nil, tooMany(FormatPprofLegacy, LimitStackDepth, s.maxDepth, int64(nstk), "addresses in one legacy profile stack")
		}
		for range nstk {
			a, _ := word()
			if err := s.frame(a); err != nil {
				return nil, err
			}
		}
	}
	return b, nil
}

// tail counts what follows a binary CPU profile's records: its memory map
// (gperftools) or its location lines (Java).
func (s *legacyScan) tail(b []byte, java bool) error {
	for len(b) > 0 {
		var line []byte
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			line, b = b, nil
		}
		t := bytes.TrimSpace(line)
		var err error
		if java && len(t) > 2 && t[0] == '0' && t[1] == 'x' {
			err = s.javaLocation(t)
		} else if !java {
			err = s.mapLine(t)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// hexValue parses lower-case hex digits as pprof's parseHexAddresses
// does, wrapping on overflow (the value only tells addresses apart).
func hexValue(b []byte) uint64 {
	var v uint64
	for _, c := range b {
		switch {
		case c >= '0' && c <= '9':
			v = v<<4 | uint64(c-'0')
		case c >= 'a' && c <= 'f':
			v = v<<4 | uint64(c-'a'+10)
		}
	}
	return v
}

// looksLegacyLine reports whether a line has the shape of a legacy pprof
// text line: a section header ("--- contention:", "--- threadz 1 ---"), a
// heap header, or a sample whose stack is "@" and hex addresses.
func looksLegacyLine(l string) bool {
	t := strings.TrimSpace(l)
	return strings.HasPrefix(t, "--- ") || strings.HasPrefix(t, "heap profile:") ||
		legacyRE().stackTail.MatchString(t)
}
