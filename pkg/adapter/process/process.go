// Package process is the adapter every capture has: it runs the workload as
// it is and records the process outcome (wall time, exit code or signal,
// peak RSS, user and system time). Its evidence comes from the broker's
// wait4 rusage, not from an artifact; stdout and stderr are registered as
// process_output artifacts by the capture itself.
package process

import (
	"context"

	"github.com/flameox/flameox/pkg/adapter"
	"github.com/flameox/flameox/pkg/fault"
)

// Name of the adapter.
const Name = "process"

// Adapter is the process adapter.
type Adapter struct{}

// New returns the process adapter.
func New() *Adapter { return &Adapter{} }

func (*Adapter) Name() string { return Name }

func (*Adapter) Probe(context.Context) adapter.Capability {
	c := adapter.NewCapability(Name, adapter.Available)
	c.Modes = []string{"run"}
	c.Limitations = []string{"Records the process outcome only: no stacks, samples or operators."}
	return c
}

func (*Adapter) Plan(req adapter.PlanRequest) (*adapter.Plan, error) {
	if len(req.Argv) == 0 {
		return nil, fault.New(fault.InvalidCapturePlan, "the workload has no argv")
	}
	return &adapter.Plan{
		Adapter: Name, Argv: append([]string{}, req.Argv...), Env: []string{},
		Artifacts: []adapter.ArtifactDecl{}, Steps: []adapter.Step{},
		Overhead:    "none beyond starting the process",
		Permissions: []string{}, Limitations: []string{"No sampled stack or operator evidence is collected."},
	}, nil
}

func (*Adapter) Validate(string, adapter.ArtifactDecl) error { return nil }

func (*Adapter) Viewer(path, kind string) (*adapter.Viewer, error) {
	return &adapter.Viewer{Tool: "less", Argv: []string{"less", path}, Note: "process output is shown as text; control characters are escaped by less"}, nil
}
