package workspace

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/flameox/flameox/pkg/config"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/lock"
)

// DirName is the workspace directory created at a project root.
const DirName = ".diagnostics"

// MetaVersion is the workspace.json format version.
const MetaVersion = 1

// Meta is workspace.json: static identity, written once by init.
type Meta struct {
	SchemaVersion  int       `json:"schema_version"`
	WorkspaceID    string    `json:"workspace_id"`
	CreatedAt      time.Time `json:"created_at"`
	ProjectRoot    string    `json:"project_root"` // relative to the workspace directory, normally ".."
	FlameoxVersion string    `json:"flameox_version"`
}

// Workspace is an opened, validated workspace.
type Workspace struct {
	// Root is the absolute path of the .diagnostics directory.
	Root string
	// ProjectRoot is the absolute project root.
	ProjectRoot string
	Meta        Meta
	Config      config.Config
}

// Path joins workspace-relative parts onto Root.
func (w *Workspace) Path(parts ...string) string {
	return filepath.Join(append([]string{w.Root}, parts...)...)
}

// Rel returns path relative to Root (slash-separated), for records.
func (w *Workspace) Rel(path string) string {
	r, err := filepath.Rel(w.Root, path)
	if err != nil {
		return path
	}
	return filepath.ToSlash(r)
}

// Locks returns a lock set for one operation on this workspace.
func (w *Workspace) Locks() *lock.Set {
	return lock.NewSet(w.Root, w.Config.LockTimeout())
}

// WithLock runs fn while holding the named lock exclusively.
func (w *Workspace) WithLock(ctx context.Context, ls *lock.Set, n lock.Name, fn func() error) error {
	release, err := ls.Lock(ctx, n, false)
	if err != nil {
		return err
	}
	defer release()
	return fn()
}

// Discover finds the workspace for a command. explicit (from --workspace)
// wins and must be a workspace; otherwise the search walks up from start.
func Discover(start, explicit string) (*Workspace, error) {
	if explicit != "" {
		abs, err := filepath.Abs(explicit)
		if err != nil {
			return nil, fault.Wrap(fault.InvalidArguments, err, "resolve --workspace")
		}
		if _, err := os.Stat(filepath.Join(abs, "workspace.json")); errors.Is(err, fs.ErrNotExist) {
			return nil, fault.New(fault.WorkspaceNotFound, "%s is not a flameox workspace (no workspace.json)", abs).
				Fix("Run `flameox init` in the project root, or pass the .diagnostics directory to --workspace.")
		}
		return Open(abs)
	}
	dir, err := filepath.Abs(start)
	if err != nil {
		return nil, fault.Wrap(fault.InvalidArguments, err, "resolve working directory")
	}
	for {
		cand := filepath.Join(dir, DirName)
		if st, err := os.Stat(cand); err == nil && st.IsDir() {
			return Open(cand)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return nil, fault.New(fault.WorkspaceNotFound, "no %s workspace found in %s or any parent directory", DirName, start).
				Fix("Run `flameox init` from the project root.")
		}
		dir = parent
	}
}

// Open validates and opens the workspace at root (a .diagnostics directory).
func Open(root string) (*Workspace, error) {
	root, err := filepath.Abs(root)
	if err != nil {
		return nil, fault.Wrap(fault.InvalidArguments, err, "resolve workspace path")
	}
	if err := refuseLinks(root); err != nil {
		return nil, err
	}
	meta, err := readMeta(root)
	if err != nil {
		return nil, err
	}
	cfg, err := config.Load(filepath.Join(root, "config.toml"))
	if err != nil {
		return nil, err
	}
	project := filepath.Clean(filepath.Join(root, meta.ProjectRoot))
	return &Workspace{Root: root, ProjectRoot: project, Meta: meta, Config: cfg}, nil
}

// linkFree are the workspace directories whose entries must not be
// symbolic links: the workspace root (every top-level directory and file)
// and the levels above the stored files. A link there would make flameox
// read or write outside the workspace, in a directory that a hostile
// checkout (a committed .diagnostics) can choose. The root itself may be
// a link: where the workspace lives is the user's choice.
var linkFree = []string{".", "artifacts", "artifacts/sha256", "corpus", "evidence"}

// refuseLinks reports the first symbolic link among the entries of the
// linkFree directories: one directory read each, no stat per entry.
func refuseLinks(root string) error {
	for _, rel := range linkFree {
		entries, err := os.ReadDir(filepath.Join(root, rel))
		if err != nil {
			continue // missing or unreadable: what needs it says so
		}
		for _, e := range entries {
			if e.Type()&fs.ModeSymlink == 0 {
				continue
			}
			name := filepath.ToSlash(filepath.Join(rel, e.Name()))
			return fault.New(fault.WorkspaceInvalid, "%s in the workspace is a symbolic link; flameox follows none inside .diagnostics", name).
				With("file", name).
				Fix("Replace the link with what it points to, or remove it, if you made it; a .diagnostics that came with a checkout is not to be trusted: delete it and run `flameox init`.")
		}
	}
	return nil
}

func readMeta(root string) (Meta, error) {
	path := filepath.Join(root, "workspace.json")
	b, err := os.ReadFile(path)
	if err != nil {
		return Meta{}, fault.Wrap(fault.WorkspaceInvalid, err, "read workspace.json").With("file", "workspace.json")
	}
	var m Meta
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return Meta{}, fault.Wrap(fault.WorkspaceInvalid, err, "workspace.json is not valid").With("file", "workspace.json").
			Fix("workspace.json is written once by `flameox init`; restore it from a backup.")
	}
	switch {
	case m.SchemaVersion != MetaVersion:
		return Meta{}, fault.New(fault.WorkspaceInvalid, "workspace.json has schema_version %d; this flameox reads %d", m.SchemaVersion, MetaVersion).With("file", "workspace.json")
	case m.WorkspaceID == "" || m.ProjectRoot == "" || m.CreatedAt.IsZero():
		return Meta{}, fault.New(fault.WorkspaceInvalid, "workspace.json lacks workspace_id, created_at or project_root").With("file", "workspace.json")
	case filepath.IsAbs(m.ProjectRoot):
		return Meta{}, fault.New(fault.WorkspaceInvalid, "workspace.json project_root must be relative to the workspace").With("file", "workspace.json")
	}
	return m, nil
}
