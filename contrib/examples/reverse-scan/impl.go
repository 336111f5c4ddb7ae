package reversescan

import "fmt"

// Impls are the implementations an experiment selects by name: the
// baseline (ReverseSum), the candidate (DirectSum), and a deliberately
// broken one that drops the last element, for the oracle to reject.
var Impls = map[string]func(Seq) int{
	"reverse": ReverseSum,
	"direct":  func(s Seq) int { return DirectSum(Ints(s)) },
	"broken":  func(s Seq) int { return DirectSum(Ints(s)[:s.Len()-1]) },
}

// Ints returns the slice behind a sequence made by New.
func Ints(s Seq) []int { return []int(s.(slice)) }

// Lookup returns the implementation called name.
func Lookup(name string) (func(Seq) int, error) {
	f, ok := Impls[name]
	if !ok {
		return nil, fmt.Errorf("no implementation %q (reverse, direct or broken)", name)
	}
	return f, nil
}
