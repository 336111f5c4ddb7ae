// Package observe records facts a profiler cannot see, for flameox: which
// configuration path ran, which safeguard was off, and the time spent in
// named phases. It is its own module with no dependencies, so a workload
// needs nothing else of flameox:
//
//	go get github.com/flameox/flameox/contrib/go/observe
//
//	defer observe.Phase("train")()
//	observe.Record("policy", "clipping_enabled", false, "max_norm", 1.0)
//
// Under `flameox capture run` the capture sets FLAMEOX_OBSERVATIONS to a
// file in its output directory; each call appends one JSON line there,
// and the capture registers the file as semantic observations, which
// `flameox analyze execution` reads. With the variable unset every call
// does nothing, so the calls can stay in the code.
//
// Record(name, k1, v1, k2, v2, ...) records name.k1 = v1 and so on (a bare
// Record(name) records name = true); values are encoded with
// encoding/json, and one that cannot be is recorded as its %v text.
// Phases nest by call order across the program (not per goroutine): a
// Record between Phase(p) and its end function carries the phase path.
package observe

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"
)

// EnvVar names the file observations are appended to.
const EnvVar = "FLAMEOX_OBSERVATIONS"

// Format is the file format's number, in the header line.
const Format = 1

var (
	mu     sync.Mutex
	out    *os.File
	path   string
	phases []string
	start  = time.Now()
)

func file() *os.File {
	p := os.Getenv(EnvVar)
	if p == "" {
		return nil
	}
	if out != nil && path == p {
		return out
	}
	f, err := os.OpenFile(p, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return nil
	}
	out, path = f, p
	write(map[string]any{"flameox_observations": Format, "language": "go", "pid": os.Getpid()})
	return out
}

// write appends one line; mu is held.
func write(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		return
	}
	out.Write(append(b, '\n'))
}

func now() int64 { return int64(time.Since(start)) }

// Record records name.key = value for each key and value pair, inside
// the current phase.
func Record(name string, kv ...any) {
	if os.Getenv(EnvVar) == "" {
		return
	}
	values := map[string]any{}
	if len(kv) == 0 {
		values[""] = true
	}
	for i := 0; i < len(kv); i += 2 {
		k := fmt.Sprint(kv[i])
		var v any = true
		if i+1 < len(kv) {
			v = kv[i+1]
		}
		if _, err := json.Marshal(v); err != nil {
			v = fmt.Sprintf("%v", v)
		}
		values[k] = v
	}
	mu.Lock()
	defer mu.Unlock()
	if file() == nil {
		return
	}
	write(map[string]any{"t": "observe", "name": name, "values": values, "phase": strings.Join(phases, "/"), "ts_ns": now()})
}

// Phase starts phase name and returns the function that ends it:
//
//	defer observe.Phase("load")()
func Phase(name string) func() {
	mu.Lock()
	phases = append(phases, name)
	p := strings.Join(phases, "/")
	mu.Unlock()
	t0 := now()
	return func() {
		d := now() - t0
		mu.Lock()
		defer mu.Unlock()
		if n := len(phases); n > 0 && phases[n-1] == name {
			phases = phases[:n-1]
		}
		if os.Getenv(EnvVar) == "" || file() == nil {
			return
		}
		write(map[string]any{"t": "phase", "name": p, "start_ns": t0, "duration_ns": d})
	}
}
