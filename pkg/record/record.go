package record

import (
	"encoding/json"
	"fmt"
)

// SchemaVersion is the current schema_version of every kind defined so far.
const SchemaVersion = 1

// The record kinds defined so far; see the package documentation.
const (
	KindRun        = "run"
	KindGeneration = "generation"
	KindCommit     = "commit"
	KindAnalysis   = "analysis"
	KindError      = "error"
)

// Header is the part every record shares. Record types embed it so that its
// fields appear at the top level of the JSON object.
type Header struct {
	Record        string `json:"record"`         // kind, [a-z][a-z0-9_]*
	SchemaVersion int    `json:"schema_version"` // >= 1
}

// Result is the record a plumbing tool writes for one result: the header
// and, under "result", the same Go value the flameox CLI prints with --json
// and the MCP server returns.
type Result struct {
	Header
	Result any `json:"result"`
}

// NewResult wraps v as a record of the given kind.
func NewResult(kind string, v any) Result {
	return Result{Header: Header{Record: kind, SchemaVersion: SchemaVersion}, Result: v}
}

// An Item is one non-blank line of a stream: a *Raw or a *SyntaxError.
type Item interface {
	// Pos returns the name of the input and the 1-based line number.
	Pos() (fileName string, line int)
	isItem()
}

// Raw is a well-formed line: its parsed header and its original bytes.
type Raw struct {
	Header
	// Line holds the bytes of the line without its "\n" (and without the
	// "\r" before it, if any). It is never modified by the Reader.
	Line   []byte
	File   string // input name given to NewReader
	LineNo int    // 1-based line number
}

// Pos returns the input name and line number of r.
func (r *Raw) Pos() (string, int) { return r.File, r.LineNo }

func (*Raw) isItem() {}

// Decode unmarshals the line into v, usually a pointer to a struct that
// embeds Header. Fields that v does not have are ignored. An error (such as
// a field of the wrong JSON type) is returned as a *SyntaxError at r's
// position, to be reported like any malformed line.
func (r *Raw) Decode(v any) error {
	if err := json.Unmarshal(r.Line, v); err != nil {
		return &SyntaxError{File: r.File, Line: r.LineNo, Msg: fmt.Sprintf("decoding %q record: %v", r.Record, err)}
	}
	return nil
}

// SyntaxError reports a malformed line. The stream continues after it.
type SyntaxError struct {
	File string // input name given to NewReader
	Line int    // 1-based line number
	Msg  string
}

// Error returns "file:line: msg".
func (e *SyntaxError) Error() string { return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg) }

// Pos returns the input name and line number of e.
func (e *SyntaxError) Pos() (string, int) { return e.File, e.Line }

func (*SyntaxError) isItem() {}

// VersionError is returned by Check for a record whose schema_version is
// newer than the reader supports, or whose kind is not the expected one.
type VersionError struct {
	Kind    string // kind the caller expected
	Got     Header // header of the record
	Version int    // highest schema_version the caller supports
}

func (e *VersionError) Error() string {
	if e.Got.Record != e.Kind {
		return fmt.Sprintf("record kind %q, want %q", e.Got.Record, e.Kind)
	}
	return fmt.Sprintf("%q record has schema_version %d, but this program reads %q records only up to schema_version %d; upgrade it",
		e.Kind, e.Got.SchemaVersion, e.Kind, e.Version)
}

// Check returns a *VersionError if h is not of the given kind or if its
// schema_version is above maxVersion, and nil otherwise. Callers check a
// record of a kind they know before decoding it, and report a failure at the
// record's position, as they do a *SyntaxError:
//
//	if err := record.Check(raw.Header, record.KindRun, 1); err != nil {
//		fmt.Fprintf(stderr, "%s:%d: %v\n", raw.File, raw.LineNo, err)
//	}
func Check(h Header, kind string, maxVersion int) error {
	if h.Record != kind || h.SchemaVersion > maxVersion {
		return &VersionError{Kind: kind, Got: h, Version: maxVersion}
	}
	return nil
}

// validKind reports whether s matches [a-z][a-z0-9_]*.
func validKind(s string) bool {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}
