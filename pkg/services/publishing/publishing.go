// Package publishing is the writer half of the composition root
// (pkg/services): the publisher every writing tool uses. It is its own
// package so that a binary that only captures (fox-capture) wires its
// capture service from pkg/services without linking pkg/publish, the one
// package that advances corpus/HEAD.
package publishing

import (
	"time"

	"github.com/flameox/flameox/pkg/adapter/all"
	"github.com/flameox/flameox/pkg/publish"
	"github.com/flameox/flameox/pkg/workspace"
)

// Publisher returns the publisher of ws: every built-in extractor, and
// automatic compaction after each publication of runs. It is the one
// publisher every tool uses, for runs, analyses and compaction alike.
func Publisher(ws *workspace.Workspace, now func() time.Time) *publish.Publisher {
	return publish.New(ws, publish.Options{Now: now, Extractors: all.Registry().Extractors(), AutoCompact: true})
}
