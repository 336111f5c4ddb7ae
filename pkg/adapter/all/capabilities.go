package all

import (
	"context"

	"github.com/flameox/flameox/pkg/adapter"
	"github.com/flameox/flameox/pkg/contain"
)

// CapabilityList is the result of `flameox capabilities` and MCP
// list_capabilities.
type CapabilityList struct {
	SchemaVersion int                  `json:"schema_version"`
	Adapters      []adapter.Capability `json:"adapters"`
	Containment   adapter.Capability   `json:"containment"`
}

// Capabilities probes every built-in adapter (passively) and containment.
func Capabilities(ctx context.Context) *CapabilityList {
	res := &CapabilityList{SchemaVersion: 1, Adapters: []adapter.Capability{}}
	for _, a := range Registry().All() {
		res.Adapters = append(res.Adapters, a.Probe(ctx))
	}
	st, path, _, fix := contain.Probe()
	res.Containment = adapter.NewCapability("containment.bubblewrap", adapter.Status(st))
	res.Containment.Executable, res.Containment.Remediation = path, fix
	return res
}
