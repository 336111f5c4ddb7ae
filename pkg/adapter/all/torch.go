package all

import (
	"github.com/flameox/flameox/pkg/adapter"
	"github.com/flameox/flameox/pkg/adapter/torch"
)

// torchParts are the torch.profiler capture adapter the registry holds
// (pkg/adapter/torch); its trace is read by the trace extractor.
func torchParts() ([]adapter.Adapter, []adapter.Extractor) {
	return []adapter.Adapter{torch.New()}, nil
}
