package gotest

import (
	"sort"
	"strings"

	"github.com/flameox/flameox/pkg/fault"
)

// Options are what a workload asks the gotest adapter to collect besides
// the test2json stream. Everything is off by default, so a benchmark
// capture times exactly what `go test -bench` times.
type Options struct {
	// Profiles are the pprof profiles to write, in profileOrder order:
	// any of cpu, mem, block, mutex (options.profiles = "cpu,mem").
	Profiles []string
	// Coverage instruments the code under test and writes cover.out
	// (options.coverage = "true").
	Coverage bool
}

// profileFlag is one profile go test can write.
type profileFlag struct {
	name, flag, file, kind, role, what string
}

// profileOrder lists the profiles in the order they are inserted and
// declared.
var profileOrder = []profileFlag{
	{"cpu", "cpuprofile", CPUProfile, KindSampleProfile, "cpu_profile", "CPU profiling (100 Hz SIGPROF sampling, typically a few percent)"},
	{"mem", "memprofile", MemProfile, KindMemoryProfile, "memory_profile", "heap profiling (a sample every 512 KiB allocated)"},
	{"block", "blockprofile", BlockProfile, KindSampleProfile, "block_profile", "block profiling (every blocking event recorded, -blockprofilerate=1)"},
	{"mutex", "mutexprofile", MutexProfile, KindSampleProfile, "mutex_profile", "mutex profiling (every contended lock recorded, -mutexprofilefraction=1)"},
}

var optionNames = []string{"coverage", "profiles"}

// ParseOptions reads profiles (a comma-separated subset of cpu, mem,
// block, mutex; "" for none) and coverage ("true"/"false"). Anything else
// is INVALID_CAPTURE_PLAN naming the option.
func ParseOptions(opts map[string]string) (Options, error) {
	var o Options
	keys := make([]string, 0, len(opts))
	for k := range opts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := opts[k]
		bad := func(want string) error {
			return fault.New(fault.InvalidCapturePlan, "gotest option %s=%q: want %s", k, v, want).With("option", k).
				Fix("Edit the workload's options in flameox.toml (docs/workloads.md lists the gotest options), then approve it again.")
		}
		switch k {
		case "coverage":
			if v != "true" && v != "false" {
				return o, bad(`"true" or "false"`)
			}
			o.Coverage = v == "true"
		case "profiles":
			asked := map[string]bool{}
			for _, p := range strings.Split(v, ",") {
				p = strings.TrimSpace(p)
				if p == "" {
					continue
				}
				known := false
				for _, f := range profileOrder {
					known = known || f.name == p
				}
				if !known || asked[p] {
					return o, bad(`a comma-separated list of distinct profiles among cpu, mem, block, mutex (e.g. "cpu,mem")`)
				}
				asked[p] = true
			}
			o.Profiles = nil
			for _, f := range profileOrder {
				if asked[f.name] {
					o.Profiles = append(o.Profiles, f.name)
				}
			}
		default:
			return o, fault.New(fault.InvalidCapturePlan, "gotest has no capture option %q", k).
				With("options", strings.Join(optionNames, ",")).
				Fix("Use options.profiles = \"cpu,mem\" (any of cpu, mem, block, mutex) or options.coverage = \"true\".")
		}
	}
	return o, nil
}

// profiles returns the profile flags asked for.
func (o Options) profiles() []profileFlag {
	var out []profileFlag
	for _, f := range profileOrder {
		for _, p := range o.Profiles {
			if p == f.name {
				out = append(out, f)
			}
		}
	}
	return out
}
