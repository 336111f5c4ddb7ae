// Package covmod is a small module whose tests cover part of it, for the
// coverage extractor's tests.
package covmod

import "example.com/covmod/shapes"

// Classify says whether n is negative, zero, small or large.
func Classify(n int) string {
	switch {
	case n < 0:
		return "negative"
	case n == 0:
		return "zero"
	case n < 10:
		return "small"
	}
	return "large"
}

// Sum adds 1..n, one loop iteration per value.
func Sum(n int) int {
	s := 0
	for i := 1; i <= n; i++ {
		s += i
	}
	return s
}

// Area is the area of a square of side n, through the shapes package.
func Area(n int) int { return shapes.Square{Side: n}.Area() }

// Never is not called by the tests.
func Never() int {
	x := 1
	if x > 0 {
		x++
	}
	return x
}
