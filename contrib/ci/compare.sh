#!/usr/bin/env bash
# flameox in CI: capture a benchmark workload on a pull request's base and
# head commits in one workspace, compare them as benchstat does, and write
# the comparison as Markdown for a pull-request comment. The GitHub Actions
# workflow (contrib/ci/github/flameox-compare.yml) and the GitLab job
# (contrib/ci/gitlab/flameox-compare.gitlab-ci.yml) both run this script;
# contrib/ci/compare_test.go runs it end to end. docs/history.md, "CI".
#
# Usage: compare.sh BASE_REF HEAD_REF
#   run at the top of a git checkout whose tracked files are unchanged;
#   it checks out BASE_REF, then HEAD_REF (detached), and leaves HEAD_REF
#   checked out.
#
# Environment (all optional):
#   FLAMEOX               the flameox binary (default: flameox on PATH)
#   FLAMEOX_WORKLOAD      the workload to capture (default: bench)
#   FLAMEOX_ADAPTER       the capture adapter (default: gotest)
#   FLAMEOX_TOML          a flameox.toml declaring the workload (default:
#                         HEAD_REF's own flameox.toml); both sides run this
#                         one definition, so they are compared on equal terms
#   FLAMEOX_COMPARE_ARGS  more flags for flameox compare, e.g.
#                         "--threshold 0.05 --ignore note"
#   FLAMEOX_OUT           where the results go (default: a new temporary
#                         directory): base.json, head.json, comment.md
#
# The workload is approved here: in CI the definition is the reviewed
# content of the repository, and the job runs the pull request's code
# anyway. Exit status: 0 no regression, 1 a meaningful regression (the
# comment says which), 2 the comparison could not be made (a failed
# capture, a bad reference, a dirty checkout).
set -uo pipefail

die() { echo "flameox-compare: $*" >&2; exit 2; }

[ $# -eq 2 ] || die "usage: compare.sh BASE_REF HEAD_REF"
fx=${FLAMEOX:-flameox}
workload=${FLAMEOX_WORKLOAD:-bench}
adapter=${FLAMEOX_ADAPTER:-gotest}
command -v "$fx" >/dev/null 2>&1 || [ -x "$fx" ] || die "flameox not found ($fx); install it first"

top=$(git rev-parse --show-toplevel 2>/dev/null) || die "not in a git checkout"
cd "$top" || die "cd $top"
base=$(git rev-parse --verify --quiet "$1^{commit}") || die "base $1 is not a commit (fetch it: git fetch --depth=1 origin $1)"
head=$(git rev-parse --verify --quiet "$2^{commit}") || die "head $2 is not a commit"
[ -z "$(git status --porcelain --untracked-files=no)" ] || die "the checkout has changes to tracked files"

out=${FLAMEOX_OUT:-$(mktemp -d "${TMPDIR:-/tmp}/flameox-ci.XXXXXX")}
mkdir -p "$out" || die "mkdir $out"
if [ -n "${FLAMEOX_TOML:-}" ]; then
	cp "$FLAMEOX_TOML" "$out/flameox.toml" || die "read $FLAMEOX_TOML"
else
	git show "$head:flameox.toml" >"$out/flameox.toml" 2>/dev/null || die "$2 has no flameox.toml; set FLAMEOX_TOML"
fi

"$fx" init >/dev/null || die "flameox init failed"

# capture SIDE COMMIT: check the commit out with the one workload
# definition in place, capture it, and put the commit's own flameox.toml
# back, so the next checkout finds a clean tree. Prints the run id.
capture() {
	local side=$1 sha=$2 tracked=1
	git -c advice.detachedHead=false checkout -q --detach "$sha" || die "git checkout $sha failed"
	git cat-file -e "$sha:flameox.toml" 2>/dev/null || tracked=0
	cp "$out/flameox.toml" flameox.toml || die "write flameox.toml"
	"$fx" workload approve "$workload" >"$out/$side-approve.txt" 2>&1 || { cat "$out/$side-approve.txt" >&2; die "approving $workload failed"; }
	"$fx" capture run "$adapter" --workload "$workload" --json >"$out/$side.json" 2>"$out/$side.stderr"
	local rc=$?
	if [ "$tracked" = 1 ]; then git show "$sha:flameox.toml" >flameox.toml; else rm -f flameox.toml; fi
	[ $rc -eq 0 ] || { cat "$out/$side.stderr" "$out/$side.json" >&2; die "capturing $side ($sha) failed with exit $rc"; }
	sed -n 's/^ *"run_id": *"\([^"]*\)".*/\1/p' "$out/$side.json" | head -n 1
}

base_run=$(capture base "$base") || exit 2
head_run=$(capture head "$head") || exit 2
[ -n "$base_run" ] && [ -n "$head_run" ] || die "no run id in $out/base.json or $out/head.json"

# shellcheck disable=SC2086 # FLAMEOX_COMPARE_ARGS is a list of flags
"$fx" compare "$base_run" "$head_run" --fail-on regression --format markdown ${FLAMEOX_COMPARE_ARGS:-} >"$out/compare.md" 2>"$out/compare.stderr"
rc=$?
{
	echo "### flameox: benchmarks of ${head:0:12} against ${base:0:12}"
	echo
	cat "$out/compare.md"
	echo
	echo "<sub>workload \`$workload\` captured by \`flameox capture run $adapter\` on both commits in one job; runs $base_run (base) and $head_run (head); \`flameox compare --fail-on regression\` exited $rc.</sub>"
} >"$out/comment.md"
echo "flameox-compare: $out/comment.md" >&2
cat "$out/comment.md"
case $rc in
0) exit 0 ;;
1) grep -q 'meaningful_regression\|regression' "$out/compare.md" && exit 1 ;;
esac
cat "$out/compare.stderr" >&2
die "flameox compare failed with exit $rc"
