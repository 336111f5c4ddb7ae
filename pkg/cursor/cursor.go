package cursor

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"strings"

	"github.com/flameox/flameox/pkg/corpus"
	"github.com/flameox/flameox/pkg/digest"
	"github.com/flameox/flameox/pkg/fault"
)

// Cursor is the position after the last row of a page. It is bound to the
// query and its version, the filters (a digest, see FiltersDigest), the
// order, and the commit the page was read from: a cursor only continues the
// exact listing that produced it.
type Cursor struct {
	Query    string   `json:"q"`
	Version  string   `json:"v"`
	Filters  string   `json:"f"`
	Order    string   `json:"o"`
	Key      []string `json:"k"` // the last row's sort key, as strings
	CommitID string   `json:"c"`
}

// maxCursorLen bounds the input Decode accepts.
const maxCursorLen = 8 << 10

// checkLen is the number of SHA-256 bytes appended to detect edits.
const checkLen = 8

// FiltersDigest names a request's filters (any JSON-able value, normally
// the request struct without limit and cursor) by their canonical digest.
func FiltersDigest(v any) (string, error) { return digest.Of(v) }

// Encode returns c as an opaque token: base64url (no padding) of its
// compact JSON followed by the first 8 bytes of the JSON's SHA-256. The check
// detects edits and truncation; it is not a secret and needs none, because
// a cursor grants nothing a new query would not.
func Encode(c Cursor) string {
	if c.Key == nil {
		c.Key = []string{}
	}
	data, err := json.Marshal(c)
	if err != nil {
		panic(err) // strings only: cannot fail
	}
	sum := sha256.Sum256(data)
	return base64.RawURLEncoding.EncodeToString(append(data, sum[:checkLen]...))
}

// Decode parses s and checks that it continues want (whose Key is
// ignored). A token that is not one this package produced, or was edited,
// is INVALID_ARGUMENTS. A cursor of another query, version, filter set or
// order, or read from another commit, is STALE_CURSOR (exit 7).
func Decode(s string, want Cursor) (Cursor, error) {
	invalid := func(why string) (Cursor, error) {
		return Cursor{}, fault.New(fault.InvalidArguments, "the cursor is not valid (%s)", why).
			Fix("Pass the cursor exactly as a previous page returned it, or repeat the query without --cursor.")
	}
	if len(s) > maxCursorLen {
		return invalid("too long")
	}
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimSpace(s))
	if err != nil || len(raw) <= checkLen {
		return invalid("not a cursor token")
	}
	data, check := raw[:len(raw)-checkLen], raw[len(raw)-checkLen:]
	sum := sha256.Sum256(data)
	if subtle.ConstantTimeCompare(sum[:checkLen], check) != 1 {
		return invalid("it was edited or truncated")
	}
	var c Cursor
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil || c.Query == "" || c.CommitID == "" {
		return invalid("unreadable content")
	}
	if c.Query != want.Query || c.Version != want.Version {
		return Cursor{}, stale("the cursor belongs to query %s@%s, not %s@%s", c.Query, c.Version, want.Query, want.Version)
	}
	if c.Filters != want.Filters || c.Order != want.Order {
		return Cursor{}, stale("the cursor was made with other filters or another order")
	}
	if c.CommitID != want.CommitID {
		return Cursor{}, stale("the corpus moved from %s to %s", corpus.Short(c.CommitID), corpus.Short(want.CommitID)).
			With("cursor_commit_id", c.CommitID).With("commit_id", want.CommitID)
	}
	return c, nil
}

func stale(format string, args ...any) *fault.Error {
	e := fault.New(fault.StaleCursor, format, args...)
	e.Message += "; repeat the query without --cursor"
	return e.Fix("Repeat the query without --cursor to start from the first page.")
}
