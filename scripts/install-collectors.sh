#!/usr/bin/env bash
# Installs the collectors and tools flameox's tests use, through the system
# package manager and pip. Safe to run repeatedly. CI (.ci/run) calls it
# before the test command; on a developer machine, run it once as root.
set -euo pipefail

apt_packages=(
  git openssl           # source identity; the hashing benchmark's peer
  linux-perf            # perf record / perf script (CPU adapter)
  bubblewrap            # optional containment of captured workloads
  valgrind              # massif, callgrind
  hyperfine             # benchmark peer for whole-command timings
)
pip_packages=(
  pyperf                # benchmark adapter
  py-spy                # Python sampling profiler
  coverage              # execution coverage
  memray                # Python memory profiler
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

echo "install-collectors: done" >&2
for t in git openssl perf bwrap valgrind hyperfine py-spy node npm; do
  printf '  %-10s %s\n' "$t" "$(command -v "$t" || echo MISSING)" >&2
done
