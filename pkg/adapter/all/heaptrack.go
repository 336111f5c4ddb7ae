package all

import "github.com/flameox/flameox/pkg/adapter"

// heaptrackParts are the heaptrack adapter and extractors the registry holds.
func heaptrackParts() ([]adapter.Adapter, []adapter.Extractor) { return nil, nil }
