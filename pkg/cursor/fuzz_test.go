package cursor

import (
	"reflect"
	"testing"

	"github.com/flameox/flameox/pkg/fault"
)

// FuzzDecode: a cursor comes back from a client (CLI flag, MCP argument)
// and may be anything. Decode never panics, fails only with
// INVALID_ARGUMENTS or STALE_CURSOR, and what it accepts re-encodes to a
// token that decodes to the same cursor.
func FuzzDecode(f *testing.F) {
	want := Cursor{Query: "runs.list", Version: "1", Filters: "sha256:ab", Order: "started_at", CommitID: "sha256:cd"}
	good := want
	good.Key = []string{"1700000000", "run"}
	f.Add(Encode(good))
	f.Add("")
	f.Add("garbage")
	f.Add(Encode(Cursor{Query: "other", CommitID: "sha256:cd"}))
	f.Fuzz(func(t *testing.T, s string) {
		c, err := Decode(s, want)
		if err != nil {
			if fe := fault.As(err); fe.Code != fault.InvalidArguments && fe.Code != fault.StaleCursor {
				t.Fatalf("Decode(%q): %v", s, err)
			}
			return
		}
		again, err := Decode(Encode(c), want)
		if err != nil || !reflect.DeepEqual(again, c) {
			t.Fatalf("re-encoded cursor %+v decodes to %+v, %v", c, again, err)
		}
	})
}
