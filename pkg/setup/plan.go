package setup

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/flameox/flameox/pkg/fault"
	"github.com/rogpeppe/go-internal/diff"
)

// maxConfigBytes bounds what setup reads of a host's file.
const maxConfigBytes = 16 << 20

// Actions of a Change.
const (
	ActionCreate         = "create"          // the file does not exist yet
	ActionUpdate         = "update"          // flameox's entry is added or changed
	ActionAlreadyCurrent = "already_current" // nothing to do
	ActionRemove         = "remove"          // flameox's entry is taken out
	ActionNotConfigured  = "not_configured"  // nothing to remove
)

// Change is what setup does to one host's file.
type Change struct {
	Host   string `json:"host"`
	Title  string `json:"title"`
	Scope  Scope  `json:"scope"`
	File   string `json:"file"`
	Format Format `json:"format"`
	Action string `json:"action"`
	// Diff is the unified diff of the file, empty when nothing changes.
	Diff string `json:"diff,omitempty"`
	Note string `json:"note,omitempty"`

	existed  bool
	mode     fs.FileMode
	original []byte
	updated  []byte
}

// Changes reports whether c writes anything.
func (c *Change) Changes() bool {
	return c.Action == ActionCreate || c.Action == ActionUpdate || c.Action == ActionRemove
}

// readConfig reads a host's file (following a symlink to the file it names,
// so the link stays a link), bounded.
func readConfig(path string) (real string, data []byte, existed bool, mode fs.FileMode, err error) {
	real = path
	if r, err := filepath.EvalSymlinks(path); err == nil {
		real = r
	}
	f, err := os.Open(real)
	if errors.Is(err, fs.ErrNotExist) {
		return real, nil, false, 0, nil
	}
	if err != nil {
		return real, nil, false, 0, fault.Wrap(fault.ExecutionRefused, err, "read %s", path).With("file", path)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return real, nil, false, 0, fault.Wrap(fault.ExecutionRefused, err, "read %s", path).With("file", path)
	}
	if !st.Mode().IsRegular() {
		return real, nil, false, 0, fault.New(fault.ExecutionRefused, "%s is not a regular file", path).With("file", path)
	}
	data, err = io.ReadAll(io.LimitReader(f, maxConfigBytes+1))
	if err != nil {
		return real, nil, false, 0, fault.Wrap(fault.ExecutionRefused, err, "read %s", path).With("file", path)
	}
	if len(data) > maxConfigBytes {
		return real, nil, false, 0, fault.New(fault.ArtifactTooLarge, "%s is larger than %d bytes; setup does not edit it", path, maxConfigBytes).With("file", path)
	}
	return real, data, true, st.Mode().Perm(), nil
}

// edit computes the new content of src for host h: flameox's entry set
// (remove false) or taken out (remove true).
func (h *Host) edit(o Options, s Scope, src []byte, remove bool) ([]byte, bool, error) {
	cont := h.container(src)
	path := append(append([]string(nil), cont...), ServerName)
	if h.Format == TOML {
		if remove {
			return tomlRemove(src, path)
		}
		return tomlSet(src, path, h.entry(o.Executable, Args(o, s), src))
	}
	jsonc := h.Format == JSONC
	if remove {
		return jsonRemove(src, jsonc, path)
	}
	return jsonSet(src, jsonc, path, h.entry(o.Executable, Args(o, s), src))
}

// Plan computes the change for each host, writing nothing. A malformed
// file fails the whole plan (WORKSPACE_INVALID, kind config, with its line
// and column): setup never rewrites what it cannot read.
func Plan(o Options, hosts []*Host, s Scope, remove bool) ([]*Change, error) {
	var out []*Change
	for _, h := range hosts {
		if !h.supports(s) {
			return nil, fault.New(fault.InvalidArguments, "%s has no %s scope (it supports %v)", h.Title, s, h.Scopes).
				Fix("Use --scope " + string(h.Scopes[0]) + ".")
		}
		file := h.File(o, s)
		real, src, existed, mode, err := readConfig(file)
		if err != nil {
			return nil, err
		}
		c := &Change{Host: h.Name, Title: h.Title, Scope: s, File: file, Format: h.Format, Note: h.Note,
			existed: existed, mode: mode, original: src}
		if real != file {
			c.File = real
		}
		updated, changed, err := h.edit(o, s, src, remove)
		if err != nil {
			var se *SyntaxError
			if errors.As(err, &se) {
				return nil, malformed(file, err)
			}
			return nil, err
		}
		if changed {
			if err := h.check(o, s, updated, remove); err != nil {
				return nil, fault.Wrap(fault.InternalError, err, "setup's edit of %s does not read back", file).With("file", file)
			}
		}
		switch {
		case remove && changed:
			c.Action = ActionRemove
		case remove:
			c.Action = ActionNotConfigured
		case changed && !existed:
			c.Action = ActionCreate
		case changed:
			c.Action = ActionUpdate
		default:
			c.Action = ActionAlreadyCurrent
		}
		if changed {
			c.updated = updated
			c.Diff = unified(c.File, existed, src, updated)
		}
		out = append(out, c)
	}
	return out, nil
}

// check re-reads an edited file as the host would and makes sure it holds
// exactly the entry (or none), so a bug in a splice can never be written.
func (h *Host) check(o Options, s Scope, out []byte, remove bool) error {
	path := append(append([]string(nil), h.container(out)...), ServerName)
	var have any
	if h.Format == TOML {
		doc, err := decodeTOML(out)
		if err != nil {
			return err
		}
		have, _ = tomlAt(doc, path)
		if remove {
			if have != nil {
				return errors.New("the entry is still there")
			}
			return nil
		}
		m, _ := have.(map[string]any)
		for _, f := range h.entry(o.Executable, Args(o, s), out) {
			if !tomlEqual(m[f.key], f.val) {
				return errors.New("field " + f.key + " does not hold what was written")
			}
		}
		return nil
	}
	v, _, err := jsonGet(out, h.Format == JSONC, path)
	if err != nil {
		return err
	}
	if remove {
		if v != nil {
			return errors.New("the entry is still there")
		}
		return nil
	}
	m, _ := v.(map[string]any)
	for _, f := range h.entry(o.Executable, Args(o, s), out) {
		if !equalJSON(m[f.key], f.val) {
			return errors.New("field " + f.key + " does not hold what was written")
		}
	}
	return nil
}

// unified is the diff a person reviews; a new file is diffed against
// /dev/null.
func unified(file string, existed bool, old, new []byte) string {
	from := file
	if !existed {
		from = "/dev/null"
	}
	d := diff.Diff(from, old, file, new)
	// Drop the "diff A B" line: what remains is what patch(1) and git apply read.
	if i := bytes.IndexByte(d, '\n'); i >= 0 && bytes.HasPrefix(d, []byte("diff ")) {
		d = d[i+1:]
	}
	return string(d)
}

// Selected returns the hosts named, in Hosts order; all means every host
// detected for scope.
func Selected(o Options, s Scope, names []string, all bool) ([]*Host, error) {
	want := map[string]bool{}
	for _, n := range names {
		if _, err := HostByName(n); err != nil {
			return nil, err
		}
		want[n] = true
	}
	var out []*Host
	for _, h := range Hosts() {
		if want[h.Name] || all && h.supports(s) && h.Detected(o, s) {
			out = append(out, h)
		}
	}
	return out, nil
}

// Detection is one host as setup finds it.
type Detection struct {
	Host       string `json:"host"`
	Title      string `json:"title"`
	File       string `json:"file"`
	Detected   bool   `json:"detected"`
	Configured bool   `json:"configured"` // the file holds a flameox entry
}

// Detect lists every host that supports scope.
func Detect(o Options, s Scope) []Detection {
	var out []Detection
	for _, h := range Hosts() {
		if !h.supports(s) {
			continue
		}
		d := Detection{Host: h.Name, Title: h.Title, File: h.File(o, s), Detected: h.Detected(o, s)}
		if _, e, err := h.Entry(o, s); err == nil && e != nil {
			d.Configured = true
		}
		out = append(out, d)
	}
	return out
}

// Entry returns the host's flameox entry for scope as decoded values (nil
// when there is none), and the file it read.
func (h *Host) Entry(o Options, s Scope) (string, map[string]any, error) {
	file := h.File(o, s)
	_, src, existed, _, err := readConfig(file)
	if err != nil || !existed {
		return file, nil, err
	}
	path := append(append([]string(nil), h.container(src)...), ServerName)
	var v any
	if h.Format == TOML {
		doc, err := decodeTOML(src)
		if err != nil {
			return file, nil, malformed(file, err)
		}
		v, _ = tomlAt(doc, path)
	} else {
		v, _, err = jsonGet(src, h.Format == JSONC, path)
		if err != nil {
			return file, nil, malformed(file, err)
		}
	}
	m, _ := v.(map[string]any)
	return file, m, nil
}
