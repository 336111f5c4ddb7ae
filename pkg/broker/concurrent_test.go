package broker

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"
)

// TestConcurrentRunsKeepTheirChildren: commands started at once from many
// goroutines (as source identity starts its git probes) all run to their
// end. A run that ends scans flameox's children for its orphans; a child
// another goroutine has just forked but not yet registered as a run in
// progress must not look like one, or the finished run kills it.
func TestConcurrentRunsKeepTheirChildren(t *testing.T) {
	const width, each = 6, 40
	var wg sync.WaitGroup
	bad := make(chan string, width*each)
	for range width {
		wg.Go(func() {
			// Quick runs back to back: every end scans while other
			// goroutines are forking.
			for range each {
				res, err := Run(context.Background(), Spec{Argv: []string{"/bin/true"}, Timeout: 30 * time.Second, Grace: time.Second})
				switch {
				case err != nil:
					bad <- err.Error()
				case res.ExitCode != 0 || res.Signal != "":
					bad <- fmt.Sprintf("exit %d signal %q", res.ExitCode, res.Signal)
				}
			}
		})
	}
	wg.Wait()
	close(bad)
	var got []string
	for b := range bad {
		got = append(got, b)
	}
	if len(got) > 0 {
		t.Fatalf("%d of %d runs did not end on their own (another run took them for its orphans): %v", len(got), width*each, got)
	}
}
