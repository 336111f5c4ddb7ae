package covmod

import "testing"

func TestClassify(t *testing.T) {
	for _, n := range []int{-1, 3, 3, 4} {
		if Classify(n) == "" {
			t.Fatal(n)
		}
	}
	if Sum(50) != 1275 || Area(3) != 9 {
		t.Fatal("sum")
	}
}
