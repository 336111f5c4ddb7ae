#!/usr/bin/env bash
# Installs the collectors and tools flameox's tests use, through the system
# package manager and pip. Safe to run repeatedly. CI (.ci/run) calls it
# before the test command; on a developer machine, run it once as root.
set -euo pipefail

apt_packages=(
  git openssl           # source identity; the hashing benchmark's peer
  linux-perf            # perf record / perf script (CPU adapter)
  bubblewrap            # containment (bwrap): MCP captures refuse without it by default
  valgrind              # massif, callgrind
  heaptrack             # heaptrack and heaptrack_print (memory adapter)
  hyperfine             # benchmark peer for whole-command timings
  gcc                   # cgo (DuckDB) and the C workloads the memory tests build
  strace                # the security suite's no-network check (pkg/internal/securitytest; unshare is util-linux), scripts/bench/capture-profile.sh
  xz-utils              # scripts/bench/perf-xz.sh's workload (xz -9)
  time                  # /usr/bin/time: peak RSS in scripts/bench (hotspots.sh, perf-xz.sh, import-gc.sh, ...)
)
pip_packages=(
  pyperf==2.11.0        # benchmark adapter (pkg/adapter/pyperf.Version)
  py-spy                # Python sampling profiler
  coverage==7.17.5      # execution coverage (pkg/adapter/coverage.Version)
  memray==1.20.0        # Python memory profiler (pkg/adapter/memray.Version)
  mcp==2.3.0            # the MCP tests' Python SDK client (pkg/mcpserver/py_test.go)
)

sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi

if command -v apt-get >/dev/null 2>&1; then
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${apt_packages[@]}"
  # The MCP test's second client is the TypeScript SDK (npm); keep a Node
  # that is already there, install Debian's otherwise.
  if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends nodejs npm
  fi
else
  echo "install-collectors: apt-get not found; install ${apt_packages[*]} yourself" >&2
fi

python3 -m pip install --quiet --disable-pip-version-check "${pip_packages[@]}"

# Older memray releases, to read captures of their header versions: a
# capture is readable only by the memray release line that wrote it. One
# per-user virtualenv each (no sudo: run this script as the user who runs
# flameox), where pkg/adapter/memray finds it without configuration:
# ${XDG_DATA_HOME:-~/.local/share}/flameox/memray/RELEASE. Kept when it
# already has that release.
memray_readers=(
  1.19.3                # header version 12, memray 1.19.x (pkg/adapter/memray.ExtraRelease)
)
memray_readers_dir="${XDG_DATA_HOME:-$HOME/.local/share}/flameox/memray"
memray_version() { "$1/bin/python" -c 'import importlib.metadata as m; print(m.version("memray"))' 2>/dev/null || true; }
for rel in "${memray_readers[@]}"; do
  venv="$memray_readers_dir/$rel"
  if [ "$(memray_version "$venv")" != "$rel" ]; then
    python3 -m venv --clear "$venv"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "memray==$rel"
  fi
done

# Apache Spark in local mode (pkg/fleet's TestSparkReadsTheExport reads a
# `flameox export corpus` dataset with it): pyspark from PyPI, which brings
# Spark's jars, on the machine's Java 17 (Debian's default-jre-headless).
if command -v apt-get >/dev/null 2>&1 && ! command -v java >/dev/null 2>&1; then
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends default-jre-headless
fi
python3 -m pip install --quiet --disable-pip-version-check pyspark==3.5.7

# Go tools, from the module proxy at pinned versions, into GOBIN (else
# GOPATH/bin), where make lint and the tests look for them. benchstat is
# pinned to the golang.org/x/perf that go.mod requires, read from go.mod
# here so the two cannot drift: pkg/compare's benchstat-agreement tests
# use it when its build information names that version (else they build
# benchstat from the module).
go_tools=(
  honnef.co/go/tools/cmd/staticcheck@v0.8.2   # staticcheck 2026.2.2, for Go 1.26 (make lint)
)
gobin=""
if command -v go >/dev/null 2>&1; then
  perf=$(cd "$(dirname "$0")/.." && go list -m -f '{{if .Replace}}{{.Replace.Version}}{{else}}{{.Version}}{{end}}' golang.org/x/perf)
  go_tools+=("golang.org/x/perf/cmd/benchstat@$perf")   # the benchstat view's peer (pkg/compare)
  for t in "${go_tools[@]}"; do go install "$t"; done
  gobin=$(go env GOBIN)
  if [ -z "$gobin" ]; then gobin="$(go env GOPATH | cut -d: -f1)/bin"; fi
else
  echo "install-collectors: go not found; install Go 1.26+, then go install ${go_tools[*]} and golang.org/x/perf/cmd/benchstat at go.mod's golang.org/x/perf version" >&2
fi

# npm packages (scripts/npm-pack.sh, make npm; docs/npm.md): the GNU cross
# compiler for the other Linux architecture's binary, which links DuckDB
# through cgo, and qemu-user, with which make npm-check runs that binary.
# make test builds only the host's and needs none of them.
case "$(uname -m)" in
  x86_64) npm_cross=(gcc-aarch64-linux-gnu g++-aarch64-linux-gnu qemu-user) ;;
  aarch64) npm_cross=(gcc-x86-64-linux-gnu g++-x86-64-linux-gnu qemu-user) ;;
  *) npm_cross=() ;;
esac
if [ ${#npm_cross[@]} -gt 0 ] && command -v apt-get >/dev/null 2>&1; then
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${npm_cross[@]}"
fi

# Pictures (pkg/chart, docs/pictures.md): the browser tests load the flame
# graph, the plots and the report page in Debian's chromium, headless;
# graphviz's dot draws `go tool pprof -svg`, measured beside render
# flamegraph. apt-get update ran above.
if command -v apt-get >/dev/null 2>&1; then
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends chromium graphviz
fi

# Benchmark peers (docs/performance.md): FlameGraph's stackcollapse-perf.pl,
# the perf-script peer of scripts/bench/fixtures-table.sh (perl; not packaged
# by Debian), cloned at a pinned commit. The bench scripts time with
# scripts/bench/rounds.py (python3), not hyperfine.
flamegraph_dir=/usr/local/share/FlameGraph
flamegraph_rev=41fee1f99f9276008b7cd112fca19dc3ea84ac32
if [ "$(git -C "$flamegraph_dir" rev-parse HEAD 2>/dev/null || true)" != "$flamegraph_rev" ]; then
  $sudo rm -rf "$flamegraph_dir"
  $sudo git clone --quiet https://github.com/brendangregg/FlameGraph "$flamegraph_dir"
  $sudo git -C "$flamegraph_dir" checkout --quiet "$flamegraph_rev"
fi

echo "install-collectors: done" >&2
for t in git openssl perf bwrap valgrind ms_print heaptrack heaptrack_print memray hyperfine py-spy node npm; do
  printf '  %-10s %s\n' "$t" "$(command -v "$t" || echo MISSING)" >&2
done
printf '  %-10s %s\n' "FlameGraph" "$( [ -f "$flamegraph_dir/stackcollapse-perf.pl" ] && echo "$flamegraph_dir" || echo MISSING)" >&2
for t in staticcheck benchstat; do
  printf '  %-10s %s\n' "$t" "$(command -v "$t" || { [ -x "$gobin/$t" ] && echo "$gobin/$t"; } || echo MISSING)" >&2
done
printf '  %-10s %s\n' "pyperf" "$(python3 -c 'import importlib.metadata as m; print(m.version("pyperf"))' 2>/dev/null || echo MISSING)" >&2
for rel in "${memray_readers[@]}"; do
  printf '  %-10s %s\n' "memray $rel" "$( [ "$(memray_version "$memray_readers_dir/$rel")" = "$rel" ] && echo "$memray_readers_dir/$rel/bin/python" || echo MISSING)" >&2
done
printf '  %-10s %s\n' "mcp (py)" "$(python3 -c 'import importlib.metadata as m; print(m.version("mcp"))' 2>/dev/null || echo MISSING)" >&2
