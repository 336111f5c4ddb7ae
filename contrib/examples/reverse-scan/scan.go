// Package reversescan is flameox's bundled example workload: two ways to sum
// a sequence, one walking it backwards element by element through an
// interface (slow, linear in n with a large constant), one with a plain
// loop. Its benchmarks and CPU profile are real evidence for the demo.
package reversescan

// Seq is a read-only sequence.
type Seq interface {
	Len() int
	At(i int) int
}

type slice []int

func (s slice) Len() int     { return len(s) }
func (s slice) At(i int) int { return s[i] }

// New returns the sequence 0..n-1.
func New(n int) Seq {
	s := make(slice, n)
	for i := range s {
		s[i] = i
	}
	return s
}

// ReverseSum sums s from the end through the interface.
func ReverseSum(s Seq) int {
	total := 0
	for i := s.Len() - 1; i >= 0; i-- {
		total += s.At(i)
	}
	return total
}

// DirectSum sums a slice with a range loop.
func DirectSum(s []int) int {
	total := 0
	for _, v := range s {
		total += v
	}
	return total
}
