#!/usr/bin/env bash
# Builds flameox for each npm platform package and packs the packages of
# contrib/npm (docs/npm.md): one tarball per platform, holding its binary,
# and the main package `flameox`, whose launcher runs it.
#
#   scripts/npm-pack.sh [-o OUTDIR] [PLATFORM...]
#
# PLATFORM is linux-x64 or linux-arm64 (default: both). OUTDIR defaults to
# bin/npm. The version is $FLAMEOX_NPM_VERSION, else the newest v* tag
# without its v, else 0.0.0-dev; the binaries carry it (flameox --version
# prints v$VERSION). A platform other than the host's is cross-compiled
# with the GNU cross compiler ${triple}-gcc (Debian's gcc-aarch64-linux-gnu
# and g++-aarch64-linux-gnu, which scripts/install-collectors.sh
# installs); CC_<platform> and CXX_<platform> (CC_linux_arm64) name others.
# Each binary's ELF machine is checked against its package's cpu.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
out=$root/bin/npm
while getopts o: opt; do
  case $opt in
    o) out=$OPTARG ;;
    *) echo "usage: $0 [-o OUTDIR] [linux-x64|linux-arm64]..." >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
platforms=("$@")
[ ${#platforms[@]} -gt 0 ] || platforms=(linux-x64 linux-arm64)

version=${FLAMEOX_NPM_VERSION:-}
if [ -z "$version" ]; then
  version=$(git -C "$root" describe --tags --abbrev=0 --match 'v[0-9]*' 2>/dev/null || true)
  version=${version#v}
fi
[ -n "$version" ] || version=0.0.0-dev

for tool in go node npm; do
  command -v "$tool" >/dev/null || { echo "npm-pack: $tool is not installed" >&2; exit 3; }
done
mkdir -p "$out"
out=$(cd "$out" && pwd)
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
export npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false

host=$(go env GOHOSTOS)-$(go env GOHOSTARCH)

# setjson FILE: sets the version of the package.json FILE and of every
# @flameox/ optional dependency it names to $version.
setjson() {
  node -e '
    const fs = require("fs"), [file, v] = process.argv.slice(1);
    const p = JSON.parse(fs.readFileSync(file, "utf8"));
    p.version = v;
    for (const d of Object.keys(p.optionalDependencies || {})) {
      if (d.startsWith("@flameox/")) p.optionalDependencies[d] = v;
    }
    fs.writeFileSync(file, JSON.stringify(p, null, 2) + "\n");
  ' "$1" "$version"
}

pack() {
  (cd "$1" && npm pack --silent --pack-destination "$out" | tail -n 1)
}

for plat in "${platforms[@]}"; do
  case $plat in
    linux-x64) goarch=amd64 triple=x86_64-linux-gnu machine=3e00 ;;
    linux-arm64) goarch=arm64 triple=aarch64-linux-gnu machine=b700 ;;
    *) echo "npm-pack: unknown platform $plat (linux-x64, linux-arm64)" >&2; exit 2 ;;
  esac
  var=${plat//-/_}
  cc_var=CC_$var cxx_var=CXX_$var
  if [ "$host" = "linux-$goarch" ]; then
    cc=${!cc_var:-${CC:-cc}} cxx=${!cxx_var:-${CXX:-c++}}
  else
    cc=${!cc_var:-$triple-gcc} cxx=${!cxx_var:-$triple-g++}
  fi
  command -v "$cc" >/dev/null || {
    echo "npm-pack: $plat needs the C compiler $cc (scripts/install-collectors.sh installs it)" >&2; exit 3; }
  dir=$stage/$plat
  cp -R "$root/contrib/npm/$plat" "$dir"
  mkdir -p "$dir/bin" "$stage/ld-$plat"
  # As make build: libstdc++ linked statically where the compiler has a
  # libstdc++.a, libgcc statically, and no exported symbols (Makefile).
  lib=$("$cc" -print-file-name=libstdc++.a)
  if [ -f "$lib" ]; then ln -sf "$lib" "$stage/ld-$plat/libstdc++.a"; fi
  echo "npm-pack: building flameox $version for $plat with $cc" >&2
  (cd "$root" && CGO_ENABLED=1 GOOS=linux GOARCH=$goarch CC=$cc CXX=$cxx \
    go build -o "$dir/bin/flameox" \
      -ldflags "-s -w -X github.com/flameox/flameox/pkg/version.override=v$version -extldflags '-L$stage/ld-$plat -static-libgcc -Wl,--no-export-dynamic'" \
      ./cmd/flameox)
  got=$(od -An -tx1 -N4 "$dir/bin/flameox" | tr -d ' \n')$(od -An -tx1 -j18 -N2 "$dir/bin/flameox" | tr -d ' \n')
  if [ "$got" != "7f454c46$machine" ]; then
    echo "npm-pack: $dir/bin/flameox is not an ELF file for $plat (header $got)" >&2; exit 1
  fi
  setjson "$dir/package.json"
  pack "$dir"
done

cp -R "$root/contrib/npm/flameox" "$stage/flameox"
setjson "$stage/flameox/package.json"
pack "$stage/flameox"
echo "npm-pack: packed flameox $version into $out" >&2
