package reversescan

import (
	"fmt"
	"testing"
)

func TestSums(t *testing.T) {
	for _, n := range []int{0, 1, 10, 1000} {
		want := n * (n - 1) / 2
		if n == 0 {
			want = 0
		}
		s := New(n)
		if got := ReverseSum(s); got != want {
			t.Fatalf("ReverseSum(%d) = %d, want %d", n, got, want)
		}
		if got := DirectSum([]int(s.(slice))); got != want {
			t.Fatalf("DirectSum(%d) = %d, want %d", n, got, want)
		}
	}
}

func BenchmarkReverseSum(b *testing.B) {
	for _, n := range []int{32 << 10, 64 << 10, 128 << 10} {
		s := New(n)
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				sink = ReverseSum(s)
			}
		})
	}
}

func BenchmarkDirectSum(b *testing.B) {
	for _, n := range []int{32 << 10, 64 << 10, 128 << 10} {
		s := []int(New(n).(slice))
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				sink = DirectSum(s)
			}
		})
	}
}

var sink int
