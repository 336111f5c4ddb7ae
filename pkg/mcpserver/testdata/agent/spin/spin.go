// Package spin burns CPU for as long as it is told to, in one function an
// agent can find with analyze_hotspots and follow up the call graph.
package spin

import "time"

// Mix is the hot frame: a few rounds of an integer mixing function.
func Mix(x uint64) uint64 {
	for i := 0; i < 64; i++ {
		x ^= x >> 33
		x *= 0xff51afd7ed558ccd
		x ^= x >> 29
	}
	return x
}

// Spin calls Mix until d has passed and returns the last value.
func Spin(d time.Duration) uint64 {
	var x uint64 = 1
	for start := time.Now(); time.Since(start) < d; {
		for i := 0; i < 4096; i++ {
			x = Mix(x + uint64(i))
		}
	}
	return x
}
