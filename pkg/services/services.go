package services

import (
	"time"

	"github.com/flameox/flameox/pkg/adapter/all"
	"github.com/flameox/flameox/pkg/broker"
	"github.com/flameox/flameox/pkg/capture"
	"github.com/flameox/flameox/pkg/workspace"
)

// Capture returns the capture service of ws: identity probes through the
// process broker and every built-in adapter. now and environ are the
// process's clock and environment (nil: time.Now and os.Environ).
func Capture(ws *workspace.Workspace, now func() time.Time, environ func() []string) *capture.Service {
	return capture.New(ws, capture.Options{Now: now, Identity: &capture.IdentityCollector{Runner: broker.Default},
		Adapters: all.Registry(), Environ: environ})
}
