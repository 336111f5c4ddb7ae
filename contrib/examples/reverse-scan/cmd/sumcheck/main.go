// Command sumcheck is the reverse-scan experiment's oracle: it sums
// 0..n-1 with the implementation an experiment selected, prints the total
// and exits 1 unless it is n(n-1)/2.
//
//	go run ./cmd/sumcheck IMPL N
package main

import (
	"fmt"
	"os"
	"strconv"

	"example.com/reversescan"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: sumcheck IMPL N")
		os.Exit(2)
	}
	f, err := reversescan.Lookup(os.Args[1])
	n, nerr := strconv.Atoi(os.Args[2])
	if err != nil || nerr != nil || n < 1 {
		fmt.Fprintln(os.Stderr, "sumcheck:", err, nerr)
		os.Exit(2)
	}
	total := f(reversescan.New(n))
	fmt.Println(total)
	if want := n * (n - 1) / 2; total != want {
		fmt.Fprintf(os.Stderr, "%s: total %d, want %d\n", os.Args[1], total, want)
		os.Exit(1)
	}
}
