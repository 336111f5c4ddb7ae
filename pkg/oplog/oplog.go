package oplog

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/version"
)

// SchemaVersion of an operation log line.
const SchemaVersion = 1

// File is the log's path inside the workspace.
const File = "operations.jsonl"

// MaxLine bounds one line, newline included. Ids beyond it are dropped
// (the line says how many), so that a line is always one small write.
const MaxLine = 4096

// Entry is one line of the log: who (binary and version), what
// (operation), on what (ids), and how it ended. It never holds argv
// values, environment variables, paths outside the workspace or messages
// that could carry them; only ids and codes.
type Entry struct {
	SchemaVersion int       `json:"schema_version"`
	Time          time.Time `json:"time"`
	Binary        string    `json:"binary"`
	Version       string    `json:"version"`
	PID           int       `json:"pid"`
	Operation     string    `json:"operation"`
	// IDs names what the operation created or changed: commit_id,
	// generation_id, trash_id, quarantine_id... Values must be ids
	// (digests, UUIDs, workspace-relative names), never free text.
	IDs map[string][]string `json:"ids"`
	// Result is "ok" or "error"; ErrorCode the structured code of a failure.
	Result    string `json:"result"`
	ErrorCode string `json:"error_code,omitempty"`
	// Dropped counts ids left out to keep the line under MaxLine.
	Dropped int `json:"dropped_ids,omitempty"`
}

// idPattern is what an id may look like: digests, UUIDs, generation and
// trash ids, workspace-relative paths. Anything else is replaced, so a
// caller that passes free text by mistake cannot leak it into the log.
var idPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:/=+-]{0,199}$`) })

// binary is the name of the running program (its base name only: the path
// can hold a user name).
var binary = sync.OnceValue(func() string {
	if len(os.Args) == 0 {
		return "unknown"
	}
	b := filepath.Base(os.Args[0])
	if !idPattern().MatchString(b) {
		return "unknown"
	}
	return b
})

// Path returns the log file of the workspace root.
func Path(root string) string { return filepath.Join(root, File) }

// Record appends one line for operation with its ids and the outcome err
// (nil for success). Writing the log never fails the operation: a log
// that cannot be written is reported to the caller only through the
// returned error, which callers may ignore.
func Record(root, operation string, ids map[string][]string, err error) error {
	e := Entry{Operation: operation, IDs: ids, Result: "ok"}
	if err != nil {
		e.Result = "error"
		e.ErrorCode = string(fault.As(err).Code)
	}
	return Append(root, e)
}

// Append writes e as one line of the workspace's log with a single
// write(2) on a file opened O_APPEND, so concurrent writers never
// interleave within a line. Time, binary, version and pid are filled in
// when unset.
func Append(root string, e Entry) error {
	line, err := Encode(e)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(Path(root), os.O_WRONLY|os.O_APPEND|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		return fault.Wrap(fault.WorkspaceInvalid, err, "open the operation log").With("file", File)
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return fault.New(fault.WorkspaceInvalid, "the operation log is not a regular file").With("file", File)
	}
	if _, err := f.Write(line); err != nil {
		return fault.Wrap(fault.WorkspaceInvalid, err, "append to the operation log").With("file", File)
	}
	return nil
}

// Encode renders e as its line (newline included), at most MaxLine bytes.
func Encode(e Entry) ([]byte, error) {
	if e.SchemaVersion == 0 {
		e.SchemaVersion = SchemaVersion
	}
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	e.Time = e.Time.UTC().Truncate(time.Microsecond)
	if e.Binary == "" {
		e.Binary = binary()
	}
	if e.Version == "" {
		e.Version = version.Version()
	}
	if e.PID == 0 {
		e.PID = os.Getpid()
	}
	if !idPattern().MatchString(e.Operation) {
		return nil, fmt.Errorf("oplog: operation %q is not a name", e.Operation)
	}
	if e.Result == "" {
		e.Result = "ok"
	}
	if e.ErrorCode != "" && !idPattern().MatchString(e.ErrorCode) {
		e.ErrorCode = "UNKNOWN"
	}
	keys := make([]string, 0, len(e.IDs))
	for k := range e.IDs {
		if idPattern().MatchString(k) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	// Keep what fits by length first (a publication can name thousands of
	// runs: only those kept are checked), then trim the last few ids by
	// encoding.
	clean := map[string][]string{}
	budget := MaxLine - 512
	for _, k := range keys {
		budget -= len(k) + 6
		vals := make([]string, 0, min(len(e.IDs[k]), 64))
		for i, v := range e.IDs[k] {
			if !idPattern().MatchString(v) || strings.Contains(v, "..") {
				v = "(not an id)"
			}
			if budget-(len(v)+3) < 0 {
				e.Dropped += len(e.IDs[k]) - i
				break
			}
			budget -= len(v) + 3
			vals = append(vals, v)
		}
		clean[k] = vals
	}
	e.IDs = clean
	for {
		b, err := json.Marshal(e)
		if err != nil {
			return nil, err
		}
		if len(b)+1 <= MaxLine {
			return append(b, '\n'), nil
		}
		// Drop the last id of the longest list until the line fits.
		longest := ""
		for _, k := range keys {
			if len(e.IDs[k]) > len(e.IDs[longest]) {
				longest = k
			}
		}
		if longest == "" || len(e.IDs[longest]) == 0 {
			return nil, fmt.Errorf("oplog: a line without ids exceeds %d bytes", MaxLine)
		}
		e.IDs[longest] = e.IDs[longest][:len(e.IDs[longest])-1]
		e.Dropped++
	}
}

// Read parses the log of root, oldest first (for tests and tools).
func Read(root string) ([]Entry, error) {
	b, err := os.ReadFile(Path(root))
	if err != nil {
		return nil, err
	}
	var out []Entry
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if line == "" {
			continue
		}
		var e Entry
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}
