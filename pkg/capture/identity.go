package capture

import (
	"context"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/flameox/flameox/pkg/identity"
	"github.com/flameox/flameox/pkg/workspace"
)

// IdentityCollector gathers environment and source identity for new runs.
// An environment is collected once per process for each set of toolchains
// and collectors (it does not change while flameox runs); the source state
// is collected per run because the tree can change.
type IdentityCollector struct {
	Runner identity.Runner

	mu   sync.Mutex
	envs map[string]identity.Environment
}

// Collect returns the environment and the project's source state.
// executable, when set, is the resolved program to digest; toolchains
// ("go", "python") and collectors (name → version) say which versions
// matter for this run.
func (c *IdentityCollector) Collect(ctx context.Context, projectRoot, executable string, collectors map[string]string, toolchains ...string) (identity.Environment, identity.SourceState) {
	key := envKey(collectors, toolchains)
	c.mu.Lock()
	env, ok := c.envs[key]
	c.mu.Unlock()
	if !ok {
		env = identity.CollectEnvironment(ctx, c.Runner, collectors, toolchains...)
		c.mu.Lock()
		if c.envs == nil {
			c.envs = map[string]identity.Environment{}
		}
		c.envs[key] = env
		c.mu.Unlock()
	}
	src := identity.CollectSource(ctx, identity.Options{
		ProjectRoot: projectRoot, Executable: executable, Runner: c.Runner,
		MaxUntrackedFiles: 10000, MaxUntrackedBytes: 256 << 20, Timeout: 30 * time.Second,
		Exclude: []string{workspace.DirName},
	})
	return env, src
}

func envKey(collectors map[string]string, toolchains []string) string {
	parts := append([]string{}, toolchains...)
	for k, v := range collectors {
		parts = append(parts, k+"="+v)
	}
	sort.Strings(parts)
	return strings.Join(parts, "\x00")
}

// Toolchains guesses which toolchains a workload's versions depend on from
// its resolved program and its adapter.
func Toolchains(executable, adapterName string) []string {
	base := filepath.Base(executable)
	var out []string
	switch {
	case strings.HasPrefix(base, "python"):
		out = append(out, "python")
	case base == "go":
		out = append(out, "go")
	}
	switch adapterName {
	case "gotest":
		out = append(out, "go")
	case "py-spy", "pyperf", "coverage", "memray", "torch":
		out = append(out, "python")
	}
	sort.Strings(out)
	n := 0
	for i, t := range out {
		if i == 0 || t != out[i-1] {
			out[n] = t
			n++
		}
	}
	return out[:n]
}
