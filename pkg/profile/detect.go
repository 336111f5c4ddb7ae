package profile

import (
	"bytes"
	"io"
	"unicode/utf8"
)

// speedscopeSchema is the "$schema" value every speedscope exporter writes.
const speedscopeSchema = "https://www.speedscope.app/file-format-schema.json"

// Detect names the format of a profile from its first bytes (any prefix of
// the file, ideally 64 KiB or more). Gzip is looked through. It never trusts
// a file name, and it answers FormatUnknown rather than guess: Chrome trace
// JSON, other JSON, and text in which any complete line fits neither perf
// script nor "stack count" are unknown. Parse re-checks the whole input.
//
// The checks run from the strictest to the loosest, each refusing what an
// earlier one claims, so that no format is mistaken for another: pprof
// protobuf (binary whose every top-level field is a Profile field), the
// legacy pprof formats (the binary CPU header, or a first line that
// pprof's legacy parsers recognise), speedscope JSON, perf script (which
// also refuses text with legacy pprof lines: "heap profile:" headers,
// "--- " sections, "@ 0x…" stacks, percentage columns), then collapsed
// stacks.
func Detect(head []byte) Format {
	return detect(head, true)
}

func detect(head []byte, lookInsideGzip bool) Format {
	if len(head) == 0 {
		return FormatUnknown
	}
	if isGzip(head) {
		if !lookInsideGzip {
			return FormatUnknown
		}
		inner, _ := io.ReadAll(io.LimitReader(gzipReader(head), 1<<20))
		return detect(inner, false)
	}
	text := isText(head)
	if !text && looksProtobuf(head) && !LooksPerfetto(head) {
		return FormatPprof
	}
	if legacyVariant(head) != "" {
		return FormatPprofLegacy
	}
	if !text {
		return FormatUnknown
	}
	if isJSONObject(head) {
		if looksSpeedscope(head) {
			return FormatSpeedscope
		}
		return FormatUnknown
	}
	lines := completeLines(head)
	switch {
	case looksPerf(lines):
		return FormatPerfScript
	case looksCollapsed(lines):
		return FormatCollapsed
	}
	return FormatUnknown
}

func isJSONObject(b []byte) bool {
	b = bytes.TrimLeft(b, " \t\r\n\ufeff")
	return len(b) > 0 && b[0] == '{'
}

// looksSpeedscope accepts the speedscope schema marker, or the file shape
// {"shared": {"frames": …}, "profiles": …} when the marker is missing.
func looksSpeedscope(b []byte) bool {
	if bytes.Contains(b, []byte(speedscopeSchema)) {
		return true
	}
	return bytes.Contains(b, []byte(`"shared"`)) && bytes.Contains(b, []byte(`"frames"`)) &&
		bytes.Contains(b, []byte(`"profiles"`))
}

// pprofWire is the wire type of each top-level field of pprof's Profile
// message (profile.proto): 0 varint, 2 length-delimited. Field 13
// (comment) may also be packed (2).
var pprofWire = map[byte][]byte{1: {2}, 2: {2}, 3: {2}, 4: {2}, 5: {2}, 6: {2}, 7: {0}, 8: {0}, 9: {0},
	10: {0}, 11: {2}, 12: {0}, 13: {0, 2}, 14: {0}, 15: {2}}

// looksProtobuf walks the top-level fields in b and accepts it only when
// every key is a pprof Profile field with its wire type and every varint
// and length fits (the last field may run past the prefix). perf.data
// ("PERFILE2"), ELF files and other binaries fail within a few bytes.
func looksProtobuf(b []byte) bool {
	if bytes.HasPrefix(b, []byte("PERFILE")) || bytes.HasPrefix(b, []byte("\x7fELF")) {
		return false
	}
	fields := 0
	for i := 0; i < len(b); {
		key, n := uvarint(b[i:])
		if n <= 0 || key>>3 > 15 {
			return n == 0 && fields > 0 // a key cut by the end of the prefix
		}
		field, wire := byte(key>>3), byte(key&7)
		ok := false
		for _, w := range pprofWire[field] {
			ok = ok || w == wire
		}
		if !ok {
			return false
		}
		i += n
		switch wire {
		case 0:
			_, m := uvarint(b[i:])
			if m < 0 || (m == 0 && i < len(b)) && len(b)-i >= 10 {
				return false
			}
			if m == 0 {
				return fields > 0
			}
			i += m
		case 2:
			l, m := uvarint(b[i:])
			if m <= 0 {
				return m == 0 && fields > 0
			}
			i += m
			if l > 1<<40 {
				return false
			}
			i += int(l)
		}
		fields++
	}
	return fields > 0
}

// uvarint decodes a protobuf varint: n > 0 bytes read, 0 when b ends first,
// < 0 on overflow.
func uvarint(b []byte) (uint64, int) {
	var v uint64
	for i := 0; i < len(b) && i < 10; i++ {
		v |= uint64(b[i]&0x7f) << (7 * i)
		if b[i] < 0x80 {
			return v, i + 1
		}
	}
	if len(b) >= 10 {
		return 0, -1
	}
	return 0, 0
}

// isText reports whether b is UTF-8 text without control bytes other than
// tab, newline, carriage return and form feed. A prefix cut inside a
// multi-byte rune is still text.
func isText(b []byte) bool {
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 {
			if len(b)-i < utf8.UTFMax && !utf8.FullRune(b[i:]) {
				return true
			}
			return false
		}
		if r < 0x20 && r != '\t' && r != '\n' && r != '\r' && r != '\f' || r == 0x7f {
			return false
		}
		i += size
	}
	return true
}

// completeLines splits a prefix into lines, dropping a last line that may be
// cut (no trailing newline) unless it is the only one.
func completeLines(b []byte) []string {
	lines := splitLines(b)
	if len(lines) > 1 && len(b) > 0 && b[len(b)-1] != '\n' {
		lines = lines[:len(lines)-1]
	}
	return lines
}

func splitLines(b []byte) []string {
	s := string(b)
	var out []string
	for len(s) > 0 {
		i := 0
		for i < len(s) && s[i] != '\n' {
			i++
		}
		line := s[:i]
		if n := len(line); n > 0 && line[n-1] == '\r' {
			line = line[:n-1]
		}
		out = append(out, line)
		if i == len(s) {
			break
		}
		s = s[i+1:]
	}
	return out
}

// LooksPerfetto reports whether head (a prefix of the file, not gzipped)
// is a Perfetto protobuf trace: a Trace message, whose only field is
// `repeated TracePacket packet = 1`, so every top-level field is field 1,
// length-delimited, and the first packet holds a TracePacket field above 2
// (timestamp = 8, trusted_packet_sequence_id = 10, ...), which a pprof
// Profile's first field, a ValueType {type = 1, unit = 2}, never does.
func LooksPerfetto(head []byte) bool {
	first := true
	for i := 0; i < len(head); {
		key, n := uvarint(head[i:])
		if n == 0 {
			return !first
		}
		if n < 0 || key != 1<<3|2 {
			return false
		}
		i += n
		l, m := uvarint(head[i:])
		if m <= 0 {
			return m == 0 && !first
		}
		i += m
		if first {
			end := min(len(head), i+int(min(l, 1<<20)))
			if !packetFields(head[i:end]) {
				return false
			}
			first = false
		}
		if l > 1<<40 {
			return false
		}
		i += int(l)
	}
	return !first
}

// RejectsPerfetto reports whether prefix, a file's first bytes, already
// rules Perfetto out: LooksPerfetto of any longer head of the same file
// is false. It decides from the first packet when the prefix holds all of
// it, so a sniffer need not decode a MiB of a file that is something else
// (a pprof profile's first packet is a sample type, fields 1 and 2 only).
func RejectsPerfetto(prefix []byte) bool {
	key, n := uvarint(prefix)
	if n < 0 || (n > 0 && key != 1<<3|2) {
		return true
	}
	if n == 0 {
		return false
	}
	l, m := uvarint(prefix[n:])
	if m <= 0 {
		return m < 0
	}
	i := n + m
	if l > uint64(len(prefix)-i) {
		return false
	}
	return !packetFields(prefix[i : i+int(l)])
}

// packetFields reports whether b (a packet, or its prefix) is well-formed
// protobuf with a field number above 2.
func packetFields(b []byte) bool {
	above := false
	for i := 0; i < len(b); {
		key, n := uvarint(b[i:])
		if n <= 0 || key>>3 == 0 {
			return above && n == 0
		}
		above = above || key>>3 > 2
		i += n
		switch key & 7 {
		case 0:
			_, m := uvarint(b[i:])
			if m <= 0 {
				return above && m == 0
			}
			i += m
		case 1:
			i += 8
		case 2:
			l, m := uvarint(b[i:])
			if m <= 0 || l > 1<<40 {
				return above && m == 0
			}
			i += m + int(l)
		case 5:
			i += 4
		default:
			return false
		}
	}
	return above
}
