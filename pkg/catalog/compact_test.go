package catalog

import (
	"slices"
	"testing"

	"github.com/flameox/flameox/pkg/corpus"
	"github.com/flameox/flameox/pkg/evidence/schema"
)

func TestPlanCompaction(t *testing.T) {
	f := newFixture(t)
	f.publish("g1", []corpus.GenerationFile{f.file("g1", schema.Runs, 0, [][]any{runRow("a", 0, "pending")})}, nil)
	f.publish("g2", []corpus.GenerationFile{
		f.file("g2", schema.Runs, 0, [][]any{runRow("a", 1, "registered")}),
		f.file("g2", schema.Artifacts, 0, [][]any{artifactRow("r1", "a")}),
	}, nil)
	big := make([][]any, 50)
	for i := range big {
		big[i] = runRow("b", i, "registered")
	}
	f.publish("g3", []corpus.GenerationFile{f.file("g3", schema.Runs, 0, big)}, nil)
	snap, err := corpus.Pin(f.root)
	must(t, err)
	if p := corpus.PlanCompaction(snap, 10, 3); p != nil {
		t.Fatalf("planned with too few small generations: %+v", p)
	}
	p := corpus.PlanCompaction(snap, 10, 2)
	if p == nil || !slices.Equal(p.Supersedes, []string{"g1", "g2"}) || len(p.Files["runs"]) != 2 || p.Rows["runs"] != 2 || p.Rows["artifacts"] != 1 {
		t.Fatalf("plan = %+v", p)
	}
	f.publish("g4", []corpus.GenerationFile{f.file("g4", schema.Runs, 0, [][]any{runRow("a", 0, "pending"), runRow("a", 1, "registered")})}, []string{"g1", "g2"})
	snap, err = corpus.Pin(f.root)
	must(t, err)
	if p := corpus.PlanCompaction(snap, 10, 2); p != nil {
		t.Fatalf("superseded generations planned again: %+v", p)
	}
}
