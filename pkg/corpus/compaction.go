package corpus

import "path/filepath"

// Superseded returns the ids of the generations that another generation of
// s supersedes: readers skip their files.
func (s *Snapshot) Superseded() map[string]bool {
	out := map[string]bool{}
	for _, g := range s.Generations {
		for _, id := range g.Supersedes {
			out[id] = true
		}
	}
	return out
}

// CompactionPlan is the read side of compaction: which live generations are
// small enough to be rewritten together, and their files per table in the
// order readers see them. The publisher rewrites each table's files into
// large segments (with arrow-go and schema.Writer, so the files keep their
// Arrow schema and metadata), publishes them as one generation whose
// manifest supersedes Supersedes, and from then on readers skip the old
// files. Nothing here writes.
type CompactionPlan struct {
	CommitID   string              `json:"commit_id"`
	Supersedes []string            `json:"supersedes"` // generation ids, commit order
	Files      map[string][]string `json:"files"`      // table -> absolute paths
	Rows       map[string]int64    `json:"rows"`       // table -> rows (from the manifests)
}

// PlanCompaction selects the live generations of snap with fewer than
// smallRows rows in total and returns a plan when there are at least
// minGenerations of them, or nil when compaction is not worth it.
// Generations already superseded are never selected again.
func PlanCompaction(snap *Snapshot, smallRows int64, minGenerations int) *CompactionPlan {
	return PlanCompactionBand(snap, 0, smallRows, minGenerations)
}

// PlanCompactionBand is PlanCompaction for the live generations of at
// least minRows and fewer than maxRows rows: one size tier, so that merging
// small generations never rewrites the larger segments earlier merges made.
func PlanCompactionBand(snap *Snapshot, minRows, maxRows int64, minGenerations int) *CompactionPlan {
	superseded := snap.Superseded()
	plan := &CompactionPlan{CommitID: snap.Commit.CommitID, Supersedes: []string{},
		Files: map[string][]string{}, Rows: map[string]int64{}}
	for _, g := range snap.Generations {
		if superseded[g.GenerationID] {
			continue
		}
		var rows int64
		for _, f := range g.Files {
			rows += f.RowCount
		}
		if rows < minRows || rows >= maxRows {
			continue
		}
		plan.Supersedes = append(plan.Supersedes, g.GenerationID)
		for _, f := range g.Files {
			plan.Files[f.Table] = append(plan.Files[f.Table], filepath.Join(snap.Root, filepath.FromSlash(f.Path)))
			plan.Rows[f.Table] += f.RowCount
		}
	}
	if len(plan.Supersedes) < max(minGenerations, 2) {
		return nil
	}
	return plan
}
