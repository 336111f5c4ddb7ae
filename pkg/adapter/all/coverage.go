package all

import "github.com/flameox/flameox/pkg/adapter"

// coverageParts are the coverage.py adapter and extractors the registry
// holds (pkg/adapter/coverage).
func coverageParts() ([]adapter.Adapter, []adapter.Extractor) {
	return nil, nil
}
