package profile

import (
	"errors"
	"os"
	"testing"

	"github.com/flameox/flameox/pkg/profile/bombtest"
)

// TestBombCorpus parses every file of the bomb corpus in process with the
// default limits: each bomb fails with ErrTooLarge naming its limit, each
// genuine file parses. (pkg/adapter/stacks runs the same corpus through the
// real import under an address-space limit.)
func TestBombCorpus(t *testing.T) {
	cases, err := bombtest.Write(t.TempDir(), testing.Short())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			f, err := os.Open(c.File)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			p, err := Parse(f, Options{})
			var pe *ParseError
			if err != nil && !errors.As(err, &pe) {
				t.Fatalf("not a *ParseError: %T %v", err, err)
			}
			switch c.Want {
			case bombtest.Refused:
				le, ok := AsLimit(err)
				if !ok || !errors.Is(err, ErrTooLarge) {
					t.Fatalf("want limit %s, got %v", c.Limit, err)
				}
				if le.Limit != c.Limit || le.Observed <= le.Max {
					t.Fatalf("want limit %s, got %+v", c.Limit, le)
				}
			case bombtest.Imported:
				if err != nil {
					t.Fatal(err)
				}
				if string(p.Format) != c.Format {
					t.Fatalf("format %s, want %s", p.Format, c.Format)
				}
			}
		})
	}
}
