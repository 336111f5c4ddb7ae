package repocheck

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPackageDocsInDocGo: a package of more than two files keeps its
// package comment in doc.go, where a newcomer looks for it, and in no
// other file (a comment in scope.go or session.go reads as if it were
// about that file). One- and two-file packages may keep it in their main
// file.
func TestPackageDocsInDocGo(t *testing.T) {
	err := filepath.WalkDir(filepath.Join(root, "pkg"), func(dir string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		var src []string
		for _, f := range files {
			if !strings.HasSuffix(f, "_test.go") {
				src = append(src, f)
			}
		}
		if len(src) <= 2 {
			return nil
		}
		fset := token.NewFileSet()
		var withDoc []string
		for _, f := range src {
			af, err := parser.ParseFile(fset, f, nil, parser.PackageClauseOnly|parser.ParseComments)
			if err != nil {
				t.Fatal(err)
			}
			if af.Doc != nil {
				withDoc = append(withDoc, filepath.Base(f))
			}
		}
		rel, _ := filepath.Rel(root, dir)
		if len(withDoc) != 1 || withDoc[0] != "doc.go" {
			t.Errorf("%s: the package comment belongs in doc.go alone; found it in %v", rel, withDoc)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
