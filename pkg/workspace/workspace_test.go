package workspace

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flameox/flameox/pkg/corpus"
	"github.com/flameox/flameox/pkg/fault"
)

func initAt(t *testing.T, dir string) *InitResult {
	t.Helper()
	res, err := Init(context.Background(), dir, time.Now(), corpus.InitHead)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// snapshot maps every path under root to its mode, size, mtime and content hash.
func snapshot(t *testing.T, root string) map[string]string {
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

func TestInitLayoutAndIdempotence(t *testing.T) {
	dir := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	res := initAt(t, dir)
	root := filepath.Join(dir, DirName)
	for _, p := range append(Dirs, "workspace.json", "config.toml", "write.lock", "retention.lock", "catalog.lock", "corpus/HEAD") {
		if _, err := os.Stat(filepath.Join(root, p)); err != nil {
			t.Errorf("missing %s: %v", p, err)
		}
	}
	head, err := corpus.Head(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(head.Generations) != 0 || head.ParentCommitID != nil {
		t.Fatalf("initial commit should be empty: %+v", head)
	}
	exclude, _ := os.ReadFile(filepath.Join(dir, ".git", "info", "exclude"))
	if strings.Count(string(exclude), "/.diagnostics/") != 1 {
		t.Fatalf(".git/info/exclude lacks the entry:\n%s", exclude)
	}
	if _, err := os.Stat(filepath.Join(dir, ".gitignore")); err == nil {
		t.Fatal("init must not create .gitignore")
	}
	if res.Workspace.ProjectRoot != dir {
		t.Fatalf("project root %s, want %s", res.Workspace.ProjectRoot, dir)
	}

	before := snapshot(t, dir)
	again := initAt(t, dir)
	if len(again.Created) != 0 {
		t.Fatalf("second init created %v", again.Created)
	}
	after := snapshot(t, dir)
	for p, v := range before {
		if after[p] != v {
			t.Errorf("second init changed %s", p)
		}
	}
	if len(after) != len(before) {
		t.Errorf("second init added files: %d → %d", len(before), len(after))
	}
	if again.Workspace.Meta.WorkspaceID != res.Workspace.Meta.WorkspaceID {
		t.Fatal("workspace id changed")
	}
}

func TestDiscover(t *testing.T) {
	dir := t.TempDir()
	initAt(t, dir)
	deep := filepath.Join(dir, "a", "b")
	os.MkdirAll(deep, 0o755)
	ws, err := Discover(deep, "")
	if err != nil {
		t.Fatal(err)
	}
	if ws.Root != filepath.Join(dir, DirName) {
		t.Fatalf("found %s", ws.Root)
	}
	if _, err := Discover(t.TempDir(), ""); !fault.Is(err, fault.WorkspaceNotFound) {
		t.Fatalf("want WORKSPACE_NOT_FOUND, got %v", err)
	}
	if _, err := Discover(deep, filepath.Join(dir, DirName)); err != nil {
		t.Fatalf("explicit workspace: %v", err)
	}
	if _, err := Discover(deep, deep); !fault.Is(err, fault.WorkspaceNotFound) {
		t.Fatalf("explicit non-workspace: %v", err)
	}
}

func TestOpenRejectsDamage(t *testing.T) {
	tests := []struct {
		name    string
		damage  func(root string)
		exit    int
		file    string
		useHead bool
	}{
		{"unknown config key", func(r string) { appendFile(r, "config.toml", "\n[capture]\nbogus = 1\n") }, fault.ExitUsage, "config.toml", false},
		{"unknown config table", func(r string) { appendFile(r, "config.toml", "\n[nope]\n") }, fault.ExitUsage, "config.toml", false},
		{"config missing", func(r string) { os.Remove(filepath.Join(r, "config.toml")) }, fault.ExitUsage, "config.toml", false},
		{"corrupt workspace.json", func(r string) { os.WriteFile(filepath.Join(r, "workspace.json"), []byte("{not json"), 0o600) }, fault.ExitIntegrity, "workspace.json", false},
		{"workspace.json unknown field", func(r string) {
			b, _ := os.ReadFile(filepath.Join(r, "workspace.json"))
			os.WriteFile(filepath.Join(r, "workspace.json"), []byte(strings.Replace(string(b), "{", `{"extra": 1,`, 1)), 0o600)
		}, fault.ExitIntegrity, "workspace.json", false},
		{"empty workspace.json", func(r string) { os.WriteFile(filepath.Join(r, "workspace.json"), nil, 0o600) }, fault.ExitIntegrity, "workspace.json", false},
		{"missing HEAD", func(r string) { os.Remove(filepath.Join(r, "corpus", "HEAD")) }, fault.ExitIntegrity, "corpus/HEAD", true},
		{"corrupt HEAD", func(r string) { os.WriteFile(filepath.Join(r, "corpus", "HEAD"), []byte("garbage\n"), 0o600) }, fault.ExitIntegrity, "corpus/HEAD", true},
		{"empty HEAD", func(r string) { os.WriteFile(filepath.Join(r, "corpus", "HEAD"), nil, 0o600) }, fault.ExitIntegrity, "corpus/HEAD", true},
		{"HEAD names missing commit", func(r string) {
			os.WriteFile(filepath.Join(r, "corpus", "HEAD"), []byte("sha256:"+strings.Repeat("0", 64)+"\n"), 0o600)
		}, fault.ExitIntegrity, "corpus/commits/" + strings.Repeat("0", 64) + ".json", true},
		{"tampered commit", func(r string) {
			id, _ := corpus.HeadID(r)
			p := corpus.CommitPath(r, id)
			b, _ := os.ReadFile(p)
			os.Chmod(p, 0o600)
			os.WriteFile(p, []byte(strings.Replace(string(b), "\"generations\": []", "\"generations\": null", 1)), 0o600)
		}, fault.ExitIntegrity, "corpus/commits/", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			initAt(t, dir)
			root := filepath.Join(dir, DirName)
			tt.damage(root)
			ws, err := Open(root)
			if err == nil && tt.useHead {
				_, err = corpus.Head(ws.Root)
			}
			if err == nil {
				t.Fatal("damage not detected")
			}
			fe := fault.As(err)
			if fe.Code != fault.WorkspaceInvalid && fe.Code != fault.ArtifactIntegrityFailed {
				t.Fatalf("code %s: %v", fe.Code, fe)
			}
			if fe.ExitCode() != tt.exit {
				t.Fatalf("exit %d, want %d (%v)", fe.ExitCode(), tt.exit, fe)
			}
			if !strings.Contains(fe.Details["file"], tt.file) {
				t.Fatalf("error names file %q, want %q (%v)", fe.Details["file"], tt.file, fe)
			}
		})
	}
}

func appendFile(root, name, s string) {
	f, _ := os.OpenFile(filepath.Join(root, name), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(s)
	f.Close()
}
