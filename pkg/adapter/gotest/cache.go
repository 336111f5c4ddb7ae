package gotest

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/flameox/flameox/pkg/adapter"
)

// Caches a contained go test writes: inside the sandbox the user's own
// GOCACHE is read-only, and go test cannot build without a writable one.
// They persist under .diagnostics/cache, so a second capture does not
// rebuild cold.
func (*Adapter) Caches() []adapter.Cache {
	return []adapter.Cache{{Name: "go-build", Env: "GOCACHE"}, {Name: "gomod", Env: "GOMODCACHE"}}
}

// ContainedEnv lets a contained go test download modules it lacks from
// the user's own module cache (read-only, as a file:// GOPROXY), before
// the network the workload's GOPROXY names: with the network denied, a
// project whose modules are downloaded still builds. -modcacherw keeps
// the sandbox's module cache removable (go makes it read-only otherwise).
func (*Adapter) ContainedEnv(env []string, dirs map[string]string) []string {
	get := func(name string) string {
		v := ""
		for _, kv := range env {
			if k, val, ok := strings.Cut(kv, "="); ok && k == name {
				v = val
			}
		}
		return v
	}
	var out []string
	proxy := get("GOPROXY")
	if proxy == "" {
		proxy = "https://proxy.golang.org,direct"
	}
	if user := userModCache(get); user != "" && user != dirs["gomod"] {
		if fi, err := os.Stat(filepath.Join(user, "cache", "download")); err == nil && fi.IsDir() {
			proxy = "file://" + filepath.ToSlash(filepath.Join(user, "cache", "download")) + "," + proxy
		}
	}
	out = append(out, "GOPROXY="+proxy)
	flags := get("GOFLAGS")
	if !strings.Contains(flags, "-modcacherw") {
		flags = strings.TrimSpace(flags + " -modcacherw")
	}
	return append(out, "GOFLAGS="+flags)
}

// userModCache is where the go command keeps the user's modules, by its
// own rule: GOMODCACHE, else the first GOPATH entry's pkg/mod, else
// $HOME/go/pkg/mod.
func userModCache(get func(string) string) string {
	if v := get("GOMODCACHE"); v != "" {
		return v
	}
	if gp := filepath.SplitList(get("GOPATH")); len(gp) > 0 && gp[0] != "" {
		return filepath.Join(gp[0], "pkg", "mod")
	}
	if h := get("HOME"); h != "" {
		return filepath.Join(h, "go", "pkg", "mod")
	}
	return ""
}

var _ adapter.CacheUser = (*Adapter)(nil)
