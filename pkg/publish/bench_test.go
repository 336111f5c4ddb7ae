package publish

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/flameox/flameox/pkg/run"
)

// BenchmarkPublishOneRun is the publication a single capture pays for: one
// run with its environment, source state and one registered artifact, as
// one generation (files synced, commit written, HEAD replaced).
func BenchmarkPublishOneRun(b *testing.B) {
	ws, lines := newWorkspace(b, 1)
	var rec run.Record
	if err := json.Unmarshal(lines, &rec); err != nil {
		b.Fatal(err)
	}
	p := &Publisher{WS: ws}
	for b.Loop() {
		if _, err := p.PublishRuns(context.Background(), []RunRef{{RunID: rec.RunID, Revision: rec.Revision}}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCompactSmall is the automatic compaction a capture pays for
// every AutoCompactGenerations publications: that many one-run import
// generations merged into one segment.
func BenchmarkCompactSmall(b *testing.B) {
	for b.Loop() {
		b.StopTimer()
		ws, records := newWorkspace(b, AutoCompactGenerations)
		p := &Publisher{WS: ws}
		for _, ref := range refsOf(b, records) {
			if _, err := p.PublishRuns(context.Background(), []RunRef{ref}); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
		res, err := p.CompactSmall(context.Background(), AutoCompactTiers[0], AutoCompactGenerations)
		if err != nil || !res.Compacted {
			b.Fatalf("compaction: %+v %v", res, err)
		}
	}
}
