package services

import (
	"time"

	"github.com/flameox/flameox/pkg/adapter/all"
	"github.com/flameox/flameox/pkg/broker"
	"github.com/flameox/flameox/pkg/capture"
	"github.com/flameox/flameox/pkg/publish"
	"github.com/flameox/flameox/pkg/workspace"
)

// Capture returns the capture service of ws: identity probes through the
// process broker and every built-in adapter. now and environ are the
// process's clock and environment (nil: time.Now and os.Environ).
func Capture(ws *workspace.Workspace, now func() time.Time, environ func() []string) *capture.Service {
	return capture.New(ws, capture.Options{Now: now, Identity: &capture.IdentityCollector{Runner: broker.Default},
		Adapters: all.Registry(), Environ: environ})
}

// Publisher returns the publisher of ws: every built-in extractor, and
// automatic compaction after each publication of runs. It is the one
// publisher every tool uses, for runs, analyses and compaction alike.
func Publisher(ws *workspace.Workspace, now func() time.Time) *publish.Publisher {
	return publish.New(ws, publish.Options{Now: now, Extractors: all.Registry().Extractors(), AutoCompact: true})
}
