package spin

import (
	"flag"
	"testing"
	"time"
)

var seconds = flag.Int("seconds", 1, "how long TestSpin burns CPU")

var sink uint64

// TestSpin keeps one core busy for -seconds, so that a capture lasts as
// long as the test that runs it needs.
func TestSpin(t *testing.T) {
	sink = Spin(time.Duration(*seconds) * time.Second)
}

// TestBroken fails with a marker the capture's output tail must carry.
func TestBroken(t *testing.T) {
	t.Fatal("spin: the marker of a failing test")
}
