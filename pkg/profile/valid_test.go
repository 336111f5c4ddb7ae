package profile

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
)

// validProfile is a small consistent profile: two mappings, three
// functions, four locations (one inlined), three samples.
func validProfile() *profile.Profile {
	m := []*profile.Mapping{{ID: 1, File: "a.out"}, {ID: 2, File: "libc.so"}}
	f := []*profile.Function{{ID: 1, Name: "main"}, {ID: 2, Name: "work"}, {ID: 3, Name: "memcpy"}}
	l := []*profile.Location{
		{ID: 1, Mapping: m[0], Line: []profile.Line{{Function: f[0]}}},
		{ID: 2, Mapping: m[0], Line: []profile.Line{{Function: f[1]}, {Function: f[0]}}},
		{ID: 3, Mapping: m[1], Line: []profile.Line{{Function: f[2]}}},
		{ID: 4, Address: 0x1234},
	}
	return &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		Sample: []*profile.Sample{
			{Location: []*profile.Location{l[2], l[1]}, Value: []int64{1, 10}},
			{Location: []*profile.Location{l[1], l[0]}, Value: []int64{2, 20}},
			{Location: []*profile.Location{l[3]}, Value: []int64{3, 30}},
		},
		Mapping: m, Function: f, Location: l,
	}
}

// TestValidDense: on every way CheckValid refuses a profile, validDense
// does not vouch for it, and checkValid gives CheckValid's error; on
// consistent profiles it vouches, with sparse IDs left to CheckValid.
func TestValidDense(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(p *profile.Profile)
		valid  bool // CheckValid accepts the result
		dense  bool // validDense vouches
	}{
		{"consistent", func(*profile.Profile) {}, true, true},
		{"no samples, no types", func(p *profile.Profile) { p.Sample, p.SampleType = nil, nil }, true, true},
		{"sparse function ids", func(p *profile.Profile) { p.Function[2].ID = 1 << 40 }, true, false},
		{"sparse location ids", func(p *profile.Profile) { p.Location[3].ID = 1 << 40 }, true, false},
		{"sparse mapping ids", func(p *profile.Profile) { p.Mapping[1].ID = 1 << 40 }, true, false},
		{"ids within the slack", func(p *profile.Profile) { p.Function[2].ID = denseSlack }, true, true},
		{"samples without types", func(p *profile.Profile) { p.SampleType = nil }, false, false},
		{"nil sample", func(p *profile.Profile) { p.Sample[1] = nil }, false, false},
		{"short sample", func(p *profile.Profile) { p.Sample[0].Value = p.Sample[0].Value[:1] }, false, false},
		{"nil sample location", func(p *profile.Profile) { p.Sample[2].Location[0] = nil }, false, false},
		{"nil mapping", func(p *profile.Profile) { p.Mapping[0] = nil }, false, false},
		{"mapping id 0", func(p *profile.Profile) { p.Mapping[1].ID = 0 }, false, false},
		{"mapping id twice", func(p *profile.Profile) { p.Mapping[1].ID = 1 }, false, false},
		{"nil function", func(p *profile.Profile) { p.Function[2] = nil }, false, false},
		{"function id 0", func(p *profile.Profile) { p.Function[0].ID = 0 }, false, false},
		{"function id twice", func(p *profile.Profile) { p.Function[2].ID = 2 }, false, false},
		{"nil location", func(p *profile.Profile) { p.Location[3] = nil }, false, false},
		{"location id 0", func(p *profile.Profile) { p.Location[3].ID = 0 }, false, false},
		{"location id twice", func(p *profile.Profile) { p.Location[3].ID = 1 }, false, false},
		{"location listed twice", func(p *profile.Profile) { p.Location = append(p.Location, p.Location[0]) }, false, false},
		{"mapping not in the table", func(p *profile.Profile) { p.Location[0].Mapping = &profile.Mapping{ID: 1} }, false, false},
		{"mapping id beyond the table", func(p *profile.Profile) { p.Location[0].Mapping = &profile.Mapping{ID: 9} }, false, false},
		{"mapping of id 0", func(p *profile.Profile) { p.Location[0].Mapping = &profile.Mapping{} }, false, false},
		{"line without function", func(p *profile.Profile) { p.Location[1].Line[1].Function = nil }, false, false},
		{"function not in the table", func(p *profile.Profile) { p.Location[1].Line[0].Function = &profile.Function{ID: 2} }, false, false},
		{"function id beyond the table", func(p *profile.Profile) { p.Location[1].Line[0].Function = &profile.Function{ID: 99} }, false, false},
		{"function of id 0", func(p *profile.Profile) { p.Location[1].Line[0].Function = &profile.Function{} }, false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := validProfile()
			c.mutate(p)
			want := p.CheckValid()
			if (want == nil) != c.valid {
				t.Fatalf("CheckValid = %v, the case expects valid=%v", want, c.valid)
			}
			if got := validDense(p); got != c.dense {
				t.Fatalf("validDense = %v, want %v", got, c.dense)
			}
			got := checkValid(p)
			if (got == nil) != (want == nil) || got != nil && got.Error() != want.Error() {
				t.Fatalf("checkValid = %v, CheckValid = %v", got, want)
			}
		})
	}
}

// TestValidDenseMutations: validDense never vouches for a profile that
// CheckValid refuses, over random damage to the fixtures' decoded
// profiles (IDs changed, entries dropped, duplicated or nil, pointers
// swapped for look-alikes).
func TestValidDenseMutations(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.pb.gz")
	files = slices.DeleteFunc(files, func(f string) bool { return strings.Contains(f, "large") }) // 200 parses of 1.2 MB
	if len(files) == 0 {
		t.Fatal("no pprof fixtures in testdata")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	refused, vouched := 0, 0
	for _, file := range files {
		for range 200 {
			f, err := os.Open(file)
			if err != nil {
				t.Fatal(err)
			}
			p, err := profile.Parse(f)
			f.Close()
			if err != nil {
				t.Fatal(err)
			}
			for range 1 + rng.IntN(2) {
				mutate(rng, p)
			}
			err = p.CheckValid()
			if validDense(p) {
				vouched++
				if err != nil {
					t.Fatalf("%s: validDense vouched for a profile CheckValid refuses: %v", file, err)
				}
			}
			if err != nil {
				refused++
			}
			if got := checkValid(p); (got == nil) != (err == nil) {
				t.Fatalf("%s: checkValid = %v, CheckValid = %v", file, got, err)
			}
		}
	}
	if refused == 0 || vouched == 0 {
		t.Fatalf("the mutations are one-sided: %d refused, %d vouched for", refused, vouched)
	}
}

func mutate(rng *rand.Rand, p *profile.Profile) {
	pick := func(n int) int { return rng.IntN(max(n, 1)) }
	ids := []uint64{0, 1, 2, uint64(len(p.Location)), uint64(len(p.Function)) + 1, 1 << 40}
	switch rng.IntN(12) {
	case 0:
		if len(p.Location) > 0 {
			p.Location[pick(len(p.Location))].ID = ids[pick(len(ids))]
		}
	case 1:
		if len(p.Function) > 0 {
			p.Function[pick(len(p.Function))].ID = ids[pick(len(ids))]
		}
	case 2:
		if len(p.Mapping) > 0 {
			p.Mapping[pick(len(p.Mapping))].ID = ids[pick(len(ids))]
		}
	case 3:
		if len(p.Function) > 0 { // a function dropped from the table, still used
			i := pick(len(p.Function))
			p.Function = append(p.Function[:i:i], p.Function[i+1:]...)
		}
	case 4:
		if len(p.Mapping) > 0 {
			i := pick(len(p.Mapping))
			p.Mapping = append(p.Mapping[:i:i], p.Mapping[i+1:]...)
		}
	case 5:
		if len(p.Location) > 0 {
			p.Location = append(p.Location, p.Location[pick(len(p.Location))])
		}
	case 6:
		for _, l := range p.Location { // a look-alike function
			if len(l.Line) > 0 && l.Line[0].Function != nil {
				c := *l.Line[0].Function
				l.Line[0].Function = &c
				return
			}
		}
	case 7:
		for _, l := range p.Location {
			if l.Mapping != nil {
				c := *l.Mapping
				l.Mapping = &c
				return
			}
		}
	case 8:
		if len(p.Sample) > 0 {
			s := p.Sample[pick(len(p.Sample))]
			s.Value = append(s.Value, 1)
		}
	case 9:
		if len(p.Sample) > 0 && len(p.Sample[0].Location) > 0 {
			p.Sample[0].Location[0] = nil
		}
	case 10: // harmless: IDs renumbered densely from a higher start
		for i, l := range p.Location {
			l.ID = uint64(i) + 100
		}
	case 11: // harmless: a location dropped from the table, still sampled
		if len(p.Location) > 0 {
			i := pick(len(p.Location))
			p.Location = append(p.Location[:i:i], p.Location[i+1:]...)
		}
	}
}
