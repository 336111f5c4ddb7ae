package record_test

import (
	"fmt"
	"os"
	"strings"

	"github.com/flameox/flameox/pkg/record"
)

// Analysis is the part of an "analysis" record this filter uses.
type Analysis struct {
	record.Header
	RunID string `json:"run_id"`
}

// A filter that drops the analysis records of run r2 and passes every other
// line on unchanged, including records of kinds it does not know. Malformed
// lines and records too new to understand are reported, and make the filter
// fail at the end, but do not stop it.
func Example_filter() {
	in := strings.NewReader(`{"record":"analysis","schema_version":1,"run_id":"r1","extra":[1]}
{"record":"analysis","schema_version":1,"run_id":"r2"}
{"record":"shiny_new_kind","schema_version":4,"anything":{"at":"all"}}
not json
{"record":"analysis","schema_version":2,"run_id":"r1"}
{"record":"run","schema_version":1,"run_id":"r2","workspace":"/ws"}
`)
	stdout := os.Stdout
	stderr := os.Stdout // os.Stderr in a real tool; stdout here so the output is checked

	r := record.NewReader(in, "<stdin>")
	w := record.NewWriter(stdout)
	failed := false
	for r.Scan() {
		switch it := r.Record().(type) {
		case *record.SyntaxError:
			fmt.Fprintln(stderr, it)
			failed = true
		case *record.Raw:
			if it.Record == record.KindAnalysis {
				if err := record.Check(it.Header, record.KindAnalysis, 1); err != nil {
					fmt.Fprintf(stderr, "%s:%d: %v\n", it.File, it.LineNo, err)
					failed = true
					continue
				}
				var a Analysis
				if err := it.Decode(&a); err != nil {
					fmt.Fprintln(stderr, err)
					failed = true
					continue
				}
				if a.RunID == "r2" {
					continue // filtered out
				}
			}
			if err := w.WriteRaw(it); err != nil {
				fmt.Fprintln(stderr, err)
				return
			}
		}
	}
	if err := r.Err(); err != nil {
		fmt.Fprintln(stderr, err)
		failed = true
	}
	fmt.Println("exit status non-zero:", failed)
	// Output:
	// {"record":"analysis","schema_version":1,"run_id":"r1","extra":[1]}
	// {"record":"shiny_new_kind","schema_version":4,"anything":{"at":"all"}}
	// <stdin>:4: invalid JSON: invalid character 'o' in literal null (expecting 'u')
	// <stdin>:5: "analysis" record has schema_version 2, but this program reads "analysis" records only up to schema_version 1; upgrade it
	// {"record":"run","schema_version":1,"run_id":"r2","workspace":"/ws"}
	// exit status non-zero: true
}
