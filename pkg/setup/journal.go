package setup

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/flameox/flameox/pkg/durable"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/lock"
)

// lockTimeout bounds the wait for another setup in progress.
const lockTimeout = 10 * time.Second

// keepJournals is how many runs back --rollback can go; older journals are
// deleted when a new one is written.
const keepJournals = 50

// Journal records what one setup run changed, written before the first
// file is touched, so that Rollback (or a person) can put every file back
// byte for byte, and remove the files and directories setup created.
type Journal struct {
	SchemaVersion int           `json:"schema_version"`
	Created       time.Time     `json:"created"`
	Operation     string        `json:"operation"` // configure or remove
	Files         []JournalFile `json:"files"`
}

// JournalFile is one file's before and after.
type JournalFile struct {
	Host           string      `json:"host"`
	Path           string      `json:"path"`
	Existed        bool        `json:"existed"`
	Mode           fs.FileMode `json:"mode"`
	Original       []byte      `json:"original"` // base64 in the JSON
	OriginalSHA256 string      `json:"original_sha256"`
	UpdatedSHA256  string      `json:"updated_sha256"`
	CreatedDirs    []string    `json:"created_dirs,omitempty"` // deepest last
}

func sum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

func (o Options) lock(ctx context.Context) (func(), error) {
	if err := os.MkdirAll(o.StateDir, 0o700); err != nil {
		return nil, fault.Wrap(fault.ExecutionRefused, err, "create setup's state directory %s", o.StateDir)
	}
	return lock.NewSet(o.StateDir, lockTimeout).Lock(ctx, lock.Write, false)
}

// missingDirs returns the directories above file that do not exist yet,
// outermost first.
func missingDirs(file string) []string {
	var out []string
	for d := filepath.Dir(file); ; d = filepath.Dir(d) {
		if exists(d) || d == filepath.Dir(d) {
			break
		}
		out = append([]string{d}, out...)
	}
	return out
}

// Apply writes the changes atomically, after recording them in a new
// journal. Each file must still hold what was previewed
// (REVISION_CONFLICT otherwise, nothing written); when a write fails, the
// files already written are put back. It returns the journal's path.
func Apply(ctx context.Context, o Options, changes []*Change, operation string) (string, error) {
	var todo []*Change
	for _, c := range changes {
		if c.Changes() {
			todo = append(todo, c)
		}
	}
	if len(todo) == 0 {
		return "", nil
	}
	release, err := o.lock(ctx)
	if err != nil {
		return "", err
	}
	defer release()
	j := Journal{SchemaVersion: 1, Created: time.Now().UTC(), Operation: operation}
	for _, c := range todo {
		_, now, existed, _, err := readConfig(c.File)
		if err != nil {
			return "", err
		}
		if existed != c.existed || !bytes.Equal(now, c.original) {
			return "", fault.New(fault.RevisionConflict, "%s changed since setup read it; nothing was written", c.File).
				With("file", c.File).Fix("Run setup again to see the current diff.")
		}
		mode := c.mode
		if !c.existed {
			mode = 0o644
			if c.Scope == User {
				mode = 0o600
			}
		}
		j.Files = append(j.Files, JournalFile{Host: c.Host, Path: c.File, Existed: c.existed, Mode: mode,
			Original: c.original, OriginalSHA256: sum(c.original), UpdatedSHA256: sum(c.updated),
			CreatedDirs: missingDirs(c.File)})
	}
	jpath := filepath.Join(o.StateDir, "journal-"+j.Created.Format("20060102T150405.000000000Z")+"-"+durable.RandomHex(4)+".json")
	if err := durable.WriteJSON(jpath, j, 0o600); err != nil {
		return "", fault.Wrap(fault.ExecutionRefused, err, "write setup's journal")
	}
	if js, err := Journals(o); err == nil && len(js) > keepJournals {
		for _, old := range js[:len(js)-keepJournals] {
			os.Remove(old)
		}
	}
	for i, c := range todo {
		jf := j.Files[i]
		err := os.MkdirAll(filepath.Dir(c.File), 0o755)
		if err == nil {
			err = durable.WriteFile(c.File, c.updated, jf.Mode)
		}
		if err != nil {
			// Put back what this run wrote, then forget the journal.
			restore(j.Files[:i])
			os.Remove(jpath)
			return "", fault.Wrap(fault.ExecutionRefused, err, "write %s (the files written before it were put back)", c.File).With("file", c.File)
		}
	}
	return jpath, nil
}

// restore puts files back as the journal recorded them.
func restore(files []JournalFile) error {
	var errs []error
	for i := len(files) - 1; i >= 0; i-- {
		f := files[i]
		if f.Existed {
			errs = append(errs, durable.WriteFile(f.Path, f.Original, f.Mode))
			continue
		}
		if err := os.Remove(f.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
		for k := len(f.CreatedDirs) - 1; k >= 0; k-- {
			os.Remove(f.CreatedDirs[k]) // only when empty
		}
	}
	return errors.Join(errs...)
}

// Journals lists the journals in StateDir, newest last.
func Journals(o Options) ([]string, error) {
	m, err := filepath.Glob(filepath.Join(o.StateDir, "journal-*.json"))
	sort.Strings(m)
	return m, err
}

// RollbackResult says what Rollback restored.
type RollbackResult struct {
	Journal string       `json:"journal"`
	Created time.Time    `json:"created"`
	Files   []RolledBack `json:"files"`
	Left    int          `json:"journals_left"`
	journal *Journal
}

// RolledBack is one file Rollback handled.
type RolledBack struct {
	Host   string `json:"host"`
	Path   string `json:"path"`
	Action string `json:"action"` // restored, removed, already_original
}

// Rollback undoes the newest setup run: each file goes back to its bytes
// before that run (files the run created are removed). A file changed since
// (by a person or the host) is a REVISION_CONFLICT and nothing is touched.
// The journal is deleted once the files are back, so a second Rollback
// undoes the run before.
func Rollback(ctx context.Context, o Options) (*RollbackResult, error) {
	release, err := o.lock(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	js, err := Journals(o)
	if err != nil {
		return nil, err
	}
	if len(js) == 0 {
		return nil, fault.New(fault.NotFound, "no setup run to roll back (no journal in %s)", o.StateDir).With("state_dir", o.StateDir)
	}
	jpath := js[len(js)-1]
	data, err := os.ReadFile(jpath)
	if err != nil {
		return nil, fault.Wrap(fault.ExecutionRefused, err, "read %s", jpath)
	}
	var j Journal
	if err := json.Unmarshal(data, &j); err != nil || j.SchemaVersion != 1 {
		return nil, fault.New(fault.ArtifactIntegrityFailed, "%s is not a setup journal", jpath).With("journal", jpath)
	}
	res := &RollbackResult{Journal: jpath, Created: j.Created, Left: len(js) - 1, journal: &j}
	var todo []JournalFile
	for _, f := range j.Files {
		if !strings.HasPrefix(f.Path, string(filepath.Separator)) || sum(f.Original) != f.OriginalSHA256 {
			return nil, fault.New(fault.ArtifactIntegrityFailed, "%s is damaged (entry for %s)", jpath, f.Path).With("journal", jpath)
		}
		_, now, existed, _, err := readConfig(f.Path)
		if err != nil {
			return nil, err
		}
		switch {
		case existed && sum(now) == f.UpdatedSHA256:
			todo = append(todo, f)
			act := "restored"
			if !f.Existed {
				act = "removed"
			}
			res.Files = append(res.Files, RolledBack{Host: f.Host, Path: f.Path, Action: act})
		case existed == f.Existed && bytes.Equal(now, f.Original):
			res.Files = append(res.Files, RolledBack{Host: f.Host, Path: f.Path, Action: "already_original"})
		default:
			return nil, fault.New(fault.RevisionConflict, "%s changed after setup wrote it; rollback changes nothing", f.Path).
				With("file", f.Path).With("journal", jpath).
				Fix("The content before setup is in the journal (field original, base64); restore it by hand if you want it.")
		}
	}
	if err := restore(todo); err != nil {
		return nil, fault.Wrap(fault.ExecutionRefused, err, "restore the files of %s", jpath)
	}
	if err := os.Remove(jpath); err != nil {
		return nil, fault.Wrap(fault.ExecutionRefused, err, "remove %s", jpath)
	}
	return res, nil
}
