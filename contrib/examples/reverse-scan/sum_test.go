package reversescan

import (
	"flag"
	"fmt"
	"testing"
)

// impl selects the implementation BenchmarkSum measures: an experiment's
// treatment (go test -bench Sum -args -impl=direct).
var impl = flag.String("impl", "reverse", "implementation BenchmarkSum measures: reverse, direct or broken")

func TestImpls(t *testing.T) {
	for _, n := range []int{2, 10, 1000} {
		want := n * (n - 1) / 2
		for name, f := range Impls {
			got := f(New(n))
			if (got == want) != (name != "broken") {
				t.Errorf("%s(%d) = %d; the total is %d", name, n, got, want)
			}
		}
	}
	if _, err := Lookup("nosuch"); err == nil {
		t.Error("Lookup(nosuch) succeeded")
	}
}

// BenchmarkSum measures the implementation -impl names at each size, so
// every treatment's benchmarks have the same names (Sum/n=32768, ...).
func BenchmarkSum(b *testing.B) {
	f, err := Lookup(*impl)
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range []int{32 << 10, 64 << 10, 128 << 10} {
		s := New(n)
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				sink = f(s)
			}
		})
	}
}
