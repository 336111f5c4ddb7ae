# Shared by the bench scripts: source it, then call bench_project.
#
# bench_project DIR FLAMEOX WORKLOAD...: make DIR a git repository with
# one empty commit, write flameox.toml from stdin, run `FLAMEOX init` and
# approve each WORKLOAD. The caller's working directory is left as is.
bench_project() {
  local dir=$1 flameox=$2
  shift 2
  mkdir -p "$dir"
  git -C "$dir" init -q .
  git -C "$dir" -c user.name=b -c user.email=b@example.invalid commit -q --allow-empty -m init
  cat > "$dir/flameox.toml"
  "$flameox" -C "$dir" init >/dev/null
  local w
  for w in "$@"; do
    "$flameox" -C "$dir" workload approve "$w" >/dev/null
  done
}
