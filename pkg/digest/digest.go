// Package digest turns values into canonical JSON (RFC 8785, JCS) and names
// bytes by "sha256:<64 lowercase hex>" digests.
//
// flameox content-addresses its records (environments, source states, run
// manifests), so the same value must serialize to the same bytes on every
// machine, Go version and map iteration order. encoding/json alone does not
// promise that: its number formatting and HTML escaping are not RFC 8785. We
// therefore marshal with encoding/json and hand the result to
// github.com/gowebpki/jcs, which implements RFC 8785 (ECMAScript number
// formatting, UTF-16 key ordering, minimal string escaping) so that we do not
// hand-write float formatting. Values with no JSON form (NaN, ±Inf, channels,
// functions) are refused rather than given a lossy canonical form.
package digest

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"

	"github.com/flameox/flameox/pkg/fault"
	"github.com/gowebpki/jcs"
)

// Prefix starts every digest this package produces.
const Prefix = "sha256:"

// hexLen is the length of a hex-encoded SHA-256 sum.
const hexLen = 2 * sha256.Size

// Canonical returns the RFC 8785 canonical JSON encoding of v.
//
// v is first marshalled with encoding/json, so struct tags, omitempty and
// json.Marshaler apply as usual; the result is then canonicalized. It fails
// with INVALID_ARGUMENTS for values JSON cannot represent (NaN, ±Inf,
// unsupported types) and for JSON that RFC 8785 rejects (such as duplicate
// object keys produced by a custom marshaler).
func Canonical(v any) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		var uv *json.UnsupportedValueError
		if errors.As(err, &uv) {
			return nil, fault.Wrap(fault.InvalidArguments, err,
				"value has no canonical JSON form (NaN and ±Inf cannot be encoded)").
				With("value", uv.Str).
				Fix("Replace NaN or infinite numbers with null or a finite value before recording them.")
		}
		var ut *json.UnsupportedTypeError
		if errors.As(err, &ut) {
			return nil, fault.Wrap(fault.InvalidArguments, err,
				"value has no canonical JSON form").With("type", ut.Type.String())
		}
		return nil, fault.Wrap(fault.InvalidArguments, err, "cannot marshal value to JSON")
	}
	out, err := jcs.Transform(raw)
	if err != nil {
		return nil, fault.Wrap(fault.InvalidArguments, err, "cannot canonicalize JSON (RFC 8785)")
	}
	return out, nil
}

// Of returns the digest of v's canonical JSON: "sha256:" followed by the
// lowercase hex SHA-256 of Canonical(v).
func Of(v any) (string, error) {
	b, err := Canonical(v)
	if err != nil {
		return "", err
	}
	return Bytes(b), nil
}

// Bytes returns "sha256:" followed by the lowercase hex SHA-256 of b.
func Bytes(b []byte) string {
	sum := sha256.Sum256(b)
	return Prefix + hex.EncodeToString(sum[:])
}

// Valid reports whether id is exactly "sha256:" followed by 64 lowercase hex
// digits. Uppercase hex is rejected so that one sum has one spelling.
func Valid(id string) bool {
	h, ok := strings.CutPrefix(id, Prefix)
	if !ok || len(h) != hexLen {
		return false
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// Hex returns the 64 hex digits of a valid digest, or INVALID_ARGUMENTS.
func Hex(id string) (string, error) {
	if !Valid(id) {
		return "", fault.New(fault.InvalidArguments, "malformed digest %q", clip(id)).
			Fix(`A digest is "sha256:" followed by 64 lowercase hexadecimal digits.`)
	}
	return id[len(Prefix):], nil
}

// clip bounds user-supplied text quoted in an error message.
func clip(s string) string {
	const max = 80
	if len(s) > max {
		return s[:max] + "…"
	}
	return s
}
