package all

import (
	"github.com/flameox/flameox/pkg/adapter"
	"github.com/flameox/flameox/pkg/adapter/gotest"
	"github.com/flameox/flameox/pkg/adapter/hyperfine"
	"github.com/flameox/flameox/pkg/adapter/perf"
	"github.com/flameox/flameox/pkg/adapter/process"
	"github.com/flameox/flameox/pkg/adapter/pyperf"
	"github.com/flameox/flameox/pkg/adapter/pyspy"
	"github.com/flameox/flameox/pkg/adapter/stacks"
)

// Registry returns the built-in adapters and extractors.
func Registry() *adapter.Registry {
	adapters := []adapter.Adapter{process.New(), gotest.New(), perf.New(), pyspy.New(), pyperf.New(), stacks.New()}
	extractors := []adapter.Extractor{stacks.NewExtractor(), hyperfine.NewExtractor()}
	for _, parts := range []func() ([]adapter.Adapter, []adapter.Extractor){massifParts, heaptrackParts, memrayParts, coverageParts, traceParts, observeParts, torchParts} {
		as, es := parts()
		adapters, extractors = append(adapters, as...), append(extractors, es...)
	}
	return adapter.NewRegistry(adapters...).WithExtractors(extractors...)
}
