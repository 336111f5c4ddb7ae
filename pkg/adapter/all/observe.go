package all

import (
	"github.com/flameox/flameox/pkg/adapter"
	"github.com/flameox/flameox/pkg/adapter/observe"
)

// observeParts is the extractor of the SDKs' observations files.
func observeParts() ([]adapter.Adapter, []adapter.Extractor) {
	return nil, []adapter.Extractor{observe.NewExtractor()}
}
