package gotest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/flameox/flameox/pkg/adapter"
	"github.com/flameox/flameox/pkg/evidence/schema"
	"github.com/flameox/flameox/pkg/internal/testenv"
)

// largeProfile is a coverage profile of the whole standard library as
// net/http's test binary links it (go test -coverpkg=std, count mode): tens
// of thousands of blocks. FLAMEOX_BENCH_COVERPROFILE names an existing
// profile instead (run `go tool cover -func` on it where its packages
// resolve).
func largeProfile(b *testing.B) string {
	b.Helper()
	if p := os.Getenv("FLAMEOX_BENCH_COVERPROFILE"); p != "" {
		return p
	}
	path := filepath.Join(b.TempDir(), "std.out")
	cmd := exec.Command(testenv.Go(b), "test", "-run", "^$", "-covermode=count", "-coverpkg=std", "-coverprofile="+path, "net/http")
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=", "GOTOOLCHAIN=local")
	cmd.Dir = b.TempDir()
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("go test -coverpkg=std: %v\n%s", err, out)
	}
	return path
}

// fileSink writes each table to a Parquet file through the schema writer,
// as a publication's stage does.
type fileSink struct {
	dir   string
	ws    []*schema.Writer
	files []*os.File
}

func (s *fileSink) Table(t *schema.Table) (*schema.Writer, error) {
	f, err := os.Create(filepath.Join(s.dir, t.Name+".parquet"))
	if err != nil {
		return nil, err
	}
	w, err := schema.NewWriter(t, f, schema.Options{Common: schema.Common{GenerationID: "g", PublishedAt: time.Unix(1, 0),
		ExtractorName: CoverExtractorName, ExtractorVersion: CoverExtractorVersion}})
	if err != nil {
		f.Close()
		return nil, err
	}
	s.ws, s.files = append(s.ws, w), append(s.files, f)
	return w, nil
}

func (s *fileSink) close() error {
	for i, w := range s.ws {
		if _, err := w.Close(); err != nil {
			return err
		}
		if err := s.files[i].Close(); err != nil {
			return err
		}
	}
	return nil
}

// BenchmarkCoverLarge: extraction of a large profile (parse alone, and
// parse plus every row written through the schema writer) side by side
// with `go tool cover -func` on the same file.
//
//	go test -run '^$' -bench CoverLarge -benchtime 5x ./pkg/adapter/gotest
func BenchmarkCoverLarge(b *testing.B) {
	path := largeProfile(b)
	head, _ := os.ReadFile(path)
	in := adapter.ExtractInput{RunID: "run", ArtifactID: "art", Kind: KindCoverage, Producer: Name, Path: path, Head: head}
	p, err := readCover(path, in.Limits)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("%d files, %d blocks, %d statements, %.1f%% covered", len(p.files), p.blocks, p.stmts, percent(p.covered, p.stmts))
	b.Run("parse", func(b *testing.B) {
		for b.Loop() {
			if _, err := readCover(path, in.Limits); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("extract", func(b *testing.B) {
		e := &CoverExtractor{}
		for b.Loop() {
			sink := &fileSink{dir: b.TempDir()}
			if _, err := e.Extract(context.Background(), in, sink); err != nil {
				b.Fatal(err)
			}
			if err := sink.close(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("go_tool_cover_func", func(b *testing.B) {
		goCmd := testenv.Go(b)
		for b.Loop() {
			cmd := exec.Command(goCmd, "tool", "cover", "-func="+path)
			cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=", "GOTOOLCHAIN=local")
			cmd.Dir = filepath.Dir(path)
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("go tool cover -func: %v\n%.500s", err, out)
			}
		}
	})
}
