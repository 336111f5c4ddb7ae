package repocheck

import (
	"go/ast"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const rootModule = "github.com/flameox/flameox"

// rootFile is one parsed non-test Go file under cmd/ or pkg/.
type rootFile = goFile

func (f goFile) dir() string { return filepath.ToSlash(filepath.Dir(f.rel)) }

func (f goFile) line(n ast.Node) string {
	return f.rel + ":" + strconv.Itoa(f.fset.Position(n.Pos()).Line)
}

// rootFiles is the production code: every non-test .go file under cmd/
// and pkg/ (testdata excluded). Tests may build what they like.
func rootFiles(t *testing.T) []rootFile {
	t.Helper()
	var files []rootFile
	for _, f := range goFiles(t) {
		if !f.test {
			files = append(files, f)
		}
	}
	return files
}

// TestToolsImportNoTool keeps every pkg/tool package a leaf: what two
// tools share (flags, exit statuses, the MCP command line) belongs to the
// package of its subject, so that a tool is never half of another binary.
func TestToolsImportNoTool(t *testing.T) {
	const tools = rootModule + "/pkg/tool/"
	for _, f := range rootFiles(t) {
		if !strings.HasPrefix(f.dir(), "pkg/tool/") {
			continue
		}
		own := rootModule + "/" + f.dir()
		for _, im := range f.ast.Imports {
			path, _ := strconv.Unquote(im.Path.Value)
			if strings.HasPrefix(path, tools) && path != own {
				t.Errorf("%s imports %s: move what it needs out of the tool into the package it belongs to", f.line(im), path)
			}
		}
	}
}

// TestServicesBuiltOnce keeps the composition root the only place that
// decides a service's parts: a publish.Publisher or capture.Service value
// is made only by its package's constructor (New, in new.go), which
// pkg/services calls with the production parts.
func TestServicesBuiltOnce(t *testing.T) {
	services := []struct{ pkg, typ, constructor string }{
		{"pkg/publish", "Publisher", "pkg/publish/new.go"},
		{"pkg/capture", "Service", "pkg/capture/new.go"},
	}
	for _, f := range rootFiles(t) {
		if f.dir() == "pkg/services" {
			continue
		}
		ast.Inspect(f.ast, func(n ast.Node) bool {
			var typ ast.Expr
			switch n := n.(type) {
			case *ast.CompositeLit:
				typ = n.Type
			case *ast.CallExpr:
				if id, ok := n.Fun.(*ast.Ident); ok && id.Name == "new" && len(n.Args) == 1 {
					typ = n.Args[0]
				}
			}
			if typ == nil {
				return true
			}
			for _, s := range services {
				if f.rel != s.constructor && f.names(typ, s.pkg, s.typ) {
					t.Errorf("%s builds a %s.%s; use %s.New (through pkg/services in the tools and the MCP server)",
						f.line(n), filepath.Base(s.pkg), s.typ, filepath.Base(s.pkg))
				}
			}
			return true
		})
	}
}

// names reports whether e names the type typ of the package in directory
// pkg: typ inside that package, pkg.typ outside it.
func (f goFile) names(e ast.Expr, pkg, typ string) bool {
	switch e := e.(type) {
	case *ast.Ident:
		return f.dir() == pkg && e.Name == typ
	case *ast.SelectorExpr:
		id, ok := e.X.(*ast.Ident)
		return ok && f.imports[id.Name] == rootModule+"/"+pkg && e.Sel.Name == typ
	}
	return false
}
