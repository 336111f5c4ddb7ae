package publish

import (
	"time"

	"github.com/flameox/flameox/pkg/adapter"
	"github.com/flameox/flameox/pkg/workspace"
)

// Options configure a Publisher beyond its workspace.
type Options struct {
	// Now is the clock of generation and commit times (default time.Now).
	Now func() time.Time
	// Extractors turn registered artifacts into evidence rows.
	Extractors []adapter.Extractor
	// AutoCompact merges small generations after a publication.
	AutoCompact bool
}

// New returns the publisher of ws. Tools do not call it directly: they
// get their publisher from pkg/services, which adds the built-in
// extractors and automatic compaction.
func New(ws *workspace.Workspace, opts Options) *Publisher {
	return &Publisher{WS: ws, Now: opts.Now, Extractors: opts.Extractors, AutoCompact: opts.AutoCompact}
}
