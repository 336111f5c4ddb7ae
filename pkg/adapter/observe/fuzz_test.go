package observe

import (
	"bytes"
	"errors"
	"testing"

	"github.com/flameox/flameox/pkg/config"
)

// FuzzParse: any bytes give contents or a ParseError, never a panic, and
// what parses has a header and bounded, sorted rows.
func FuzzParse(f *testing.F) {
	f.Add([]byte(head + `{"t": "observe", "name": "a", "values": {"b": [1, {"c": null}]}, "phase": "p"}` + "\n"))
	f.Add([]byte(head + `{"t": "phase", "name": "p", "duration_ns": 3}` + "\n"))
	f.Add([]byte(`{"flameox_observations": 1}` + "\n" + `{"flameox_observations": 1}`))
	f.Add([]byte("\xff\xfe"))
	f.Fuzz(func(t *testing.T, data []byte) {
		lim := config.DefaultLimits()
		lim.MaxSamples, lim.MaxStrings = 1000, 1000
		c, err := Parse(bytes.NewReader(data), lim)
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("not a ParseError: %v", err)
			}
			return
		}
		if c.Processes == 0 || len(c.Observations) > 1000 {
			t.Fatalf("contents %+v", c)
		}
		for i := 1; i < len(c.Observations); i++ {
			if c.Observations[i-1].Name > c.Observations[i].Name {
				t.Fatal("unsorted")
			}
		}
	})
}
