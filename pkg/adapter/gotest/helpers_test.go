package gotest

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/flameox/flameox/pkg/evidence/schema"
	"golang.org/x/perf/benchunit"
)

// fileSink writes each table through the real schema writer to a Parquet
// file, so tests check what a publication would contain.
type fileSink struct {
	dir   string
	files map[string]*os.File
	ws    map[string]*schema.Writer
}

func newSink(t testing.TB) *fileSink {
	return &fileSink{dir: t.TempDir(), files: map[string]*os.File{}, ws: map[string]*schema.Writer{}}
}

func (s *fileSink) Table(t *schema.Table) (*schema.Writer, error) {
	if w, ok := s.ws[t.Name]; ok {
		return w, nil
	}
	f, err := os.Create(filepath.Join(s.dir, t.Name+".parquet"))
	if err != nil {
		return nil, err
	}
	w, err := schema.NewWriter(t, f, schema.Options{Common: schema.Common{GenerationID: "g", PublishedAt: time.Unix(1, 0),
		ExtractorName: ExtractorName, ExtractorVersion: ExtractorVersion}})
	if err != nil {
		return nil, err
	}
	s.files[t.Name], s.ws[t.Name] = f, w
	return w, nil
}

// rows closes the measurements file and reads it back, one map per row.
func (s *fileSink) rows(t testing.TB) []map[string]any {
	t.Helper()
	w, ok := s.ws["measurements"]
	if !ok {
		return nil
	}
	if _, err := w.Close(); err != nil {
		t.Fatal(err)
	}
	s.files["measurements"].Close()
	pf, err := file.OpenParquetFile(s.files["measurements"].Name(), false)
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: 4096}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Release()
	out := make([]map[string]any, tbl.NumRows())
	for i := range out {
		out[i] = map[string]any{}
	}
	for c := 0; c < int(tbl.NumCols()); c++ {
		name, r := tbl.Schema().Field(c).Name, 0
		for _, ch := range tbl.Column(c).Data().Chunks() {
			for i := 0; i < ch.Len(); i, r = i+1, r+1 {
				out[r][name] = cell(ch, i)
			}
		}
	}
	return out
}

func cell(a arrow.Array, i int) any {
	if a.IsNull(i) {
		return nil
	}
	switch a := a.(type) {
	case *array.String:
		return a.Value(i)
	case *array.Int32:
		return a.Value(i)
	case *array.Int64:
		return a.Value(i)
	case *array.Uint64:
		return a.Value(i)
	case *array.Float64:
		return a.Value(i)
	case *array.Boolean:
		return a.Value(i)
	case *array.Map:
		start, end := a.ValueOffsets(i)
		m := map[string]string{}
		for j := start; j < end; j++ {
			m[a.Keys().(*array.String).Value(int(j))] = a.Items().(*array.String).Value(int(j))
		}
		return m
	}
	return nil // timestamps and lists: not needed here
}

// independent counts benchmark results the way the benchmark format
// (golang.org/design/14313-benchmark-format) defines them, without
// benchfmt's reader: a line "Benchmark<name> <iters> (<value> <unit>)+".
// syntax counts "Benchmark" lines that are not results (a bare name, as
// printed by -v, is not an error); values counts the rows they give.
func independent(text string) (results, values, syntax int) {
	for _, line := range strings.Split(text, "\n") {
		long := len(line)+1 > maxLine
		line = strings.TrimSuffix(line, "\r")
		rest, ok := strings.CutPrefix(line, "Benchmark")
		if !ok || long {
			continue
		}
		sp := strings.IndexFunc(rest, unicode.IsSpace)
		if sp < 0 {
			continue // "BenchmarkName" alone: a -v progress line
		}
		f := strings.Fields(rest[sp:])
		iters, err := strconv.Atoi(first(f))
		if err != nil || len(f) < 3 || len(f)%2 == 0 {
			syntax++
			continue
		}
		units, n := map[string]bool{}, 0
		for i := 1; i < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				n = -1
				break
			}
			v, u := benchunit.Tidy(v, f[i+1])
			if !math.IsNaN(v) && !math.IsInf(v, 0) && !units[u] {
				units[u] = true
				n++
			}
		}
		switch {
		case n < 0:
			syntax++
		case iters >= 1 && n > 0:
			results++
			values += n
		}
	}
	return results, values, syntax
}

func first(f []string) string {
	if len(f) == 0 {
		return ""
	}
	return f[0]
}
