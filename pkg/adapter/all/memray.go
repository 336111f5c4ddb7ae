package all

import "github.com/flameox/flameox/pkg/adapter"

// memrayParts are the memray adapter and extractors the registry holds.
func memrayParts() ([]adapter.Adapter, []adapter.Extractor) { return nil, nil }
