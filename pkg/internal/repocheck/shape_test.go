package repocheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const (
	modulePath  = "github.com/flameox/flameox"
	publishPkg  = modulePath + "/pkg/publish"
	duckdbAlias = "github.com/duckdb/duckdb-go"
)

// writers are the binaries that may link pkg/publish, the only writer of
// corpus/HEAD: fox-publish, fox-catalog (compact), fox-gc (repair
// republishes damaged generations), and flameox and fox-mcp, which publish
// in process. docs/architecture.md states the same rule.
var writers = []string{"flameox", "fox-catalog", "fox-gc", "fox-mcp", "fox-publish"}

// linksWriterToday are binaries that are not writers but still link
// pkg/publish, and why. The test fails once one stops, so the entry goes.
var linksWriterToday = map[string]string{}

// TestOneHeadWriter keeps corpus.SetHead, the one step that advances
// corpus/HEAD, called only from pkg/publish (pkg/corpus defines it; tests
// may build workspaces with it). Any other package that needs a HEAD goes
// through pkg/publish (workspace.Init takes publish.FirstCommit).
func TestOneHeadWriter(t *testing.T) {
	fset := token.NewFileSet()
	var found int
	for _, dir := range []string{"pkg", "cmd", "scripts"} {
		err := filepath.Walk(filepath.Join(root, dir), func(p string, info os.FileInfo, err error) error {
			if err != nil || info.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
				return err
			}
			rel := filepath.ToSlash(strings.TrimPrefix(p, root+string(filepath.Separator)))
			f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			name := ""
			for _, imp := range f.Imports {
				if path, _ := strconv.Unquote(imp.Path.Value); path == modulePath+"/pkg/corpus" {
					name = "corpus"
					if imp.Name != nil {
						name = imp.Name.Name
					}
				}
			}
			inCorpus := strings.HasPrefix(rel, "pkg/corpus/")
			ast.Inspect(f, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.SelectorExpr:
					if x, ok := n.X.(*ast.Ident); ok && name != "" && x.Name == name && (n.Sel.Name == "SetHead" || n.Sel.Name == "InitHead") {
						found++
						if !strings.HasPrefix(rel, "pkg/publish/") {
							t.Errorf("%s: calls corpus.%s; only pkg/publish advances corpus/HEAD", fset.Position(n.Pos()), n.Sel.Name)
						}
					}
				case *ast.Ident:
					if inCorpus && n.Name == "SetHead" {
						found++
					}
				}
				return true
			})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if found == 0 {
		t.Fatal("corpus.SetHead found nowhere: the check no longer looks at the right name")
	}
}

// TestWriterLinkedOnlyByWriters keeps pkg/publish out of every binary but
// the writers: fox-analyze reads and fox-capture captures; neither
// publishes.
func TestWriterLinkedOnlyByWriters(t *testing.T) {
	cmds, _ := filepath.Glob(filepath.Join(root, "cmd", "*"))
	if len(cmds) == 0 {
		t.Fatal("no commands found")
	}
	for _, c := range cmds {
		name := filepath.Base(c)
		if slices.Contains(writers, name) {
			continue
		}
		chain := importChain(t, "./cmd/"+name, publishPkg)
		why, known := linksWriterToday[name]
		switch {
		case chain != "" && known:
			t.Logf("%s links pkg/publish (%s), known: %s", name, chain, why)
		case chain != "":
			t.Errorf("%s links pkg/publish, the corpus writer (%s); only %v may", name, chain, writers)
		case known:
			t.Errorf("%s no longer links pkg/publish: remove it from linksWriterToday", name)
		}
	}
}

// TestCaptureAndPublishWithoutCgo builds fox-capture and fox-publish with
// CGO_ENABLED=0: neither needs DuckDB, so neither may link it.
func TestCaptureAndPublishWithoutCgo(t *testing.T) {
	for _, name := range []string{"fox-capture", "fox-publish"} {
		if chain := importChain(t, "./cmd/"+name, duckdbAlias); chain != "" {
			t.Errorf("%s links duckdb-go (%s); only readers may", name, chain)
		}
	}
	if testing.Short() {
		t.Skip("builds two binaries")
	}
	cmd := exec.Command("go", "build", "-o", t.TempDir()+string(filepath.Separator), "./cmd/fox-capture", "./cmd/fox-publish")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("CGO_ENABLED=0 go build ./cmd/fox-capture ./cmd/fox-publish: %v\n%s", err, out)
	}
}

// importChain returns how pkg reaches a package whose path starts with
// target ("a -> b -> target"), or "" when it does not.
func importChain(t *testing.T, pkg, target string) string {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, pkg)
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v", pkg, err)
	}
	imports := map[string][]string{}
	var main string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		imports[f[0]] = f[1:]
		main = f[0] // go list -deps prints the named package last
	}
	// Breadth-first from main, so the chain reported is a shortest one.
	prev := map[string]string{main: ""}
	queue := []string{main}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if strings.HasPrefix(p, target) {
			chain := []string{p}
			for q := prev[p]; q != ""; q = prev[q] {
				chain = append(chain, q)
			}
			slices.Reverse(chain)
			for i := range chain {
				chain[i] = strings.TrimPrefix(chain[i], modulePath+"/")
			}
			return strings.Join(chain, " -> ")
		}
		for _, q := range imports[p] {
			if _, seen := prev[q]; !seen {
				prev[q] = p
				queue = append(queue, q)
			}
		}
	}
	return ""
}

// TestArchitectureLayers keeps docs/architecture.md's layers block and the
// tree one to one: every package it names exists, every package of pkg/
// (but pkg/internal, the adapters under pkg/adapter and test-support
// packages) is named once, and
// each imports only packages of its own layer or the layers below.
func TestArchitectureLayers(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(root, "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, block, found := strings.Cut(string(doc), "```layers\n")
	block, _, closed := strings.Cut(block, "```")
	if !found || !closed {
		t.Fatal("docs/architecture.md has no ```layers block")
	}
	layer := map[string]int{} // package path under pkg/ -> layer, 0 at the top
	for i, line := range strings.Split(strings.TrimSpace(block), "\n") {
		f := strings.Fields(line)
		for _, p := range f[1:] {
			if _, dup := layer[p]; dup {
				t.Errorf("layers block names %s twice", p)
			}
			layer[p] = i
			if gos, _ := filepath.Glob(filepath.Join(root, "pkg", p, "*.go")); len(gos) == 0 {
				t.Errorf("layers block names %s (%s), which is not a package under pkg/", p, f[0])
			}
		}
	}
	cmd := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "./pkg/...")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list ./pkg/...: %v", err)
	}
	// owner maps a package to the layers-block entry that stands for it:
	// itself; for an adapter, adapter; for a test-support package (a name
	// ending in "test", such as pkg/profile/pproftest), its parent.
	owner := func(path string) (string, bool) {
		rel, ok := strings.CutPrefix(path, modulePath+"/pkg/")
		if !ok || strings.HasPrefix(rel, "internal/") {
			return "", false
		}
		if strings.HasPrefix(rel, "adapter/") {
			return "adapter", true
		}
		if dir, base := filepath.Split(rel); dir != "" && strings.HasSuffix(base, "test") {
			return strings.TrimSuffix(dir, "/"), true
		}
		return rel, true
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		p, ok := owner(f[0])
		if !ok {
			continue
		}
		l, named := layer[p]
		if !named {
			t.Errorf("pkg/%s is not in docs/architecture.md's layers block", p)
			continue
		}
		for _, imp := range f[1:] {
			q, ok := owner(imp)
			if !ok || q == p {
				continue
			}
			if lq, named := layer[q]; named && lq < l {
				t.Errorf("pkg/%s imports pkg/%s, a layer above it in docs/architecture.md", p, q)
			}
		}
	}
}
