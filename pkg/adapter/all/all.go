// Package all builds the registry of every built-in adapter with plain
// function calls (no init() registration), in a fixed order.
package all

import (
	"github.com/flameox/flameox/pkg/adapter"
	"github.com/flameox/flameox/pkg/adapter/process"
)

// Registry returns the built-in adapters.
func Registry() *adapter.Registry {
	return adapter.NewRegistry(
		process.New(),
	)
}
