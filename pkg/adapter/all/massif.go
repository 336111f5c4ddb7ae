package all

import (
	"github.com/flameox/flameox/pkg/adapter"
	"github.com/flameox/flameox/pkg/adapter/massif"
)

// massifParts are the massif adapter and extractors the registry holds:
// the adapter carries its extractor (Extractors).
func massifParts() ([]adapter.Adapter, []adapter.Extractor) {
	return []adapter.Adapter{massif.New()}, nil
}
