// Package all builds the registry of every built-in adapter with plain
// function calls (no init() registration), in a fixed order.
package all

import (
	"github.com/flameox/flameox/pkg/adapter"
	"github.com/flameox/flameox/pkg/adapter/gotest"
	"github.com/flameox/flameox/pkg/adapter/hyperfine"
	"github.com/flameox/flameox/pkg/adapter/perf"
	"github.com/flameox/flameox/pkg/adapter/process"
	"github.com/flameox/flameox/pkg/adapter/pyperf"
	"github.com/flameox/flameox/pkg/adapter/pyspy"
	"github.com/flameox/flameox/pkg/adapter/stacks"
)

// Registry returns the built-in adapters and extractors.
func Registry() *adapter.Registry {
	return adapter.NewRegistry(
		process.New(),
		gotest.New(),
		perf.New(),
		pyspy.New(),
		pyperf.New(),
		stacks.New(),
	).WithExtractors(stacks.NewExtractor(), hyperfine.NewExtractor())
}
