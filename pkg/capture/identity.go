package capture

import (
	"context"
	"sync"
	"time"

	"github.com/flameox/flameox/pkg/identity"
	"github.com/flameox/flameox/pkg/workspace"
)

// IdentityCollector gathers environment and source identity for new runs.
// The environment is collected once per process (it does not change while
// flameox runs); the source state is collected per run because the tree can.
type IdentityCollector struct {
	Runner     identity.Runner
	Collectors map[string]string

	once sync.Once
	env  identity.Environment
}

// Collect returns the environment and the project's source state;
// executable, when set, is the resolved program to digest.
func (c *IdentityCollector) Collect(ctx context.Context, projectRoot, executable string) (identity.Environment, identity.SourceState) {
	c.once.Do(func() { c.env = identity.CollectEnvironment(ctx, c.Runner, c.Collectors) })
	src := identity.CollectSource(ctx, identity.Options{
		ProjectRoot: projectRoot, Executable: executable, Runner: c.Runner,
		MaxUntrackedFiles: 10000, MaxUntrackedBytes: 256 << 20, Timeout: 30 * time.Second,
		Exclude: []string{workspace.DirName},
	})
	return c.env, src
}
