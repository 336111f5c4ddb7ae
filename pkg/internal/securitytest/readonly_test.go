package securitytest

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/internal/testenv"
)

// readOnlyMount returns a wrapper that runs a command in a mount namespace
// where dir is bind-mounted read-only over itself (`unshare -m` as root,
// `unshare -rm` otherwise), after checking that a write there fails in it.
func readOnlyMount(t *testing.T, dir string) []string {
	t.Helper()
	unshare := lookTool(t, "unshare")
	flag := "-m"
	if os.Geteuid() != 0 {
		flag = "-rm"
	}
	wrap := []string{unshare, flag, "--", "/bin/sh", "-c",
		`mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" "$0" && exec "$@"`, dir}
	probe := append(append([]string{}, wrap[1:]...), "/bin/sh", "-c", `: > "$0/.probe"`, dir)
	out, err := exec.Command(wrap[0], probe...).CombinedOutput()
	if err == nil {
		os.Remove(dir + "/.probe")
		t.Fatalf("the read-only bind mount of %s is writable", dir)
	}
	switch {
	case strings.Contains(string(out), "Read-only file system"):
	case strings.Contains(string(out), "Operation not permitted") || strings.Contains(string(out), "Permission denied"):
		// A container's policy may forbid mount namespaces, as
		// pkg/internal/tinyfs allows for: a skip, under CI=true too.
		testenv.Skip(t, "read-only bind mount", "not allowed", "%v: %s", err, out)
	default:
		testenv.Unable(t, "read-only bind mount", "not allowed", "%v: %s", err, out)
	}
	return wrap
}

// TestReadOnlyWorkspace mounts a project with published evidence
// read-only: the commands that only read (status, runs, analyses) work;
// the ones that write fail with CAPABILITY_UNAVAILABLE (exit 3) naming the
// read-only directory, not as damage (5) or a bug (1).
func TestReadOnlyWorkspace(t *testing.T) {
	dir := project(t, helloTOML, "hello")
	r := mustOK(t, "import", fx(t, dir, "--json", "import", fixture(t, "google-pprof__sample.cpu.pb.gz")))
	run := runIDOf(t, r.stdout)
	wrap := readOnlyMount(t, dir)
	before := tree(t, dir)
	ro := func(args ...string) result {
		return cmdline{tool: "flameox", dir: dir, wrap: wrap, args: append([]string{"--json"}, args...)}.run(t)
	}
	for _, args := range [][]string{
		{"status"}, {"runs", "list"}, {"runs", "show", run}, {"analyze", "hotspots", run},
		{"stacks", "callers", run, "main"}, {"artifacts", "list"}, {"catalog", "status"}, {"workload", "list"},
		{"validate", "--level", "full"}, {"gc"},
	} {
		mustOK(t, strings.Join(args, " ")+" on a read-only workspace", ro(args...))
	}
	for _, args := range [][]string{
		{"import", fixture(t, "golang-perf__crc-old.txt")},
		{"capture", "run", "process", "--workload", "hello"},
		{"catalog", "rebuild"},
	} {
		what := strings.Join(args[:2], " ") + " on a read-only workspace"
		r := ro(args...)
		if r.exit == 0 {
			t.Errorf("%s succeeded", what)
			continue
		}
		fe := errorOf(t, what, r)
		if fe.Code != fault.CapabilityUnavailable || !strings.HasPrefix(fe.Details["directory"], dir) {
			t.Errorf("%s: %s %v, want CAPABILITY_UNAVAILABLE naming a directory of the workspace", what, fe.Code, fe.Details)
		}
	}
	sameTree(t, "read-only workspace", before, tree(t, dir))
	// Writable again, the same commands work.
	mustOK(t, "import", fx(t, dir, "import", fixture(t, "golang-perf__crc-old.txt")))
}
