// Package shapes has two shapes; the tests use one.
package shapes

// Square is a square.
type Square struct{ Side int }

// Area of the square.
func (s Square) Area() int { return s.Side * s.Side }

// Circle is a circle.
type Circle struct{ R float64 }

// Area of the circle.
func (c Circle) Area() float64 {
	if c.R < 0 {
		return 0
	}
	return 3.14159 * c.R * c.R
}
