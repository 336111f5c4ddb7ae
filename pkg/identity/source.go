package identity

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/flameox/flameox/pkg/digest"
)

// SourceState identifies the source tree (and workload executable) a run
// was produced from.
//
// IdentityQuality is "clean" when HEAD is known, there is no diff against it,
// there are no untracked inputs and every field is present; "exact" when
// every field is present but the tree is dirty (the diff and untracked
// digests pin it); "partial" when anything is missing.
type SourceState struct {
	// SourceStateID is digest.Of the record without itself and observed_at.
	SourceStateID   string  `json:"source_state_id"`
	IdentityQuality Quality `json:"identity_quality"`
	// RepositoryRoot is always ".": the project root is the repository root
	// (git is not allowed to discover a repository above it).
	RepositoryRoot string `json:"repository_root"`
	HeadCommit     string `json:"head_commit,omitempty"`
	// DiffDigest is digest.Bytes of `git diff --binary HEAD` (staged and
	// unstaged changes to tracked files, including submodule pointers).
	DiffDigest string `json:"diff_digest,omitempty"`
	// UntrackedDigest is digest.Of the sorted untracked, not-ignored files
	// (git ls-files --others --exclude-standard): path, sha256 and executable
	// bit of regular files (opened with O_NOFOLLOW); for symlinks the digest
	// of the link text, never of the target (see UntrackedSkipped). Over
	// Options' count or byte bound, or with an untracked nested repository,
	// it is missing ("untracked_inputs").
	UntrackedDigest string `json:"untracked_digest,omitempty"`
	// UntrackedSkipped lists untracked entries that are not regular files
	// (symlinks, FIFOs, sockets, devices): recorded, never followed or read.
	UntrackedSkipped []string `json:"untracked_skipped,omitempty"`
	// Submodules is digest.Bytes of the index's gitlink entries (mode
	// 160000 lines of `git ls-files --stage`): which commit each submodule
	// is pinned to. A submodule checked out at another commit, or with
	// local changes, shows in the diff (see DiffDigest).
	Submodules string `json:"submodules,omitempty"`
	// ExecutablePath is project-relative inside the project, else only the
	// base name (so no home or build path leaks); the digest pins the file.
	ExecutablePath   string `json:"executable_path,omitempty"`
	ExecutableDigest string `json:"executable_digest,omitempty"`
	// BuildID is "gnu:<hex>" from the ELF NT_GNU_BUILD_ID note or
	// "go:<id>" from the Go build id note.
	BuildID       string            `json:"build_id,omitempty"`
	Fields        map[string]string `json:"fields"`
	MissingFields []string          `json:"missing_fields"`
	ObservedAt    time.Time         `json:"observed_at"`
}

// Options configure CollectSource.
type Options struct {
	ProjectRoot       string        // absolute path of the project (and repository) root
	Executable        string        // resolved workload executable; empty = none (missing "executable")
	Runner            Runner        // runs git; required (nil = every git field missing)
	MaxUntrackedFiles int           // default DefaultMaxUntrackedFiles
	MaxUntrackedBytes int64         // default DefaultMaxUntrackedBytes
	Timeout           time.Duration // per git command; default DefaultTimeout
	Exclude           []string      // project-relative paths to ignore, e.g. ".diagnostics"
}

// Defaults for zero Options fields, and the bound on the diff.
const (
	DefaultMaxUntrackedFiles       = 10000
	DefaultMaxUntrackedBytes int64 = 256 << 20
	DefaultTimeout                 = 60 * time.Second
	MaxDiffBytes             int64 = 64 << 20
)

// maxDiffBytes is MaxDiffBytes; tests lower it.
var maxDiffBytes = MaxDiffBytes

// gitFields are the fields that need a working git checkout.
var gitFields = []string{"git_head", "git_diff", "untracked_inputs", "submodules"}

// GitEnv is the exact environment git runs with. System and global
// configuration are ignored (GIT_CONFIG_NOSYSTEM, GIT_CONFIG_GLOBAL=/dev/null,
// HOME=/nonexistent also hides ~/.config/git, including a global excludes
// file), so only the repository's own config and ignore rules apply and the
// result does not depend on the user's setup; GIT_OPTIONAL_LOCKS=0 keeps
// read-only commands from taking index.lock; GIT_CEILING_DIRECTORIES stops
// discovery at the project root, so a repository above it (a monorepo, a
// dotfiles repository in $HOME) is never mistaken for the project's; LC_ALL=C
// fixes messages and sorting; PATH is the parent's, to find git.
func GitEnv(projectRoot string) []string {
	return []string{
		"GIT_CEILING_DIRECTORIES=" + filepath.Dir(projectRoot),
		"GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_OPTIONAL_LOCKS=0",
		"GIT_TERMINAL_PROMPT=0",
		"HOME=/nonexistent",
		"LC_ALL=C",
		"PATH=" + os.Getenv("PATH"),
	}
}

// git runs one git command in the project root.
type git struct {
	ctx     context.Context
	r       Runner
	root    string
	env     []string
	timeout time.Duration
}

func (g git) run(limit int64, args ...string) ([]byte, error) {
	argv := append([]string{"git", "-c", "core.fsmonitor=false", "-c", "core.quotePath=true"}, args...)
	return g.r.Output(g.ctx, argv, g.root, g.env, limit, g.timeout)
}

// CollectSource observes the source state of o.ProjectRoot. It never fails:
// whatever it cannot observe goes into MissingFields and makes the record
// partial.
func CollectSource(ctx context.Context, o Options) SourceState {
	o = withDefaults(o)
	s := SourceState{RepositoryRoot: ".", Fields: map[string]string{}}
	miss := missing{}

	root, rootOK := projectRoot(o.ProjectRoot)
	excludes, excludesOK := cleanExcludes(o.Exclude)
	if !excludesOK {
		miss.add("exclude")
	}
	if len(excludes) > 0 {
		b, _ := json.Marshal(excludes)
		s.Fields["exclude"] = string(b)
	}

	g := git{ctx: ctx, r: o.Runner, root: root, env: GitEnv(root), timeout: o.Timeout}
	untracked := -1
	if rootOK && o.Runner != nil && hasGitEntry(root) {
		untracked = collectGit(g, o, root, excludes, &s, miss)
	} else {
		miss.add(gitFields...)
	}
	if untracked >= 0 {
		s.Fields["untracked_files"] = strconv.Itoa(untracked)
	}
	describeExecutable(root, o.Executable, &s, miss)

	s.MissingFields = miss.sorted()
	switch {
	case len(s.MissingFields) > 0:
		s.IdentityQuality = QualityPartial
	case s.DiffDigest == digest.Bytes(nil) && untracked == 0:
		s.IdentityQuality = QualityClean
	default:
		s.IdentityQuality = QualityExact
	}
	s.ObservedAt = now()
	// recordID cannot fail on this record; an empty id would fail Verify.
	s.SourceStateID, _ = recordID(s, "source_state_id", "observed_at")
	return s
}

// Verify recomputes the id and fails with ARTIFACT_INTEGRITY_FAILED when the
// record no longer matches it.
func (s SourceState) Verify() error {
	return verifyID("source state", s.SourceStateID, s, "source_state_id", "observed_at")
}

func withDefaults(o Options) Options {
	if o.MaxUntrackedFiles <= 0 {
		o.MaxUntrackedFiles = DefaultMaxUntrackedFiles
	}
	if o.MaxUntrackedBytes <= 0 {
		o.MaxUntrackedBytes = DefaultMaxUntrackedBytes
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	return o
}

// projectRoot resolves symlinks in an absolute root, so that paths git
// reports and paths we compute agree.
func projectRoot(p string) (string, bool) {
	if !filepath.IsAbs(p) {
		return p, false
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return filepath.Clean(p), false
	}
	return real, true
}

// cleanExcludes normalizes project-relative exclusions to sorted slash
// paths. Absolute paths, ".." escapes and "." (which would exclude the whole
// tree) are dropped and reported as not ok.
func cleanExcludes(in []string) ([]string, bool) {
	ok := true
	var out []string
	for _, e := range in {
		c := filepath.ToSlash(filepath.Clean(e))
		if e == "" || filepath.IsAbs(e) || c == "." || c == ".." || strings.HasPrefix(c, "../") {
			ok = false
			continue
		}
		out = append(out, c)
	}
	slices.Sort(out)
	return slices.Compact(out), ok
}

// pathspec limits a git command to the project minus the exclusions.
func pathspec(excludes []string) []string {
	ps := []string{"--", "."}
	for _, e := range excludes {
		ps = append(ps, ":(exclude,literal)"+e)
	}
	return ps
}

// hasGitEntry reports whether root has a .git entry (a directory, or the
// file of a linked worktree or submodule). Only the top level of a work
// tree has one, and git identity is kept only for a project that is the
// top level, so without it no git process is started.
func hasGitEntry(root string) bool {
	_, err := os.Lstat(filepath.Join(root, ".git"))
	return err == nil
}

// gitHead asks git, in one process, for the repository's top level and
// its HEAD commit. A repository without a commit makes that fail, so a
// failure falls back to asking for the top level alone (head "").
func gitHead(g git) (top, head string, ok bool) {
	out, err := g.run(1<<16, "rev-parse", "--show-toplevel", "--verify", "--quiet", "HEAD^{commit}")
	if err == nil {
		// Two lines; a top level with a newline in its name takes the
		// slower path below.
		if lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n"); len(lines) == 2 && isHash(lines[1]) {
			return lines[0], lines[1], true
		}
	}
	out, err = g.run(1<<16, "rev-parse", "--show-toplevel")
	if err != nil {
		return "", "", false
	}
	return strings.TrimSuffix(string(out), "\n"), "", true
}

// sameDir reports whether git's top level is the project root.
func sameDir(top, root string) bool {
	top, err := filepath.EvalSymlinks(top)
	return err == nil && top == root
}

// collectGit fills the git fields of s when root is the top level of a
// git checkout (otherwise every git field is missing) and returns the
// number of untracked entries, or -1 when they could not be listed within
// bounds.
//
// Every probe starts at once (the top level and HEAD, the diff against
// HEAD, the index and the untracked list: each git start costs real time,
// and in sequence they were most of a capture's identity cost;
// docs/performance.md, "Capture orchestration overhead"). Their answers
// are used only once the top level is known to be the project root, the
// diff only when HEAD exists, and untracked files are hashed only then.
// (`git submodule status` is a shell script, slow to start; the
// gitlinks in the index say the same, natively.) A project without a
// .gitmodules file declares no submodules, and its index is not listed:
// a gitlink without one is pinned by HEAD's tree and the diff anyway, and
// one git process fewer is measurable on two cores.
func collectGit(g git, o Options, root string, excludes []string, s *SourceState, miss missing) int {
	diffArgs := append([]string{"-c", "diff.noprefix=false", "-c", "diff.mnemonicPrefix=false", "-c", "diff.relative=false",
		"diff", "--binary", "--no-ext-diff", "--no-textconv", "--no-color", "--no-renames",
		"--diff-algorithm=myers", "--ignore-submodules=none", "HEAD"}, pathspec(excludes)...)

	var (
		wg                      sync.WaitGroup
		top, head               string
		inRepo                  bool
		diffOut, subOut         []byte
		diffErr, subErr, untErr error
		untracked               int
		untrackedState          = *s
		known                   = make(chan struct{})
	)
	ours := func() bool { <-known; return inRepo && sameDir(top, root) }
	wg.Go(func() {
		defer close(known)
		if h, ok := readHead(root); ok {
			top, head, inRepo = root, h, true
			return
		}
		top, head, inRepo = gitHead(g)
	})
	wg.Go(func() {
		if _, err := os.Lstat(filepath.Join(root, ".gitmodules")); errors.Is(err, fs.ErrNotExist) {
			return // no submodules declared: the gitlinks are HEAD's, which HEAD and the diff pin
		}
		var staged []byte
		staged, subErr = g.run(64<<20, "ls-files", "--stage", "-z")
		for entry := range bytes.SplitSeq(staged, []byte{0}) {
			if bytes.HasPrefix(entry, []byte("160000 ")) {
				subOut = append(append(subOut, entry...), '\n')
			}
		}
	})
	wg.Go(func() {
		untracked, untErr = untrackedInputs(g, o, excludes, &untrackedState, ours)
	})
	wg.Go(func() {
		diffOut, diffErr = g.run(maxDiffBytes, diffArgs...)
	})
	wg.Wait()
	if !ours() {
		miss.add(gitFields...)
		return -1
	}
	if head != "" {
		s.HeadCommit = head
	} else {
		miss.add("git_head")
	}

	if s.HeadCommit == "" {
		miss.add("git_diff")
	} else if diffErr == nil {
		s.DiffDigest = digest.Bytes(diffOut)
		// A dirty submodule shows only as "<commit>-dirty": its changed files
		// are not pinned by this diff.
		if dirtySubmodule(diffOut) {
			miss.add("submodule_worktree")
		}
	} else {
		miss.add("git_diff")
	}
	if subErr == nil {
		s.Submodules = digest.Bytes(subOut)
	} else {
		miss.add("submodules")
	}
	s.UntrackedDigest, s.UntrackedSkipped = untrackedState.UntrackedDigest, untrackedState.UntrackedSkipped
	if untErr != nil {
		miss.add("untracked_inputs")
		return -1
	}
	return untracked
}

// isHash accepts a full SHA-1 or SHA-256 object name.
func isHash(h string) bool {
	if len(h) != 40 && len(h) != 64 {
		return false
	}
	return strings.Trim(h, "0123456789abcdef") == ""
}

// dirtySubmodule reports whether a diff shows a submodule with changes in
// its own work tree ("+Subproject commit <hash>-dirty").
func dirtySubmodule(diff []byte) bool {
	for line := range bytes.Lines(diff) {
		line = bytes.TrimSuffix(line, []byte("\n"))
		if bytes.HasPrefix(line, []byte("+Subproject commit ")) && bytes.HasSuffix(line, []byte("-dirty")) {
			return true
		}
	}
	return false
}
