package repocheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// goFile is one parsed Go file of the tree, with its path relative to the
// repository root (slash-separated) and its imports by local name.
type goFile struct {
	rel     string
	test    bool
	fset    *token.FileSet
	ast     *ast.File
	imports map[string]string // local name -> import path
}

// goFiles parses every .go file under cmd/ and pkg/ (testdata excluded).
func goFiles(t *testing.T) []goFile {
	t.Helper()
	var files []goFile
	for _, top := range []string{"cmd", "pkg"} {
		err := filepath.WalkDir(filepath.Join(root, top), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if d.Name() == "testdata" {
					return filepath.SkipDir
				}
				return nil
			}
			if !strings.HasSuffix(p, ".go") {
				return nil
			}
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			g := goFile{rel: filepath.ToSlash(rel), test: strings.HasSuffix(p, "_test.go"), fset: fset, ast: f, imports: map[string]string{}}
			for _, im := range f.Imports {
				path, _ := strconv.Unquote(im.Path.Value)
				name := path[strings.LastIndex(path, "/")+1:]
				if im.Name != nil {
					name = im.Name.Name
				}
				g.imports[name] = path
			}
			files = append(files, g)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(files) == 0 {
		t.Fatal("no Go files found")
	}
	return files
}

// pkgSel reports the import path and name of e when it is pkg.Name for an
// imported package of f.
func (f goFile) pkgSel(e ast.Expr) (path, name string, ok bool) {
	sel, isSel := e.(*ast.SelectorExpr)
	if !isSel {
		return "", "", false
	}
	id, isID := sel.X.(*ast.Ident)
	if !isID {
		return "", "", false
	}
	path, ok = f.imports[id.Name]
	return path, sel.Sel.Name, ok
}

func (f goFile) pos(n ast.Node) string {
	return f.rel + ":" + strconv.Itoa(f.fset.Position(n.Pos()).Line)
}

// calls returns "path.Name" -> positions for every call of a package-level
// function in f.
func (f goFile) calls() map[string][]string {
	out := map[string][]string{}
	ast.Inspect(f.ast, func(n ast.Node) bool {
		if c, ok := n.(*ast.CallExpr); ok {
			if path, name, ok := f.pkgSel(c.Fun); ok {
				out[path+"."+name] = append(out[path+"."+name], f.pos(c))
			}
		}
		return true
	})
	return out
}

// inDir reports whether rel lies in the package directory dir (not below).
func inDir(rel, dir string) bool { return filepath.ToSlash(filepath.Dir(rel)) == dir }

// TestProcessesOnlyInBroker keeps starting (or replacing) a process inside
// pkg/broker, which owns process groups, limits, containment and the
// output caps; a process started elsewhere escapes all of them.
func TestProcessesOnlyInBroker(t *testing.T) {
	starters := map[string]bool{
		"syscall.ForkExec": true, "syscall.StartProcess": true, "syscall.Exec": true,
		"os.StartProcess": true, "os/exec.Command": true, "os/exec.CommandContext": true,
		"golang.org/x/sys/unix.Exec": true,
	}
	// Files outside pkg/broker that may, and why.
	allowed := map[string]string{
		// git-style extension dispatch: flameox replaces itself with
		// flameox-NAME (execve), so no child exists for the broker to own.
		"pkg/tool/flameox/extension.go": "syscall.Exec",
		// test support only (imported by _test.go files): runs `go tool
		// pprof` to compare its reading of a profile with pkg/profile's.
		"pkg/profile/pproftest/pproftest.go": "os/exec.Command",
	}
	used := map[string]bool{}
	for _, f := range goFiles(t) {
		if f.test || strings.HasPrefix(f.rel, "pkg/broker/") {
			continue
		}
		for fn, at := range f.calls() {
			if !starters[fn] {
				continue
			}
			if allowed[f.rel] == fn {
				used[f.rel] = true
				continue
			}
			for _, p := range at {
				t.Errorf("%s: %s starts a process outside pkg/broker; use broker.Run or broker.Output", p, fn)
			}
		}
	}
	for rel := range allowed {
		if !used[rel] {
			t.Errorf("%s no longer starts a process: remove it from this test's allow-list", rel)
		}
	}
}

// TestExitOnlyInCLI keeps os.Exit in pkg/cli, which maps every error to its
// exit code (docs/exit-codes.md): code elsewhere returns an error. The mains'
// one line, os.Exit(cli.Main(...)), is the only other use.
func TestExitOnlyInCLI(t *testing.T) {
	exits := map[string]bool{"os.Exit": true, "syscall.Exit": true, "log.Fatal": true, "log.Fatalf": true, "log.Fatalln": true}
	for _, f := range goFiles(t) {
		if f.test || inDir(f.rel, "pkg/cli") {
			continue
		}
		main := strings.HasPrefix(f.rel, "cmd/") && strings.HasSuffix(f.rel, "/main.go")
		ast.Inspect(f.ast, func(n ast.Node) bool {
			c, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			path, name, ok := f.pkgSel(c.Fun)
			if !ok || !exits[path+"."+name] {
				return true
			}
			if main && path+"."+name == "os.Exit" && len(c.Args) == 1 {
				if inner, ok := c.Args[0].(*ast.CallExpr); ok {
					if p, n, ok := f.pkgSel(inner.Fun); ok && strings.HasSuffix(p, "/pkg/cli") && n == "Main" {
						return true
					}
				}
			}
			t.Errorf("%s: %s.%s outside pkg/cli; return an error and let cli.Main exit", f.pos(c), path, name)
			return true
		})
	}
}

// TestNoImportKeepers forbids `var _ = pkg.Func`, `var _ pkg.Type` and
// `_ = pkg.Name` statements: they keep an unused import compiling and hide
// dead code from the compiler and staticcheck. Interface assertions such as
// `var _ io.Writer = (*T)(nil)` are fine (they have a type and a value).
func TestNoImportKeepers(t *testing.T) {
	keeper := func(f goFile, e ast.Expr) bool {
		_, _, ok := f.pkgSel(e)
		return ok
	}
	for _, f := range goFiles(t) {
		ast.Inspect(f.ast, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.ValueSpec:
				for _, id := range n.Names {
					if id.Name != "_" {
						return true
					}
				}
				bare := len(n.Values) == 0 && n.Type != nil && keeper(f, n.Type)
				alias := n.Type == nil && len(n.Values) > 0
				for _, v := range n.Values {
					alias = alias && keeper(f, v)
				}
				if bare || alias {
					t.Errorf("%s: import keeper; remove it (and the import, if nothing else uses it)", f.pos(n))
				}
			case *ast.AssignStmt:
				if n.Tok != token.ASSIGN || len(n.Lhs) != len(n.Rhs) {
					return true
				}
				for i, l := range n.Lhs {
					if id, ok := l.(*ast.Ident); !ok || id.Name != "_" || !keeper(f, n.Rhs[i]) {
						return true
					}
				}
				t.Errorf("%s: import keeper; remove it (and the import, if nothing else uses it)", f.pos(n))
			}
			return true
		})
	}
}
