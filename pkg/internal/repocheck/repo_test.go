package repocheck

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/flameox/flameox/pkg/catalog"
	"github.com/flameox/flameox/pkg/cli"
	"github.com/flameox/flameox/pkg/compare"
	"github.com/flameox/flameox/pkg/corpus"
	"github.com/flameox/flameox/pkg/inquiry"
	"github.com/flameox/flameox/pkg/integrity"
	"github.com/flameox/flameox/pkg/query"
	"github.com/flameox/flameox/pkg/record"
	"github.com/flameox/flameox/pkg/run"
)

const root = "../../.."

// TestRecordsDoc decodes every example in docs/records.md strictly into the
// Go type of its kind, so the page cannot drift from the code.
func TestRecordsDoc(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(root, "docs", "records.md"))
	if err != nil {
		t.Fatal(err)
	}
	types := map[string]func() any{
		record.KindRun:        func() any { return &run.Record{} },
		record.KindGeneration: func() any { return &corpus.GenerationRecord{} },
		record.KindCommit:     func() any { return &corpus.CommitRecord{} },
		record.KindError:      func() any { return &cli.ErrorRecord{} },
		"catalog_status": func() any {
			return &struct {
				record.Header
				Result catalog.Status `json:"result"`
			}{}
		},
		inquiry.KindHypothesis: func() any {
			return &struct {
				record.Header
				Workspace string `json:"workspace"`
				inquiry.Hypothesis
			}{}
		},
		inquiry.KindRunSet: func() any {
			return &struct {
				record.Header
				Workspace string `json:"workspace"`
				inquiry.RunSet
			}{}
		},
		"comparison_result": func() any {
			return &struct {
				record.Header
				Result compare.Comparison `json:"result"`
			}{}
		},
		"integrity_result": func() any {
			return &struct {
				record.Header
				Result integrity.IntegrityResult `json:"result"`
			}{}
		},
		"query_result": func() any {
			return &struct {
				record.Header
				Result query.RunList `json:"result"`
			}{}
		},
	}
	blocks := regexp.MustCompile("(?s)```json\n(.*?)\n```").FindAllSubmatch(doc, -1)
	seen := map[string]bool{}
	for _, b := range blocks {
		r := record.NewReader(bytes.NewReader(b[1]), "docs/records.md")
		for r.Scan() {
			raw, ok := r.Record().(*record.Raw)
			if !ok {
				t.Fatalf("malformed example: %v", r.Record())
			}
			mk, ok := types[raw.Record]
			if !ok {
				t.Fatalf("example of kind %q has no Go type in this test", raw.Record)
			}
			dec := json.NewDecoder(bytes.NewReader(raw.Line))
			dec.DisallowUnknownFields()
			if err := dec.Decode(mk()); err != nil {
				t.Errorf("%s example does not match its Go type: %v", raw.Record, err)
			}
			seen[raw.Record] = true
		}
	}
	for kind := range types {
		if !seen[kind] {
			t.Errorf("docs/records.md has no example of %q", kind)
		}
	}
}

// TestThinMains keeps every cmd/*/main.go a one-call wrapper.
func TestThinMains(t *testing.T) {
	mains, _ := filepath.Glob(filepath.Join(root, "cmd", "*", "main.go"))
	if len(mains) == 0 {
		t.Fatal("no mains found")
	}
	for _, m := range mains {
		b, _ := os.ReadFile(m)
		lines := strings.Count(string(b), "\n")
		funcs := strings.Count(string(b), "\nfunc ")
		if lines > 15 || funcs != 1 || !strings.Contains(string(b), "cli.Main(") {
			t.Errorf("%s is not a thin main (%d lines, %d funcs): logic belongs in pkg/", m, lines, funcs)
		}
	}
}

// TestDuckDBOnlyInCatalog keeps the cgo DuckDB import inside pkg/catalog.
func TestDuckDBOnlyInCatalog(t *testing.T) {
	err := filepath.Walk(filepath.Join(root, "pkg"), func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() || !strings.HasSuffix(p, ".go") {
			return err
		}
		if strings.Contains(filepath.ToSlash(p), "/pkg/catalog/") || strings.Contains(filepath.ToSlash(p), "/pkg/internal/repocheck/") {
			return nil
		}
		f, _ := os.Open(p)
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if strings.HasPrefix(strings.TrimSpace(sc.Text()), `"github.com/duckdb/duckdb-go`) || strings.Contains(sc.Text(), `duckdb "github.com/duckdb`) {
				t.Errorf("%s imports duckdb-go; only pkg/catalog may", p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestGofmt(t *testing.T) {
	out, err := exec.Command("gofmt", "-l", filepath.Join(root, "cmd"), filepath.Join(root, "pkg"), filepath.Join(root, "scripts")).CombinedOutput()
	if err != nil {
		t.Fatalf("gofmt: %v %s", err, out)
	}
	if len(bytes.TrimSpace(out)) > 0 {
		t.Fatalf("gofmt would change:\n%s", out)
	}
}
