package workspace

import (
	"bufio"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/flameox/flameox/pkg/config"
	"github.com/flameox/flameox/pkg/corpus"
	"github.com/flameox/flameox/pkg/durable"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/lock"
	"github.com/flameox/flameox/pkg/version"
	"github.com/google/uuid"
)

// Dirs are the directories init creates inside the workspace.
var Dirs = []string{
	"artifacts/sha256", "corpus/commits", "generations", "evidence",
	"runs", "records", "staging", "quarantine", "trash",
}

// InitResult says what init did.
type InitResult struct {
	Workspace *Workspace
	// Created lists the workspace-relative paths init created; empty when
	// the workspace already existed complete.
	Created []string
}

// FirstCommit publishes the first, empty commit of a new workspace's
// corpus and points corpus/HEAD at it, returning the workspace-relative
// paths it created. publish.FirstCommit is the implementation: pkg/publish
// is the only package that writes corpus/HEAD, and workspace, below it,
// cannot import it, so Init's callers pass it in.
type FirstCommit func(root string, now time.Time) (created []string, err error)

// Init creates (or completes) the workspace for projectRoot. It is
// idempotent: existing files are validated, never rewritten. When
// corpus/HEAD does not exist yet it calls first, under the write lock.
func Init(ctx context.Context, projectRoot string, now time.Time, first FirstCommit) (*InitResult, error) {
	if first == nil {
		return nil, fault.New(fault.InternalError, "workspace.Init needs a FirstCommit (publish.FirstCommit)")
	}
	project, err := filepath.Abs(projectRoot)
	if err != nil {
		return nil, fault.Wrap(fault.InvalidArguments, err, "resolve project root")
	}
	if st, err := os.Stat(project); err != nil || !st.IsDir() {
		return nil, fault.New(fault.InvalidArguments, "project root %s is not a directory", project)
	}
	root := filepath.Join(project, DirName)
	res := &InitResult{}
	mkdir := func(rel string) error {
		p := filepath.Join(root, rel)
		if _, err := os.Stat(p); err == nil {
			return nil
		}
		if err := os.MkdirAll(p, 0o700); err != nil {
			return fault.Wrap(fault.WorkspaceInvalid, err, "create %s", p)
		}
		res.Created = append(res.Created, rel+"/")
		return nil
	}
	if err := mkdir("."); err != nil {
		return nil, err
	}
	for _, d := range Dirs {
		if err := mkdir(d); err != nil {
			return nil, err
		}
	}
	for _, n := range lock.Names() {
		p := filepath.Join(root, n.File())
		f, err := os.OpenFile(p, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
		if err == nil {
			f.Close()
			res.Created = append(res.Created, n.File())
		} else if !errors.Is(err, fs.ErrExist) {
			return nil, fault.Wrap(fault.WorkspaceInvalid, err, "create %s", p)
		}
	}

	ls := lock.NewSet(root, config.Default().LockTimeout())
	release, err := ls.Lock(ctx, lock.Write, false)
	if err != nil {
		return nil, err
	}
	defer release()

	if err := createIfAbsent(root, "workspace.json", res, func() ([]byte, error) {
		return durable.MarshalIndent(Meta{
			SchemaVersion: MetaVersion, WorkspaceID: uuid.NewString(), CreatedAt: now.UTC().Truncate(time.Microsecond),
			ProjectRoot: "..", FlameoxVersion: version.Version(),
		})
	}); err != nil {
		return nil, err
	}
	if err := createIfAbsent(root, "config.toml", res, func() ([]byte, error) { return []byte(config.DefaultTOML), nil }); err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(root, "corpus", "HEAD")); errors.Is(err, fs.ErrNotExist) {
		created, err := first(root, now)
		if err != nil {
			return nil, err
		}
		res.Created = append(res.Created, created...)
	}
	if added, err := excludeFromGit(project); err != nil {
		return nil, err
	} else if added {
		res.Created = append(res.Created, "../.git/info/exclude (entry)")
	}
	ws, err := Open(root)
	if err != nil {
		return nil, err
	}
	if _, err := corpus.Head(root); err != nil {
		return nil, err
	}
	res.Workspace = ws
	return res, nil
}

func createIfAbsent(root, name string, res *InitResult, content func() ([]byte, error)) error {
	path := filepath.Join(root, name)
	if _, err := os.Lstat(path); err == nil {
		return nil
	}
	data, err := content()
	if err != nil {
		return err
	}
	if err := durable.CreateExclusive(path, data, 0o600); err != nil && !errors.Is(err, fs.ErrExist) {
		return fault.Wrap(fault.WorkspaceInvalid, err, "write %s", name)
	}
	res.Created = append(res.Created, name)
	return nil
}

// excludeFromGit adds "/.diagnostics/" to .git/info/exclude when project is
// a git checkout (never to .gitignore, which is the project's own file).
func excludeFromGit(project string) (bool, error) {
	gitDir := filepath.Join(project, ".git")
	st, err := os.Stat(gitDir)
	if err != nil || !st.IsDir() {
		return false, nil // not a checkout, or a worktree/submodule file: leave it alone
	}
	path := filepath.Join(gitDir, "info", "exclude")
	entry := "/" + DirName + "/"
	if f, err := os.Open(path); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if l := strings.TrimSpace(sc.Text()); l == entry || l == DirName || l == DirName+"/" || l == "/"+DirName {
				f.Close()
				return false, nil
			}
		}
		f.Close()
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return false, fault.Wrap(fault.WorkspaceInvalid, err, "create .git/info")
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return false, fault.Wrap(fault.WorkspaceInvalid, err, "open .git/info/exclude")
	}
	defer f.Close()
	prefix := ""
	if st, err := f.Stat(); err == nil && st.Size() > 0 {
		b, _ := os.ReadFile(path)
		if len(b) > 0 && b[len(b)-1] != '\n' {
			prefix = "\n"
		}
	}
	if _, err := f.WriteString(prefix + "# flameox workspace\n" + entry + "\n"); err != nil {
		return false, fault.Wrap(fault.WorkspaceInvalid, err, "write .git/info/exclude")
	}
	return true, nil
}
