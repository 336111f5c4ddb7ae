package cursor

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/flameox/flameox/pkg/digest"
	"github.com/flameox/flameox/pkg/fault"
)

func must(tb testing.TB, err error) {
	tb.Helper()
	if err != nil {
		tb.Fatal(err)
	}
}

func wantCode(tb testing.TB, err error, code fault.Code) *fault.Error {
	tb.Helper()
	if !fault.Is(err, code) {
		tb.Fatalf("got %v, want %s", err, code)
	}
	return fault.As(err)
}

func TestCursor(t *testing.T) {
	filters, err := FiltersDigest(map[string]any{"status": "registered"})
	must(t, err)
	c1, c2 := digest.Bytes([]byte("c1")), digest.Bytes([]byte("c2"))
	want := Cursor{Query: "runs.list", Version: "1", Filters: filters, Order: "created_at DESC, run_id", CommitID: c1}
	c := want
	c.Key = []string{"2026-03-01T12:00:00Z", "run-9"}
	tok := Encode(c)
	if strings.ContainsAny(tok, "+/= ") {
		t.Fatalf("token is not base64url: %q", tok)
	}
	got, err := Decode(tok, want)
	must(t, err)
	if got.Key[1] != "run-9" || got.CommitID != c1 {
		t.Fatalf("round trip = %+v", got)
	}

	// Edits: a flipped byte in the payload, a truncated token, garbage.
	raw, _ := base64.RawURLEncoding.DecodeString(tok)
	raw[10] ^= 1
	for _, bad := range []string{base64.RawURLEncoding.EncodeToString(raw), tok[:len(tok)-3], "not a cursor!", "", strings.Repeat("A", 9000)} {
		_, err := Decode(bad, want)
		wantCode(t, err, fault.InvalidArguments)
	}

	// Another commit.
	moved := want
	moved.CommitID = c2
	_, err = Decode(tok, moved)
	fe := wantCode(t, err, fault.StaleCursor)
	if fe.ExitCode() != 7 || !strings.Contains(fe.Message, "the corpus moved from") || !strings.Contains(fe.Message, "without --cursor") {
		t.Fatalf("stale cursor error = %s (exit %d)", fe.Message, fe.ExitCode())
	}
	// Another query version, filters or order.
	for _, w := range []Cursor{
		{Query: "runs.list", Version: "2", Filters: filters, Order: want.Order, CommitID: c1},
		{Query: "artifacts.list", Version: "1", Filters: filters, Order: want.Order, CommitID: c1},
		{Query: "runs.list", Version: "1", Filters: "sha256:x", Order: want.Order, CommitID: c1},
		{Query: "runs.list", Version: "1", Filters: filters, Order: "run_id", CommitID: c1},
	} {
		_, err := Decode(tok, w)
		wantCode(t, err, fault.StaleCursor)
	}
}
