package corpus

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// snapshotOf builds an in-memory snapshot: generation i has rows[i] rows
// of table runs (and one artifacts row when i is odd, which counts toward
// its size), and supersedes sup[i].
func snapshotOf(root string, rows []int64, sup map[int][]string) *Snapshot {
	s := &Snapshot{Root: root, Commit: Commit{CommitID: "sha256:c"}}
	for i, n := range rows {
		id := "g" + string(rune('1'+i))
		g := &Generation{GenerationID: id, Supersedes: sup[i], Files: []GenerationFile{
			{Path: "evidence/runs/generation=" + id + "/part-0.parquet", Table: "runs", RowCount: n},
		}}
		if i%2 == 1 {
			g.Files = append(g.Files, GenerationFile{Path: "evidence/artifacts/generation=" + id + "/part-0.parquet", Table: "artifacts", RowCount: 1})
		}
		s.Generations = append(s.Generations, g)
	}
	return s
}

func TestPlanCompactionBand(t *testing.T) {
	root := t.TempDir()
	tests := []struct {
		name     string
		rows     []int64
		sup      map[int][]string
		min, max int64
		minGens  int
		want     []string // Supersedes; nil: no plan
	}{
		{"too few small generations", []int64{1, 1, 50}, nil, 0, 10, 3, nil},
		{"two small ones", []int64{1, 1, 50}, nil, 0, 10, 2, []string{"g1", "g2"}},
		{"never fewer than two", []int64{1, 50}, nil, 0, 10, 1, nil},
		{"superseded are not planned again", []int64{1, 1, 2}, map[int][]string{2: {"g1", "g2"}}, 0, 10, 2, nil},
		{"one tier only", []int64{1, 5000, 1, 7000}, nil, 2000, 100000, 2, []string{"g2", "g4"}},
		{"upper bound is exclusive", []int64{10, 10, 9}, nil, 0, 10, 1, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := PlanCompactionBand(snapshotOf(root, tt.rows, tt.sup), tt.min, tt.max, tt.minGens)
			if tt.want == nil {
				if p != nil {
					t.Fatalf("planned %+v, want no plan", p)
				}
				return
			}
			if p == nil || !slices.Equal(p.Supersedes, tt.want) || p.CommitID != "sha256:c" {
				t.Fatalf("plan = %+v, want supersedes %v", p, tt.want)
			}
			var rows int64
			for _, f := range p.Files["runs"] {
				if !strings.HasPrefix(f, root+string(filepath.Separator)+"evidence") {
					t.Errorf("file %s is not under the workspace root", f)
				}
			}
			for _, id := range tt.want {
				i := int(id[1] - '1')
				rows += tt.rows[i]
			}
			if p.Rows["runs"] != rows || len(p.Files["runs"]) != len(tt.want) {
				t.Errorf("runs: %d rows in %d files, want %d in %d", p.Rows["runs"], len(p.Files["runs"]), rows, len(tt.want))
			}
		})
	}
}

func TestPlanCompactionIsTheBandFromZero(t *testing.T) {
	s := snapshotOf(t.TempDir(), []int64{1, 1, 3}, nil)
	if p := PlanCompaction(s, 3, 2); p == nil || !slices.Equal(p.Supersedes, []string{"g1", "g2"}) || p.Rows["artifacts"] != 1 {
		t.Fatalf("PlanCompaction = %+v", p)
	}
}

func TestSuperseded(t *testing.T) {
	s := snapshotOf(t.TempDir(), []int64{1, 1, 2}, map[int][]string{2: {"g1"}})
	if got := s.Superseded(); len(got) != 1 || !got["g1"] {
		t.Fatalf("Superseded = %v", got)
	}
}
