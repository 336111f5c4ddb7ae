package all

import (
	"github.com/flameox/flameox/pkg/adapter"
	"github.com/flameox/flameox/pkg/adapter/coverage"
)

// coverageParts are the coverage.py adapter and extractors the registry
// holds (pkg/adapter/coverage).
func coverageParts() ([]adapter.Adapter, []adapter.Extractor) {
	return []adapter.Adapter{coverage.New()}, nil
}
