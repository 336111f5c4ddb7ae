// Package record defines the JSON-lines stream that flameox's plumbing tools
// (fox-capture, fox-publish, fox-catalog, fox-analyze, ...) read on stdin and
// write on stdout, and provides a Reader and a Writer for it.
//
// This comment is the specification of the stream. A tool written in any
// language that follows it can take part in a pipeline; the Go code in this
// package implements it.
//
// # Lines
//
// A stream is a sequence of lines. Each line is one JSON object (RFC 8259)
// encoded in UTF-8, written compactly (no line breaks or indentation inside
// it) and terminated by a single "\n". Writers emit nothing else: no blank
// lines, no "\r", no whitespace around the object. Readers accept exactly
// these deviations:
//
//   - a line that is empty or holds only spaces and tabs is ignored;
//   - one "\r" immediately before the "\n" is removed (CRLF files read the same);
//   - the last line of the stream may lack its "\n";
//   - JSON whitespace around the object is allowed, and kept in Raw.Line.
//
// Lines are numbered from 1, counting every line, blank ones included.
//
// # Header
//
// Every object has two header fields:
//
//   - "record": a string, the kind of the record, matching [a-z][a-z0-9_]*;
//   - "schema_version": an integer from 1 to 2147483647 written as plain
//     digits, without sign, fraction or exponent (1, never 1.0, 1e0 or "1").
//
// Field names are snake_case and are matched exactly. A line with two
// "record" or two "schema_version" keys, or with a key equal to one of them
// except for case (such as "Record"), is malformed: Go's encoding/json would
// otherwise match such a key to the header. All other fields of a record sit at
// the top level of the object, beside the header; a Go record type embeds
// Header so that its fields come out flat:
//
//	type Analysis struct {
//		record.Header
//		RunID string `json:"run_id"`
//	}
//
// # Versions
//
// Each kind has its own schema, versioned by schema_version. At this point
// every kind is at version SchemaVersion (1). Within one schema_version a
// schema only grows: fields may be added, but no field is removed, renamed,
// retyped or given a new meaning. Any incompatible change increments
// schema_version for that kind. Therefore:
//
//   - Readers ignore fields they do not know (Raw.Decode does).
//   - A filter passes records of kinds it does not know through unchanged,
//     byte for byte (Writer.WriteRaw), whatever their schema_version.
//   - A reader that meets a kind it knows with a schema_version above the
//     highest it supports does not guess: it reports an error naming the kind
//     and both versions (see Check) and treats the line as malformed.
//
// # Content
//
// Records carry identifiers, small metadata and file paths, never large
// payloads: profiles, traces and tables live in files that records name. A
// path in a record is either absolute or relative to the workspace named in
// the same record, never to the working directory of a process.
//
// # Malformed lines
//
// A malformed line does not end the stream. A reader reports it as a
// *SyntaxError, printed "file:line: message", and continues with the next
// line. Tools print each such error on stderr, keep going, and exit with a
// non-zero status at the end. A non-blank line is malformed when it
//
//   - is longer than the line budget (below);
//   - is not valid UTF-8;
//   - is not valid JSON, or nests deeper than the depth budget (below);
//   - is valid JSON but not an object;
//   - lacks "record" or "schema_version", or has a kind that does not match
//     [a-z][a-z0-9_]*, or a schema_version that breaks the rule above, or
//     breaks the key rules under Header.
//
// Only failure to read the input (an I/O error) ends a stream early; the
// Reader reports it through Err, never as a SyntaxError. A tool that fails
// as a whole writes an "error" record on stdout before exiting non-zero, so
// that the next tool in the pipeline sees why the stream ended.
//
// # Budgets
//
// The line budget limits the length of a line in bytes, not counting its "\n"
// and the "\r" before it; it defaults to DefaultMaxLineBytes (4 MiB). A reader
// skips the rest of an over-long line without holding it in memory, reports
// it once, and continues with the next line. The depth budget limits JSON
// nesting: the top-level object is at depth 1 and each object or array inside
// it adds one; brackets inside strings do not count. It defaults to
// DefaultMaxDepth (64). Both are configurable in readers (MaxLineBytes,
// MaxDepth); Writer.Write refuses lines over the defaults, so that every
// reader accepts what a flameox tool writes.
//
// # Progress
//
// Stdout carries records only. Progress, logs and diagnostics go to stderr.
// There is no progress record: a stream means the same thing whether or not
// progress was shown.
//
// # Kinds
//
// The kinds defined so far, with their meaning:
//
//   - "run": a run manifest revision was written; carries workspace, run_id,
//     revision, the path of the manifest and the ids of its artifacts.
//   - "generation": fox-publish published a generation of the corpus.
//   - "commit": fox-publish advanced corpus/HEAD to a generation.
//   - "analysis": an analysis result, to be persisted.
//   - "error": the producing tool failed; carries the fields of the flameox
//     error: code, message, retryable, details, remediation and run_id.
//
// # Go API
//
// Reader reads a stream one line at a time, like golang.org/x/perf/benchfmt:
// Scan advances, Record returns the line as an Item, either a *Raw (a
// well-formed line with its parsed Header) or a *SyntaxError. Each *Raw and its
// Line are newly allocated and belong to the caller; later calls to Scan do not
// change them. Raw.Decode unmarshals a line into a typed record, and reports
// a line that does not fit it (a field of the wrong JSON type) as a
// *SyntaxError.
//
// Writer writes one record per Write call, as a single write to the
// underlying io.Writer with no further buffering: records reach the next tool
// as soon as they are written, and lines of up to PIPE_BUF bytes (4096 on
// Linux) written to the same pipe by several processes never interleave.
package record
