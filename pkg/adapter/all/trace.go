package all

import (
	"github.com/flameox/flameox/pkg/adapter"
	"github.com/flameox/flameox/pkg/adapter/trace"
)

// traceParts are the Chrome/Kineto trace extractors the registry holds
// (pkg/adapter/trace).
func traceParts() ([]adapter.Adapter, []adapter.Extractor) {
	return nil, []adapter.Extractor{trace.NewExtractor(), trace.NewPerfettoExtractor()}
}
