package capture

import (
	"time"

	"github.com/flameox/flameox/pkg/adapter"
	"github.com/flameox/flameox/pkg/workspace"
)

// Options configure a Service beyond its workspace. The hooks a caller
// listens with (Progress, Output, OnRun) are set on the Service itself.
type Options struct {
	// Now is the clock of run times (default time.Now).
	Now func() time.Time
	// Identity collects environment and source identity for new runs.
	Identity *IdentityCollector
	// Adapters are the collectors captures may use.
	Adapters *adapter.Registry
	// Environ returns the parent environment (default os.Environ).
	Environ func() []string
}

// New returns the capture service of ws. Tools do not call it directly:
// they get their service from pkg/services, which adds the process broker
// and the built-in adapters.
func New(ws *workspace.Workspace, opts Options) *Service {
	return &Service{WS: ws, Now: opts.Now, Identity: opts.Identity, Adapters: opts.Adapters, Environ: opts.Environ}
}
