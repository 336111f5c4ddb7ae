package corpus

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Orphans lists workspace-relative paths of published-looking files that no
// commit in the head's history can reach: generation manifests and evidence
// directories left by a publication that crashed before replacing HEAD.
// Generations that were superseded (compaction, re-extraction) stay
// reachable through the superseding manifest until retention removes them,
// so they are not orphans. Orphans are invisible to readers; retention
// removes them.
func Orphans(s *Snapshot) []string {
	known := map[string]bool{}
	var walk func(g *Generation)
	walk = func(g *Generation) {
		if known[g.GenerationID] {
			return
		}
		known[g.GenerationID] = true
		for _, id := range g.Supersedes {
			if known[id] {
				continue
			}
			old, err := ReadGeneration(s.Root, GenerationRef{GenerationID: id, Manifest: GenerationRel(id)}, false)
			if err != nil {
				known[id] = true // referenced even if damaged; validation reports damage
				continue
			}
			walk(old)
		}
	}
	for _, g := range s.Generations {
		walk(g)
	}
	var out []string
	if ents, err := os.ReadDir(filepath.Join(s.Root, "generations")); err == nil {
		for _, e := range ents {
			if !known[e.Name()] {
				out = append(out, "generations/"+e.Name())
			}
		}
	}
	tables, _ := os.ReadDir(filepath.Join(s.Root, "evidence"))
	for _, t := range tables {
		if !t.IsDir() {
			continue
		}
		ents, _ := os.ReadDir(filepath.Join(s.Root, "evidence", t.Name()))
		for _, e := range ents {
			id, ok := strings.CutPrefix(e.Name(), "generation=")
			if e.IsDir() && (!ok || !known[id]) {
				out = append(out, "evidence/"+t.Name()+"/"+e.Name())
			}
		}
	}
	sort.Strings(out)
	return out
}
