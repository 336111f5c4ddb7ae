package gotest

import (
	"testing"
)

func TestProgressLine(t *testing.T) {
	for _, tt := range []struct{ event, want string }{
		{`{"Action":"output","Package":"p","Output":"BenchmarkDirectSum/n=32768-2         \t     637\t     18535 ns/op\t       0 B/op\n"}`,
			"BenchmarkDirectSum/n=32768-2  637  18535 ns/op  0 B/op"},
		{`{"Action":"output","Package":"p","Test":"BenchmarkX","Output":"BenchmarkX\n"}`, ""}, // the name alone, before the result
		{`{"Action":"output","Package":"p","Output":"Benchmarks are fun 1 2\n"}`, ""},
		{`{"Action":"output","Package":"p","Output":"goos: linux\n"}`, ""},
		{`{"Action":"output","Package":"p","Output":"PASS\n"}`, ""},
		{`{"Action":"run","Package":"p","Test":"TestX"}`, ""},
		{`{"Action":"pass","Package":"p","Test":"TestX","Elapsed":0.01}`, ""},
		{`{"Action":"fail","Package":"p","Test":"TestX","Elapsed":0.01}`, "--- FAIL: TestX (0.010s)"},
		{`{"Action":"pass","Package":"example.com/p","Elapsed":0.045}`, "ok   example.com/p (0.045s)"},
		{`{"Action":"fail","Package":"example.com/p","Elapsed":1.5}`, "FAIL example.com/p (1.500s)"},
		{`{"Action":"skip","Package":"example.com/p","Elapsed":0}`, "?    example.com/p [no test files]"},
		{`{"ImportPath":"example.com/p [example.com/p.test]","Action":"build-output","Output":"./a.go:3:1: syntax error\n"}`, "./a.go:3:1: syntax error"},
		{`{"ImportPath":"example.com/p [example.com/p.test]","Action":"build-fail"}`, "build failed: example.com/p [example.com/p.test]"},
		{`not json`, ""},
		{``, ""},
		{`{"Action":`, ""},
	} {
		if got := New().ProgressLines()([]byte(tt.event)); got != tt.want {
			t.Errorf("%s\n got %q\nwant %q", tt.event, got, tt.want)
		}
	}
}

// TestProgressLinesJoin: a result test2json split over two events (the
// benchmark's name, then its measurement) is one line, once.
func TestProgressLinesJoin(t *testing.T) {
	lines := New().ProgressLines()
	var got []string
	for _, ev := range []string{
		`{"Action":"output","Package":"p","Test":"BenchmarkX/n=1","Output":"BenchmarkX/n=1\n"}`,
		`{"Action":"output","Package":"p","Test":"BenchmarkX/n=1","Output":"BenchmarkX/n=1-2         \t"}`,
		`{"Action":"output","Package":"q","Output":"PASS\n"}`,
		`{"Action":"output","Package":"p","Test":"BenchmarkX/n=1","Output":"      20\t     24765 ns/op\t       0 B/op\n"}`,
	} {
		if l := lines([]byte(ev)); l != "" {
			got = append(got, l)
		}
	}
	if len(got) != 1 || got[0] != "BenchmarkX/n=1-2  20  24765 ns/op  0 B/op" {
		t.Fatalf("lines %q", got)
	}
}

func FuzzProgressLine(f *testing.F) {
	f.Add([]byte(`{"Action":"output","Package":"p","Output":"BenchmarkX-2 \t 1\t 2 ns/op\n"}`))
	f.Add([]byte(`{"Action":"fail","Package":"p","Test":"T","Elapsed":1e308}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		lines := New().ProgressLines()
		lines(line) // never panics
		lines(line)
	})
}
