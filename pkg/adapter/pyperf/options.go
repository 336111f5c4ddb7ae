package pyperf

import (
	"sort"
	"strconv"
	"strings"

	"github.com/flameox/flameox/pkg/fault"
)

// Options are the pyperf choices of one capture, read from the workload's
// adapter options. Zero counts leave the choice to pyperf.
type Options struct {
	Processes   int     // --processes: worker processes, one run each (pyperf: 20)
	Values      int     // --values: values per worker (pyperf: 3)
	Warmups     int     // --warmups: warm-ups per worker (pyperf: 1); -1 unset
	Loops       int     // --loops: loops per value (0: pyperf calibrates)
	MinTime     float64 // --min-time: seconds a value must last when calibrating (pyperf: 0.1)
	Name        string  // --name: the benchmark name (pyperf: "command")
	TrackMemory bool    // --track-memory: values are the peak memory, not times
}

var optionNames = []string{"loops", "min_time", "name", "processes", "track_memory", "values", "warmups"}

// ParseOptions reads processes, values (1–10000), warmups (0–10000),
// loops (0–2^32; 0 calibrates), min_time (seconds, > 0), name and
// track_memory ("true"/"false"). Anything else is INVALID_CAPTURE_PLAN
// naming the option.
func ParseOptions(opts map[string]string) (Options, error) {
	o := Options{Warmups: -1}
	keys := make([]string, 0, len(opts))
	for k := range opts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := opts[k]
		bad := func(want string) error {
			return fault.New(fault.InvalidCapturePlan, "pyperf option %s=%q: want %s", k, v, want).With("option", k)
		}
		count := func(lo, hi int) (int, error) {
			n, err := strconv.Atoi(v)
			if err != nil || n < lo || n > hi {
				return 0, bad("an integer from " + strconv.Itoa(lo) + " to " + strconv.Itoa(hi))
			}
			return n, nil
		}
		var err error
		switch k {
		case "processes":
			o.Processes, err = count(1, 10000)
		case "values":
			o.Values, err = count(1, 10000)
		case "warmups":
			o.Warmups, err = count(0, 10000)
		case "loops":
			o.Loops, err = count(0, 1<<32)
		case "min_time":
			f, perr := strconv.ParseFloat(v, 64)
			if perr != nil || !(f > 0 && f <= 3600) {
				return o, bad("seconds, more than 0 and at most 3600")
			}
			o.MinTime = f
		case "name":
			if strings.TrimSpace(v) == "" || strings.ContainsAny(v, "\r\n") {
				return o, bad("a non-empty name on one line")
			}
			o.Name = strings.TrimSpace(v)
		case "track_memory":
			if v != "true" && v != "false" {
				return o, bad(`"true" or "false"`)
			}
			o.TrackMemory = v == "true"
		default:
			return o, fault.New(fault.InvalidCapturePlan, "pyperf has no capture option %q", k).
				With("options", strings.Join(optionNames, ","))
		}
		if err != nil {
			return o, err
		}
	}
	return o, nil
}

// Flags are the `pyperf command` flags after -o.
func (o Options) Flags() []string {
	var f []string
	add := func(flag string, n int, set bool) {
		if set {
			f = append(f, flag+"="+strconv.Itoa(n))
		}
	}
	add("--processes", o.Processes, o.Processes > 0)
	add("--values", o.Values, o.Values > 0)
	add("--warmups", o.Warmups, o.Warmups >= 0)
	add("--loops", o.Loops, o.Loops > 0)
	if o.MinTime > 0 {
		f = append(f, "--min-time="+strconv.FormatFloat(o.MinTime, 'g', -1, 64))
	}
	if o.Name != "" {
		f = append(f, "--name="+o.Name)
	}
	if o.TrackMemory {
		f = append(f, "--track-memory")
	}
	return f
}

// Limitations state every choice, given or left to pyperf.
func (o Options) Limitations() []string {
	or := func(set bool, given, def string) string {
		if set {
			return given
		}
		return def
	}
	lim := []string{
		or(o.Processes > 0, plural(o.Processes, "worker process")+" (processes), one run each",
			"pyperf's default of 20 worker processes, one run each (set options.processes)") +
			", plus the calibration runs pyperf adds when it calibrates loops or warm-ups",
		or(o.Values > 0, plural(o.Values, "value")+" per worker (values)", "pyperf's default of 3 values per worker (set options.values)"),
		or(o.Warmups >= 0, plural(o.Warmups, "warm-up")+" per worker (warmups)", "pyperf's default of 1 warm-up per worker (set options.warmups)"),
		or(o.Loops > 0, plural(o.Loops, "loop")+" per value (loops)",
			"loops are calibrated by pyperf (a calibration run doubles them until a value lasts min_time); set options.loops to fix them"),
		"pyperf command times the whole command: each loop starts the workload's process anew, so start-up is part of every value",
	}
	if o.TrackMemory {
		lim = append(lim, "track_memory: values are the peak memory (RSS) of the workload, in bytes, not times")
	}
	return lim
}

// plural is "1 value", "2 values", "3 worker processes".
func plural(n int, noun string) string {
	s := strconv.Itoa(n) + " " + noun
	switch {
	case n == 1:
		return s
	case strings.HasSuffix(noun, "s"):
		return s + "es"
	}
	return s + "s"
}
