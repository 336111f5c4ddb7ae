package securitytest

import (
	"bufio"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/internal/testenv"
)

// canaryMark is in every canary file: output that holds it read one.
const canaryMark = "CANARY-3f1c9e"

// tree maps every path under root to its type, size, mtime and content
// digest: equal trees were neither written nor replaced.
func tree(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		v := fmt.Sprintf("%v %d %d", info.Mode(), info.Size(), info.ModTime().UnixNano())
		if info.Mode().IsRegular() {
			b, _ := os.ReadFile(p)
			v += fmt.Sprintf(" %x", sha256.Sum256(b))
		}
		out[p] = v
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sameTree(t *testing.T, what string, before, after map[string]string) {
	t.Helper()
	for p, v := range after {
		if before[p] != v {
			t.Errorf("%s: %s was written or created outside the workspace (%q, was %q)", what, p, v, before[p])
		}
	}
	for p := range before {
		if _, ok := after[p]; !ok {
			t.Errorf("%s: %s outside the workspace was removed", what, p)
		}
	}
}

// plantCanaries writes a canary manifest.json (and artifact.json) in each
// dir, where a path joined from a traversing id would land.
func plantCanaries(t *testing.T, dirs ...string) {
	t.Helper()
	for _, d := range dirs {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, n := range []string{"manifest.json", "artifact.json", "x"} {
			if err := os.WriteFile(filepath.Join(d, n), []byte(`{"note":"`+canaryMark+`"}`), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// errorOf reads the --json error envelope of a failed command and checks
// that it is the structured error docs/exit-codes.md gives for its code.
func errorOf(t *testing.T, what string, r result) *fault.Error {
	t.Helper()
	var env struct {
		OK    bool         `json:"ok"`
		Error *fault.Error `json:"error"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &env); err != nil || env.OK || env.Error == nil {
		t.Fatalf("%s: exit %d and no error envelope: %v\nstdout: %s\nstderr: %s", what, r.exit, err, r.stdout, r.stderr)
	}
	if want := env.Error.ExitCode(); r.exit != want {
		t.Errorf("%s: exit %d, but %s is exit %d (docs/exit-codes.md)", what, r.exit, env.Error.Code, want)
	}
	if env.Error.Code == fault.InternalError || strings.Contains(r.stderr, "bug in flameox") {
		t.Errorf("%s: reported as a bug: %s", what, r.stderr)
	}
	if !strings.Contains(r.stderr, string(env.Error.Code)) {
		t.Errorf("%s: stderr does not name %s: %s", what, env.Error.Code, r.stderr)
	}
	return env.Error
}

// fileTrace runs c under `strace -f -e trace=%file` and returns every path
// its processes named, made absolute against c.dir (paths relative to a
// directory descriptor other than the working directory are left out:
// flameox opens none but its own). Without strace it returns nil after
// testenv.Degrade (a failure under CI=true).
func fileTrace(t *testing.T, c cmdline) (result, []string) {
	t.Helper()
	st, err := lookPathQuiet("strace")
	if err != nil {
		testenv.Degrade(t, "strace", "not installed", "cannot prove that nothing outside the workspace is read; checking outputs and files only")
		return c.run(t), nil
	}
	log := filepath.Join(t.TempDir(), "files.txt")
	c.wrap = []string{st, "-f", "-qq", "-e", "trace=%file", "-e", "signal=none", "-o", log, "--"}
	r := c.run(t)
	f, err := os.Open(log)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var paths []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		m := straceLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		args := m[4]
		if i := strings.LastIndex(args, ") = "); i >= 0 {
			args = args[:i]
		}
		name := m[3]
		if m[2] != "" {
			continue // the path was on the unfinished half
		}
		quoted := quotedArg.FindAllStringSubmatch(args, -1)
		if name == "execve" && len(quoted) > 1 {
			quoted = quoted[:1] // the rest is argv
		}
		dirfd := strings.HasSuffix(name, "at") || strings.HasSuffix(name, "at2") || name == "statx"
		for _, q := range quoted {
			p := q[1]
			if !filepath.IsAbs(p) {
				if dirfd && !strings.HasPrefix(args, "AT_FDCWD") {
					continue // relative to a directory descriptor
				}
				p = filepath.Join(c.dir, p)
			}
			paths = append(paths, filepath.Clean(p))
		}
	}
	return r, paths
}

var quotedArg = regexp.MustCompile(`"((?:[^"\\]|\\.)*)"`)

// touched returns the paths in trace that are canary or lie under it.
func touched(trace []string, canaries ...string) []string {
	var out []string
	for _, p := range trace {
		for _, c := range canaries {
			if p == c || strings.HasPrefix(p, c+string(filepath.Separator)) {
				out = append(out, p)
			}
		}
	}
	return out
}

// TestTraversingIDs gives every command that takes an id ids that climb
// out of the workspace (../../x, sha256:../..), absolute paths and odd
// text. Each must fail with its structured error (INVALID_ARGUMENTS, or
// NOT_FOUND for ids that are free text) and touch nothing outside the
// workspace: canary files sit where a path joined from such an id would
// land, their content must not reach the output, and under strace no
// file system call may name them.
func TestTraversingIDs(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "p")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	mustOK(t, "init", fx(t, dir, "init"))
	r := mustOK(t, "import", fx(t, dir, "import", "--json", fixture(t, "google-pprof__sample.cpu.pb.gz")))
	var imp struct {
		Run struct {
			RunID string `json:"run_id"`
		} `json:"run"`
	}
	json.Unmarshal([]byte(r.stdout), &imp)
	real := imp.Run.RunID
	inner, outer := filepath.Join(dir, "x"), filepath.Join(base, "x")
	plantCanaries(t, inner, outer)
	before := tree(t, base)
	delete(before, filepath.Join(dir, ".diagnostics"))
	odd := []string{"../../x", "../../../x", "x/../../../x", "../runs/" + real, outer, "%2e%2e%2fx", "\x1b]0;pwned\x07\x1b[2J", strings.Repeat("a", 8192)}
	var cases [][]string
	for _, id := range odd {
		cases = append(cases,
			[]string{"runs", "show", id}, []string{"runs", "output", id},
			[]string{"evidence", "get", "run", id}, []string{"evidence", "get", "generation", id},
			[]string{"analyze", "hotspots", id}, []string{"stacks", "callers", id, "main"},
			[]string{"trace", "window", id}, []string{"open", id},
			[]string{"findings", "show", id}, []string{"run-sets", "show", id},
			[]string{"investigations", "show", id}, []string{"experiment", "show", id},
			[]string{"workload", "show", id},
		)
	}
	for _, id := range []string{"sha256:../..", "sha256:../../x", "sha256:../../../x", "sha256:" + outer, "sha256:" + strings.Repeat("0", 62) + "/."} {
		cases = append(cases, []string{"artifacts", "show", id}, []string{"evidence", "get", "artifact", id}, []string{"analyze", "hotspots", id})
	}
	cases = append(cases, []string{"--workspace", "../x", "status"}, []string{"--workspace", outer, "status"})
	for i, args := range cases {
		what := strings.Join(args[:2], " ") + fmt.Sprintf(" #%d", i)
		c := cmdline{tool: "flameox", dir: dir, args: append([]string{"--json"}, args...)}
		var r result
		var trace []string
		if i%4 == 0 { // every fourth under strace: the check stays affordable
			r, trace = fileTrace(t, c)
		} else {
			r = c.run(t)
		}
		if r.exit == 0 {
			t.Errorf("%s %q succeeded: %s", what, args, r.stdout)
			continue
		}
		fe := errorOf(t, what, r)
		switch fe.Code {
		case fault.InvalidArguments, fault.NotFound, fault.WorkspaceNotFound:
		default:
			t.Errorf("%s %q: %s, want INVALID_ARGUMENTS or NOT_FOUND", what, args, fe.Code)
		}
		if strings.Contains(r.stdout+r.stderr, canaryMark) {
			t.Errorf("%s %q: the output holds a canary's content", what, args)
		}
		if strings.ContainsAny(r.stderr, "\x1b\x07") {
			t.Errorf("%s: stderr holds a raw escape: %q", what, r.stderr)
		}
		// --workspace names a directory the user chose: looking there for
		// workspace.json is what it asks for.
		if hit := touched(trace, inner, outer); len(hit) > 0 && args[0] != "--workspace" {
			t.Errorf("%s %q named files outside the workspace: %v", what, args, hit)
		}
	}
	after := tree(t, base)
	for p := range after {
		if strings.HasPrefix(p, filepath.Join(dir, ".diagnostics")) {
			delete(after, p)
		}
	}
	for p := range before {
		if strings.HasPrefix(p, filepath.Join(dir, ".diagnostics")) {
			delete(before, p)
		}
	}
	sameTree(t, "odd ids", before, after)
}

// TestSymlinkedComponent replaces one directory of the workspace at a
// time with a symbolic link to a copy outside it (what a hostile
// checkout's committed .diagnostics could hold): every command must refuse
// with WORKSPACE_INVALID naming the link (exit 5), and write nothing
// through it.
func TestSymlinkedComponent(t *testing.T) {
	for _, rel := range []string{"runs", "artifacts/sha256/94", "corpus/commits", "corpus/HEAD", "evidence/runs", "staging", "generations"} {
		t.Run(strings.ReplaceAll(rel, "/", "_"), func(t *testing.T) {
			dir := project(t, "")
			mustOK(t, "import", fx(t, dir, "import", fixture(t, "google-pprof__sample.cpu.pb.gz")))
			outside := filepath.Join(t.TempDir(), "outside")
			if err := os.Mkdir(outside, 0o755); err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(dir, ".diagnostics", rel)
			target := filepath.Join(outside, filepath.Base(rel))
			if err := os.Rename(p, target); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(target, p); err != nil {
				t.Fatal(err)
			}
			before := tree(t, outside)
			for _, args := range [][]string{
				{"status"}, {"runs", "list"}, {"import", fixture(t, "golang-perf__crc-old.txt")},
				{"catalog", "rebuild"}, {"recover"}, {"init"}, {"validate"}, {"gc", "--apply"},
			} {
				r := fx(t, dir, append([]string{"--json"}, args...)...)
				if r.exit == 0 {
					t.Errorf("%v succeeded with %s a symlink", args, rel)
					continue
				}
				fe := errorOf(t, strings.Join(args, " "), r)
				if fe.Code != fault.WorkspaceInvalid || fe.Details["file"] != rel {
					t.Errorf("%v: %s %v, want WORKSPACE_INVALID naming %s", args, fe.Code, fe.Details, rel)
				}
			}
			sameTree(t, rel, before, tree(t, outside))
		})
	}
}

// TestSymlinkedArtifact: an import whose source is a symbolic link (to a
// canary outside the project) is refused before a run exists, and a
// stored artifact's metadata swapped for a link afterwards is refused as
// an integrity failure; the canary's content reaches neither the output
// nor any file of the workspace.
func TestSymlinkedArtifact(t *testing.T) {
	dir := project(t, "")
	outside := t.TempDir()
	canary := filepath.Join(outside, "bench.txt")
	b, err := os.ReadFile(fixture(t, "golang-perf__crc-old.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(canary, append([]byte("# "+canaryMark+"\n"), b...), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(canary, filepath.Join(dir, "bench.txt")); err != nil {
		t.Fatal(err)
	}
	r := fx(t, dir, "--json", "import", "--kind", "benchmark_samples", "bench.txt")
	if fe := errorOf(t, "import a symlink", r); fe.Code != fault.ExecutionRefused {
		t.Errorf("import of a symlink: %s, want EXECUTION_REFUSED", fe.Code)
	}
	if out := mustOK(t, "runs list", fx(t, dir, "--json", "runs", "list")).stdout; !strings.Contains(out, `"total": 0`) {
		t.Errorf("a refused import left a run: %s", out)
	}

	r = mustOK(t, "import", fx(t, dir, "--json", "import", fixture(t, "google-pprof__sample.cpu.pb.gz")))
	var imp struct {
		ArtifactID string `json:"artifact_id"`
	}
	json.Unmarshal([]byte(r.stdout), &imp)
	hex := strings.TrimPrefix(imp.ArtifactID, "sha256:")
	meta := filepath.Join(dir, ".diagnostics", "artifacts", "sha256", hex[:2], hex, "artifact.json")
	fake := filepath.Join(outside, "artifact.json")
	if err := os.WriteFile(fake, []byte(`{"note":"`+canaryMark+`"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(meta); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(fake, meta); err != nil {
		t.Fatal(err)
	}
	r = fx(t, dir, "--json", "artifacts", "show", imp.ArtifactID)
	if fe := errorOf(t, "artifacts show", r); fe.Code != fault.ArtifactIntegrityFailed {
		t.Errorf("artifacts show through a symlink: %s, want ARTIFACT_INTEGRITY_FAILED", fe.Code)
	}
	if strings.Contains(r.stdout+r.stderr, canaryMark) {
		t.Error("artifacts show printed the symlink target's content")
	}
	filepath.WalkDir(filepath.Join(dir, ".diagnostics"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if b, _ := os.ReadFile(p); strings.Contains(string(b), canaryMark) {
				t.Errorf("%s holds a canary's content", p)
			}
		}
		return nil
	})
}
