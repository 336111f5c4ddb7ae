package pyspy

import (
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/flameox/flameox/pkg/fault"
)

// Options are the sampling choices of one capture, read from the
// workload's adapter options.
type Options struct {
	Native       bool   // --native: also unwind C/C++/Cython/Rust frames
	GIL          bool   // --gil: keep only samples of the thread holding the GIL
	Idle         bool   // --idle: also sample threads that are waiting
	Subprocesses bool   // --subprocesses: also sample child Python processes
	Format       string // "speedscope" (default) or "raw" (collapsed stacks)
	Rate         int    // samples per second
}

var optionNames = []string{"format", "gil", "idle", "native", "rate", "subprocesses"}

// ParseOptions reads native, gil, idle, subprocesses ("true"/"false"),
// format ("speedscope"/"raw") and rate (1–10000 Hz). Anything else is
// INVALID_CAPTURE_PLAN naming the option.
func ParseOptions(opts map[string]string) (Options, error) {
	o := Options{Format: "speedscope", Rate: DefaultRate}
	keys := make([]string, 0, len(opts))
	for k := range opts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := opts[k]
		bad := func(want string) error {
			return fault.New(fault.InvalidCapturePlan, "py-spy option %s=%q: want %s", k, v, want).With("option", k)
		}
		switch k {
		case "native", "gil", "idle", "subprocesses":
			if v != "true" && v != "false" {
				return o, bad(`"true" or "false"`)
			}
			on := v == "true"
			switch k {
			case "native":
				o.Native = on
			case "gil":
				o.GIL = on
			case "idle":
				o.Idle = on
			default:
				o.Subprocesses = on
			}
		case "format":
			if v != "speedscope" && v != "raw" {
				return o, bad(`"speedscope" or "raw"`)
			}
			o.Format = v
		case "rate":
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > 10000 {
				return o, bad("a rate in Hz between 1 and 10000")
			}
			o.Rate = n
		default:
			return o, fault.New(fault.InvalidCapturePlan, "py-spy has no capture option %q", k).
				With("options", strings.Join(optionNames, ","))
		}
	}
	return o, nil
}

// Flags are the py-spy record flags after --format and --output.
func (o Options) Flags() []string {
	f := []string{"--rate", strconv.Itoa(o.Rate)}
	for _, x := range []struct {
		on   bool
		flag string
	}{{o.Native, "--native"}, {o.GIL, "--gil"}, {o.Idle, "--idle"}, {o.Subprocesses, "--subprocesses"}} {
		if x.on {
			f = append(f, x.flag)
		}
	}
	return f
}

// Limitations state every choice, enabled or not, and what it means.
func (o Options) Limitations() []string {
	pick := func(on bool, yes, no string) string {
		if on {
			return yes
		}
		return no
	}
	return []string{
		"py-spy samples " + strconv.Itoa(o.Rate) + " times a second (rate; py-spy's default is 100); when a sample takes longer than the interval the effective rate is lower",
		pick(o.Native, "native frames (C, C++, Cython, Rust extensions) are unwound too (--native); they need symbols in the extension modules",
			"native frames (C extensions) are not collected: time in them is charged to the calling Python line (pass native=true)"),
		pick(o.GIL, "only samples of the thread holding the GIL are kept (--gil): time waiting for the GIL or in GIL-releasing C code is missing",
			"samples are kept whether or not the thread held the GIL (pass gil=true to keep only GIL holders)"),
		pick(o.Idle, "idle (waiting, sleeping, blocked) threads are sampled too (--idle): a wall-clock view, not CPU",
			"idle threads are not sampled (pass idle=true): time spent sleeping or blocked on I/O or locks is missing"),
		pick(o.Subprocesses, "child processes are sampled too (--subprocesses); each appears as its own profile",
			"child processes are not sampled (pass subprocesses=true)"),
		pick(o.Format == "raw", "raw format: collapsed stacks with counts per function and line; no threads, no sample order; samples without any Python frame are written as an empty stack (a line \" N\")",
			"speedscope format: one sampled profile per thread, frames with file and line; line numbers are the current line, not the function's first"),
	}
}

// IsPython reports whether argv runs a Python interpreter (argv[0]'s base
// name starts with "python", e.g. python3.12, or a pyenv/venv shim of that
// name) or a .py script directly (through its shebang).
func IsPython(argv []string) bool {
	if len(argv) == 0 {
		return false
	}
	base := filepath.Base(argv[0])
	return strings.HasPrefix(base, "python") || strings.HasSuffix(base, ".py")
}
