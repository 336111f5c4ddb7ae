package repocheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestUsageErrorsNameTheProgramOnce: cli.Report already prefixes every
// error with the program's name, so a usage message that starts with it
// ("fox-capture import needs …") prints it twice. Messages start at the
// verb, as cli.Parse's flag errors do.
func TestUsageErrorsNameTheProgramOnce(t *testing.T) {
	prog := regexp.MustCompile(`^"(flameox|fox-[a-z]+)( |:)`)
	fset := token.NewFileSet()
	err := filepath.WalkDir(filepath.Join(root, "pkg"), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) == 0 {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || sel.Sel.Name != "Usagef" {
				return true
			}
			if lit, ok := call.Args[0].(*ast.BasicLit); ok && prog.MatchString(lit.Value) {
				t.Errorf("%s: usage message %s names the program; cli.Report already does", fset.Position(lit.Pos()), lit.Value)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
