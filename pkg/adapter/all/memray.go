package all

import (
	"github.com/flameox/flameox/pkg/adapter"
	"github.com/flameox/flameox/pkg/adapter/memray"
)

// memrayParts are the memray adapter and extractors the registry holds:
// the adapter's Extractors give the capture extractor.
func memrayParts() ([]adapter.Adapter, []adapter.Extractor) {
	return []adapter.Adapter{memray.New()}, nil
}
