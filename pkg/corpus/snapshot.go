package corpus

import (
	"os"
	"path/filepath"
	"sort"

	"github.com/flameox/flameox/pkg/fault"
)

// Snapshot is a pinned commit with its generations loaded: exactly the
// files a reader may see. Readers take one Snapshot per request and never
// look at HEAD again, so concurrent publications cannot change an answer.
type Snapshot struct {
	Root        string
	Commit      Commit
	Generations []*Generation
	// Files maps a table name to the absolute paths of its Parquet files in
	// the inventory, in generation order then file order.
	Files map[string][]string
	// Rows counts the rows per table (from the manifests, no file reads).
	Rows map[string]int64
}

// Pin reads HEAD once and loads the commit it names.
func Pin(root string) (*Snapshot, error) {
	c, err := Head(root)
	if err != nil {
		return nil, err
	}
	return Open(root, c)
}

// PinCommit loads a given commit (for readers that must stay on one).
func PinCommit(root, id string) (*Snapshot, error) {
	c, err := Read(root, id)
	if err != nil {
		return nil, err
	}
	return Open(root, c)
}

// Open loads every generation of commit c and checks that each listed file
// is a regular file of the recorded size (not a symlink). Hashes are checked
// by full validation, not on every read.
func Open(root string, c Commit) (*Snapshot, error) {
	s := &Snapshot{Root: root, Commit: c, Files: map[string][]string{}, Rows: map[string]int64{}}
	for _, ref := range c.Generations {
		g, err := ReadGeneration(root, ref, true)
		if err != nil {
			return nil, err
		}
		s.Generations = append(s.Generations, g)
		for _, f := range g.Files {
			abs := filepath.Join(root, filepath.FromSlash(f.Path))
			fi, err := os.Lstat(abs)
			if err != nil {
				return nil, fault.Wrap(fault.ArtifactIntegrityFailed, err, "evidence file %s of generation %s is missing", f.Path, g.GenerationID).With("file", f.Path)
			}
			if !fi.Mode().IsRegular() || fi.Size() != f.ByteLength {
				return nil, fault.New(fault.ArtifactIntegrityFailed, "evidence file %s is not the regular file of %d bytes its manifest records", f.Path, f.ByteLength).With("file", f.Path)
			}
			s.Files[f.Table] = append(s.Files[f.Table], abs)
			s.Rows[f.Table] += f.RowCount
		}
	}
	return s, nil
}

// Tables lists the tables that have files, sorted.
func (s *Snapshot) Tables() []string {
	out := make([]string, 0, len(s.Files))
	for t := range s.Files {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

// FindGeneration returns the generation id of the snapshot: a live one, or
// one a live generation superseded (compaction merges generations but
// their rows keep their generation ids, so provenance still names them).
// A superseded manifest is verified against the digest its superseder's
// input commit pinned; chains of compactions are followed. supersededBy is
// the generation that replaced it, or "" for a live one.
func FindGeneration(s *Snapshot, id string) (g *Generation, supersededBy string, err error) {
	for _, live := range s.Generations {
		if live.GenerationID == id {
			return live, "", nil
		}
	}
	queue := append([]*Generation(nil), s.Generations...)
	seen := map[string]bool{}
	for len(queue) > 0 {
		sup := queue[0]
		queue = queue[1:]
		if len(sup.Supersedes) == 0 {
			continue
		}
		// The superseded generations were in the commit the superseding
		// publication started from (Commit checks that they still are).
		c, err := Read(s.Root, sup.InputCommitID)
		if err != nil {
			return nil, "", err
		}
		refs := make(map[string]GenerationRef, len(c.Generations))
		for _, r := range c.Generations {
			refs[r.GenerationID] = r
		}
		for _, sid := range sup.Supersedes {
			ref, ok := refs[sid]
			if !ok || seen[sid] {
				continue
			}
			seen[sid] = true
			old, err := ReadGeneration(s.Root, ref, true)
			if err != nil {
				return nil, "", err
			}
			if sid == id {
				return old, sup.GenerationID, nil
			}
			queue = append(queue, old)
		}
	}
	return nil, "", nil
}
