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
	if isJSONObject(head) && isText(head) {
		if looksSpeedscope(head) {
			return FormatSpeedscope
		}
		return FormatUnknown
	}
	if !isText(head) {
		if looksProtobuf(head) {
			return FormatPprof
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

// looksProtobuf checks that the first byte is a valid key of a top-level
// pprof Profile field (numbers 1–15, varint or length-delimited).
func looksProtobuf(b []byte) bool {
	field, wire := b[0]>>3, b[0]&7
	return field >= 1 && field <= 15 && (wire == 0 || wire == 2)
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
