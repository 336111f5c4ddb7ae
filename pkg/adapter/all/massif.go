package all

import "github.com/flameox/flameox/pkg/adapter"

// massifParts are the massif adapter and extractors the registry holds.
func massifParts() ([]adapter.Adapter, []adapter.Extractor) { return nil, nil }
