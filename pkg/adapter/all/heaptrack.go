package all

import (
	"github.com/flameox/flameox/pkg/adapter"
	"github.com/flameox/flameox/pkg/adapter/heaptrack"
)

// heaptrackParts are the heaptrack adapter and extractors the registry
// holds: the adapter extracts its own data files.
func heaptrackParts() ([]adapter.Adapter, []adapter.Extractor) {
	return []adapter.Adapter{heaptrack.New()}, nil
}
