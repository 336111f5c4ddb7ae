package all

import "github.com/flameox/flameox/pkg/adapter"

// traceParts are the Chrome/Kineto trace extractors the registry holds
// (pkg/adapter/trace).
func traceParts() ([]adapter.Adapter, []adapter.Extractor) {
	return nil, nil
}
