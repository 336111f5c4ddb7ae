// Command bombs writes the bomb corpus (pkg/profile/bombtest) into a
// directory and lists it, one case per line: name, outcome, limit (or -),
// decompressed bytes, format. scripts/bench/bombs.sh measures it.
// Usage: go run ./scripts/bench/bombs DIR
package main

import (
	"fmt"
	"os"

	"github.com/flameox/flameox/pkg/profile/bombtest"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: bombs DIR")
		os.Exit(2)
	}
	if err := os.MkdirAll(os.Args[1], 0o755); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	cases, err := bombtest.Write(os.Args[1], false)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for _, c := range cases {
		limit := c.Limit
		if limit == "" {
			limit = "-"
		}
		fmt.Printf("%s\t%s\t%s\t%d\t%s\n", c.Name, c.Want, limit, c.Inflate, c.Format)
	}
}
