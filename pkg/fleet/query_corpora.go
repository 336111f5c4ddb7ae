package fleet

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/flameox/flameox/pkg/catalog"
	"github.com/flameox/flameox/pkg/fault"
)

// MaxCorpora bounds how many exported corpora one fleet query reads.
const MaxCorpora = 256

// CorpusRef names one corpus a fleet result read: the export directory it
// was found in, the workspace it came from and the corpus commit it
// pinned.
type CorpusRef struct {
	Dir         string `json:"dir"`
	WorkspaceID string `json:"workspace_id"`
	CommitID    string `json:"commit_id"`
}

// exportedCorpus is one exported corpus and its files.
type exportedCorpus struct {
	CorpusRef
	files map[string][]string
	rows  map[string]int64
}

// readExports finds the corpora of every export directory: one per
// manifests/<workspace_id>.json. A corpus's files are exactly those its
// manifest lists, never a glob: an export writes the manifest last, so
// the files of an export under way (or of one that crashed) are not read.
// Directories are only read. The same
// workspace found in two directories is read once (the first), with a
// warning, so its rows are never counted twice.
func readExports(dirs []string) ([]exportedCorpus, []string, error) {
	if len(dirs) == 0 {
		return nil, nil, fault.New(fault.InvalidArguments, "a fleet query needs at least one export directory").With("field", "from").
			Fix("Pass --from DIR, a directory `flameox export corpus --to DIR` wrote.")
	}
	var out []exportedCorpus
	var warnings []string
	seen := map[string]string{}
	for _, d := range dirs {
		abs, err := filepath.Abs(strings.TrimSpace(d))
		if err != nil || strings.TrimSpace(d) == "" {
			return nil, nil, fault.New(fault.InvalidArguments, "export directory %q", d).With("field", "from")
		}
		if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
			return nil, nil, fault.New(fault.NotFound, "export directory %s does not exist", abs).With("field", "from").With("dir", abs).
				Fix("Pass a directory `flameox export corpus --to DIR` wrote.")
		}
		ents, err := os.ReadDir(filepath.Join(abs, "manifests"))
		if err != nil {
			return nil, nil, fault.New(fault.NotFound, "%s holds no exported corpus (no manifests/ directory)", abs).With("dir", abs).
				Fix("Pass a directory `flameox export corpus --to DIR` wrote.")
		}
		for _, e := range ents {
			name := e.Name()
			if !e.Type().IsRegular() || !strings.HasSuffix(name, ".json") || strings.HasPrefix(name, ".") {
				continue
			}
			wsID := strings.TrimSuffix(name, ".json")
			if !safeID(wsID) {
				return nil, nil, fault.New(fault.WorkspaceInvalid, "%s is not the manifest of a workspace", filepath.Join(abs, "manifests", name)).With("dir", abs).
					Fix("An export's manifests are manifests/<workspace_id>.json.")
			}
			c, err := readCorpus(abs, wsID)
			if err != nil {
				return nil, nil, err
			}
			if prev, ok := seen[c.WorkspaceID]; ok {
				warnings = append(warnings, fmt.Sprintf("workspace %s is in %s and %s: read once, from %s", c.WorkspaceID, prev, abs, prev))
				continue
			}
			seen[c.WorkspaceID] = abs
			out = append(out, c)
			if len(out) > MaxCorpora {
				return nil, nil, fault.New(fault.QueryBudgetExceeded, "more than %d exported corpora", MaxCorpora).With("max_corpora", fmt.Sprint(MaxCorpora)).
					Fix("Query fewer export directories at once.")
			}
		}
	}
	if len(out) == 0 {
		return nil, warnings, fault.New(fault.NotFound, "no exported corpus in %s", strings.Join(dirs, ", ")).With("field", "from")
	}
	return out, warnings, nil
}

// readCorpus reads one workspace's export manifest (ReadManifest checks
// every path it lists) and takes exactly the files it lists.
func readCorpus(dir, wsID string) (exportedCorpus, error) {
	m, err := ReadManifest(dir, wsID)
	if err != nil {
		return exportedCorpus{}, err
	}
	if m == nil {
		return exportedCorpus{}, fault.New(fault.NotFound, "no export manifest of workspace %s in %s", wsID, dir).With("dir", dir)
	}
	c := exportedCorpus{CorpusRef: CorpusRef{Dir: dir, WorkspaceID: m.WorkspaceID, CommitID: m.CommitID}, files: map[string][]string{}, rows: map[string]int64{}}
	for _, f := range m.Files {
		c.files[f.Table] = append(c.files[f.Table], filepath.Join(dir, filepath.FromSlash(f.Path)))
		c.rows[f.Table] += f.Rows
	}
	return c, nil
}

// safeID: a workspace id is a UUID-like token that can name a file.
func safeID(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// datasets converts the corpora for catalog.OpenDatasets.
func datasets(cs []exportedCorpus) []catalog.Dataset {
	out := make([]catalog.Dataset, len(cs))
	for i, c := range cs {
		out[i] = catalog.Dataset{WorkspaceID: c.WorkspaceID, CommitID: c.CommitID, Files: c.files, Rows: c.rows}
	}
	return out
}

func refs(cs []exportedCorpus) []CorpusRef {
	out := make([]CorpusRef, len(cs))
	for i, c := range cs {
		out[i] = c.CorpusRef
	}
	return out
}
