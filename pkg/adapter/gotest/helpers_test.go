package gotest

import (
	"math"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/flameox/flameox/pkg/adapter/adaptertest"
	"golang.org/x/perf/benchunit"
)

func newSink(t testing.TB) *adaptertest.Sink {
	return adaptertest.NewSink(t, ExtractorName, ExtractorVersion)
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
