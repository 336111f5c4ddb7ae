package gotest

import (
	"strings"
	"testing"
)

// FuzzParseOptions: any profiles/coverage text from a workload file either
// parses into distinct known profiles, in profileOrder, whose canonical
// spelling parses to the same options, or is refused; never a panic.
func FuzzParseOptions(f *testing.F) {
	for _, seed := range [][2]string{{"cpu,mem", "true"}, {"", "false"}, {" mutex , block ", ""}, {"cpu,cpu", "yes"}, {"heap", "true"}} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, profiles, coverage string) {
		opts := map[string]string{"profiles": profiles}
		if coverage != "" {
			opts["coverage"] = coverage
		}
		o, err := ParseOptions(opts)
		if err != nil {
			return
		}
		if len(o.profiles()) != len(o.Profiles) {
			t.Fatalf("profiles %q: %v holds unknown or repeated names", profiles, o.Profiles)
		}
		again, err := ParseOptions(map[string]string{"profiles": strings.Join(o.Profiles, ","), "coverage": map[bool]string{true: "true", false: "false"}[o.Coverage]})
		if err != nil || strings.Join(again.Profiles, ",") != strings.Join(o.Profiles, ",") || again.Coverage != o.Coverage {
			t.Fatalf("profiles %q coverage %q: canonical form %+v does not parse back (%v)", profiles, coverage, o, err)
		}
	})
}
