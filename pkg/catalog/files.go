package catalog

import (
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/flameox/flameox/pkg/corpus"
	"github.com/flameox/flameox/pkg/evidence/schema"
	"github.com/flameox/flameox/pkg/fault"
)

// tableFiles is the live inventory of one table in a snapshot.
type tableFiles struct {
	Paths []string // absolute, in generation then file order
	Rows  int64    // from the manifests
	// Older: some file has an older minor version of the table's schema
	// (published by an older flameox); views match its columns by name.
	Older bool
}

// liveFiles returns, per known table, the files a reader may see in snap:
// every file of every generation the commit lists, except the files of
// generations that another listed generation supersedes (re-extraction and
// compaction publish a superseding generation; counting both would double
// rows). Every path must be a regular file (Lstat, so a symlink is refused)
// inside <root>/evidence/<table>/ and carry the schema version this binary
// reads (its table's major, at its minor or an older one); anything else
// fails rather than answering from the wrong bytes.
func liveFiles(snap *corpus.Snapshot) (map[string]*tableFiles, error) {
	superseded := snap.Superseded()
	root, err := filepath.Abs(snap.Root)
	if err != nil {
		return nil, fault.Wrap(fault.WorkspaceInvalid, err, "resolve the workspace root")
	}
	out := map[string]*tableFiles{}
	for _, t := range schema.Tables() {
		out[t.Name] = &tableFiles{}
	}
	for _, g := range snap.Generations {
		if superseded[g.GenerationID] {
			continue
		}
		for _, f := range g.Files {
			t, ok := schema.Lookup(f.Table)
			if !ok {
				return nil, fault.New(fault.EvidenceSchemaMismatch, "generation %s lists a file of table %q, which this flameox does not know", g.GenerationID, f.Table).
					With("file", f.Path).Fix("Upgrade flameox to read this corpus.")
			}
			// A minor version only appends optional columns, so files of
			// an older minor read with those columns null; a newer minor or
			// another major is a schema this flameox does not know.
			if f.SchemaMajor != t.Major || f.SchemaMinor < 0 || f.SchemaMinor > t.Minor {
				e := fault.New(fault.EvidenceSchemaMismatch, "%s has schema %s@%d.%d; this flameox reads %s and its older minor versions", f.Path, f.Table, f.SchemaMajor, f.SchemaMinor, t.ID()).
					With("file", f.Path)
				if f.SchemaMajor > t.Major || (f.SchemaMajor == t.Major && f.SchemaMinor > t.Minor) {
					return nil, e.Fix("Upgrade flameox to read this corpus.")
				}
				return nil, e.Fix("Use the flameox version that published it, or start a new workspace.")
			}
			abs := filepath.Join(root, filepath.FromSlash(f.Path))
			if !strings.HasPrefix(abs, filepath.Join(root, "evidence", f.Table)+string(filepath.Separator)) {
				return nil, fault.New(fault.ArtifactIntegrityFailed, "generation %s lists %s outside evidence/%s", g.GenerationID, f.Path, f.Table).With("file", f.Path)
			}
			if err := regularFile(abs, f.Path); err != nil {
				return nil, err
			}
			tf := out[f.Table]
			tf.Paths = append(tf.Paths, abs)
			tf.Rows += f.RowCount
			tf.Older = tf.Older || f.SchemaMinor < t.Minor
		}
	}
	return out, nil
}

// regularFile checks that abs is a regular file, not a symlink.
func regularFile(abs, rel string) error {
	fi, err := os.Lstat(abs)
	if err != nil {
		return fault.Wrap(fault.ArtifactIntegrityFailed, err, "evidence file %s is missing", rel).With("file", rel)
	}
	if !fi.Mode().IsRegular() {
		return fault.New(fault.ArtifactIntegrityFailed, "evidence file %s is not a regular file (%s); refusing to read through it", rel, fi.Mode().Type()).With("file", rel)
	}
	return nil
}

// sqlString quotes s as a SQL string literal.
func sqlString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// sqlList renders paths as a SQL list of string literals.
func sqlList(paths []string) string {
	q := make([]string, len(paths))
	for i, p := range paths {
		q[i] = sqlString(p)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// sortedTables returns the names of m in order.
func sortedTables(m map[string]*tableFiles) []string {
	out := make([]string, 0, len(m))
	for n := range m {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// LiveFiles returns the absolute paths of the files a Reader on snap would
// read for each named table (liveFiles' checks applied: superseded
// generations left out, every file regular, inside its table's directory
// and of a schema this binary reads), and whether any of them has an older
// minor of its table's schema. It is for the few reads that answer
// without starting DuckDB (pkg/analysis reads a ranked page of a profile
// through pkg/evidence/schema).
func LiveFiles(snap *corpus.Snapshot, tables ...string) (map[string][]string, bool, error) {
	live, err := liveFiles(snap)
	if err != nil {
		return nil, false, err
	}
	out := map[string][]string{}
	older := false
	for _, t := range tables {
		tf := live[t]
		if tf == nil {
			return nil, false, fault.New(fault.InternalError, "no evidence table %q", t)
		}
		out[t] = tf.Paths
		older = older || tf.Older
	}
	return out, older, nil
}
