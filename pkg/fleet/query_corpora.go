package fleet

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/flameox/flameox/pkg/catalog"
	"github.com/flameox/flameox/pkg/fault"
)

// MaxCorpora bounds how many exported corpora one fleet query reads.
const MaxCorpora = 256

// maxManifestBytes bounds one export manifest read into memory.
const maxManifestBytes = 64 << 20

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

// exportManifest is the part of DIR/manifests/<workspace_id>.json a reader
// needs: which workspace and commit, and (when listed) exactly which files.
// Unknown fields are ignored, so a newer export's manifest still reads.
type exportManifest struct {
	WorkspaceID string `json:"workspace_id"`
	CommitID    string `json:"commit_id"`
	Files       []struct {
		Path     string `json:"path"`
		Table    string `json:"table"`
		RowCount int64  `json:"row_count"`
		Rows     int64  `json:"rows"`
	} `json:"files"`
}

// readExports finds the corpora of every export directory: one per
// manifests/<workspace_id>.json. A corpus's files are those its manifest
// lists (an export writes the manifest last, so files of an export still
// under way are not read); a manifest that lists none falls back to the
// layout, <table>/workspace_id=<id>/date=<day>/part-*.parquet, skipping
// hidden and temporary names. Directories are only read. The same
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
			c, err := readCorpus(abs, filepath.Join(abs, "manifests", name))
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

func readCorpus(dir, path string) (exportedCorpus, error) {
	f, err := os.Open(path)
	if err != nil {
		return exportedCorpus{}, fault.Wrap(fault.WorkspaceInvalid, err, "open %s", path)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxManifestBytes+1))
	if err != nil {
		return exportedCorpus{}, fault.Wrap(fault.WorkspaceInvalid, err, "read %s", path)
	}
	if len(data) > maxManifestBytes {
		return exportedCorpus{}, fault.New(fault.QueryBudgetExceeded, "export manifest %s is larger than %d bytes", path, maxManifestBytes).With("file", path)
	}
	var m exportManifest
	if err := json.Unmarshal(data, &m); err != nil {
		return exportedCorpus{}, fault.Wrap(fault.WorkspaceInvalid, err, "export manifest %s is not valid JSON", path).With("file", path)
	}
	if !safeID(m.WorkspaceID) || strings.TrimSuffix(filepath.Base(path), ".json") != m.WorkspaceID {
		return exportedCorpus{}, fault.New(fault.WorkspaceInvalid, "export manifest %s names workspace %q", path, m.WorkspaceID).With("file", path).
			Fix("The manifest must be manifests/<workspace_id>.json of a flameox export.")
	}
	c := exportedCorpus{CorpusRef: CorpusRef{Dir: dir, WorkspaceID: m.WorkspaceID, CommitID: m.CommitID}, files: map[string][]string{}, rows: map[string]int64{}}
	if len(m.Files) > 0 {
		for _, mf := range m.Files {
			rel := filepath.ToSlash(filepath.Clean(filepath.FromSlash(mf.Path)))
			parts := strings.Split(rel, "/")
			if len(parts) < 2 || filepath.IsAbs(mf.Path) || parts[0] == ".." || !strings.HasSuffix(rel, ".parquet") {
				return exportedCorpus{}, fault.New(fault.WorkspaceInvalid, "export manifest %s lists %q outside the export", path, mf.Path).With("file", path)
			}
			table := mf.Table
			if table == "" {
				table = parts[0]
			}
			if parts[0] != table || !slices.Contains(parts, "workspace_id="+m.WorkspaceID) {
				return exportedCorpus{}, fault.New(fault.WorkspaceInvalid, "export manifest %s lists %q outside %s/workspace_id=%s", path, mf.Path, table, m.WorkspaceID).With("file", path)
			}
			c.files[table] = append(c.files[table], filepath.Join(dir, filepath.FromSlash(rel)))
			c.rows[table] += max(mf.RowCount, mf.Rows)
		}
		return c, nil
	}
	// No file list: the layout.
	tables, err := os.ReadDir(dir)
	if err != nil {
		return exportedCorpus{}, fault.Wrap(fault.WorkspaceInvalid, err, "read %s", dir)
	}
	for _, t := range tables {
		if !t.IsDir() || t.Name() == "manifests" || strings.HasPrefix(t.Name(), ".") {
			continue
		}
		root := filepath.Join(dir, t.Name(), "workspace_id="+m.WorkspaceID)
		err := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					return nil
				}
				return err
			}
			name := e.Name()
			if e.IsDir() {
				if p != root && !strings.HasPrefix(name, "date=") {
					return filepath.SkipDir
				}
				return nil
			}
			if e.Type().IsRegular() && strings.HasPrefix(name, "part-") && strings.HasSuffix(name, ".parquet") {
				c.files[t.Name()] = append(c.files[t.Name()], p)
			}
			return nil
		})
		if err != nil {
			return exportedCorpus{}, fault.Wrap(fault.WorkspaceInvalid, err, "list %s", root)
		}
		sort.Strings(c.files[t.Name()])
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
