package capture

import (
	"testing"

	"github.com/flameox/flameox/pkg/contain"
	"github.com/flameox/flameox/pkg/workload"
)

// TestWorkloadDepth: the workload is below the collector exactly when the
// adapter's argv is a prefix followed by the approved workload argv, and
// two levels lower again under Bubblewrap.
func TestWorkloadDepth(t *testing.T) {
	py := []string{"/usr/bin/python3", "x.py"}
	pyspy := append([]string{"/usr/bin/py-spy", "record", "--"}, py...)
	bwrap := func(a []string) []string { return append([]string{"/usr/bin/bwrap", "--unshare-pid", "--"}, a...) }
	for _, tc := range []struct {
		name      string
		argv      []string
		contained bool
		want      int
	}{
		{"process", py, false, 0},
		{"py-spy", pyspy, false, 1},
		{"process contained", py, true, 2},
		{"py-spy contained", pyspy, true, 3},
		{"flags inserted (gotest)", []string{"/usr/bin/python3", "-X", "x.py"}, false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &prepared{inst: &workload.Instance{Argv: []string{"python3", "x.py"}},
				plan: &CapturePlan{Executable: "/usr/bin/python3", Argv: tc.argv, Wrapped: tc.argv}}
			if tc.contained {
				p.plan.Containment.State = contain.Contained
				p.plan.Wrapped = bwrap(tc.argv)
			}
			if got := workloadDepth(p); got != tc.want {
				t.Errorf("depth %d, want %d", got, tc.want)
			}
		})
	}
}
