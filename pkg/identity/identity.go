package identity

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/flameox/flameox/pkg/digest"
	"github.com/flameox/flameox/pkg/fault"
)

// Quality says how far a record pins what it describes.
type Quality string

const (
	// QualityClean: a source state at a known commit with no diff and no
	// untracked inputs; the commit alone reproduces it.
	QualityClean Quality = "clean"
	// QualityExact: every field was observed. For a source state the tree is
	// dirty but the diff and untracked digests pin it.
	QualityExact Quality = "exact"
	// QualityPartial: at least one field is missing; see MissingFields.
	QualityPartial Quality = "partial"
)

// Runner runs child processes for the collectors. The production runner
// comes from the broker; tests use a plain os/exec runner.
type Runner interface {
	// Output runs argv (no shell) in dir with exactly env as the environment
	// and returns stdout, failing if the process exits non-zero, exceeds
	// timeout, or prints more than limit bytes.
	Output(ctx context.Context, argv []string, dir string, env []string, limit int64, timeout time.Duration) ([]byte, error)
}

// missing collects the names of fields that could not be observed.
type missing map[string]struct{}

func (m missing) add(names ...string) {
	for _, n := range names {
		m[n] = struct{}{}
	}
}

// sorted returns the names in order, as an empty (never nil) slice when
// nothing is missing so that the JSON form is always [].
func (m missing) sorted() []string {
	out := slices.Sorted(maps.Keys(m))
	if out == nil {
		out = []string{}
	}
	return out
}

// recordID is the digest of a record's canonical JSON without the given
// top-level keys (the id itself and observed_at). Going through the JSON
// form means every field added to a record later is covered automatically.
func recordID(record any, drop ...string) (string, error) {
	raw, err := json.Marshal(record)
	if err != nil {
		return "", fmt.Errorf("marshal identity record: %w", err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return "", fmt.Errorf("decode identity record: %w", err)
	}
	for _, k := range drop {
		delete(m, k)
	}
	return digest.Of(m)
}

// verifyID recomputes a record's id and compares it with the stored one.
func verifyID(kind, stored string, record any, drop ...string) error {
	if !digest.Valid(stored) {
		return fault.New(fault.ArtifactIntegrityFailed, "%s id %q is not a sha256 digest", kind, clip(stored))
	}
	want, err := recordID(record, drop...)
	if err != nil {
		return fault.Wrap(fault.ArtifactIntegrityFailed, err, "%s record cannot be canonicalized", kind)
	}
	if want != stored {
		return fault.New(fault.ArtifactIntegrityFailed, "%s record does not match its id", kind).
			With("stored_id", stored).With("computed_id", want).
			Fix("The record was modified after it was written; collect it again.")
	}
	return nil
}

// oneLine reduces tool output to a short printable line: the first non-empty
// line, trimmed, without control characters, at most 200 bytes.
func oneLine(b []byte) string {
	s := strings.ToValidUTF8(string(b), "\uFFFD")
	for line := range strings.Lines(s) {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		line = strings.Map(func(r rune) rune {
			if unicode.IsControl(r) {
				return -1
			}
			return r
		}, line)
		return clip(line)
	}
	return ""
}

// clip bounds a string to 200 bytes without splitting a UTF-8 sequence.
func clip(s string) string {
	const max = 200
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}

// now is the observation clock, in UTC without a monotonic reading.
func now() time.Time { return time.Now().UTC().Round(0) }
