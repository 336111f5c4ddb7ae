// Command bigprofile writes a gzipped pprof CPU profile with N distinct
// locations (each its own function), for the 10^6-location rows of
// docs/performance.md (scripts/bench/bigprofile.sh):
//
//   - flat: N samples, each a stack of one location (every function is a
//     leaf, seen once);
//   - deep: N/DEPTH samples, each a stack of DEPTH distinct locations (every
//     location appears in exactly one stack; a million-frame profile whose
//     stacks are deep).
//
// Values are deterministic (a fixed seed), so the same N and shape give the
// same bytes.
package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"

	"github.com/google/pprof/profile"
)

func main() {
	n := flag.Int("locations", 1_000_000, "distinct locations (and functions)")
	shape := flag.String("shape", "flat", "flat or deep")
	depth := flag.Int("depth", 1000, "stack depth of the deep shape")
	out := flag.String("o", "", "output file (.pb.gz)")
	flag.Parse()
	if *out == "" || (*shape != "flat" && *shape != "deep") || *depth < 1 {
		fmt.Fprintln(os.Stderr, "usage: bigprofile -shape flat|deep [-locations N] [-depth D] -o FILE")
		os.Exit(2)
	}
	m := &profile.Mapping{ID: 1, Start: 0x400000, Limit: 0x400000 + uint64(*n)*16 + 16, File: "/bin/big", HasFunctions: true}
	p := &profile.Profile{
		Mapping:    []*profile.Mapping{m},
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		PeriodType: &profile.ValueType{Type: "cpu", Unit: "nanoseconds"}, Period: 10_000_000,
		DurationNanos: 10_000_000_000,
	}
	locs := make([]*profile.Location, *n)
	for i := range locs {
		name := fmt.Sprintf("big/pkg%03d.Func%07d", i%1000, i)
		fn := &profile.Function{ID: uint64(i + 1), Name: name, SystemName: name, Filename: fmt.Sprintf("big/pkg%03d/f.go", i%1000)}
		p.Function = append(p.Function, fn)
		locs[i] = &profile.Location{ID: uint64(i + 1), Mapping: m, Address: m.Start + uint64(i)*16, Line: []profile.Line{{Function: fn, Line: int64(10 + i%500)}}}
	}
	p.Location = locs
	rng := rand.New(rand.NewPCG(24, 6))
	sample := func(stack []*profile.Location) {
		c := 1 + rng.Int64N(20)
		p.Sample = append(p.Sample, &profile.Sample{Location: stack, Value: []int64{c, c * 10_000_000}})
	}
	if *shape == "flat" {
		for i := range locs {
			sample(locs[i : i+1])
		}
	} else {
		for i := 0; i < len(locs); i += *depth {
			sample(locs[i:min(i+*depth, len(locs))]) // leaf first, as pprof stores stacks
		}
	}
	f, err := os.Create(*out)
	if err == nil {
		err = p.Write(f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bigprofile:", err)
		os.Exit(1)
	}
}
