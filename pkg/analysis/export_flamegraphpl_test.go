package analysis

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/flameox/flameox/pkg/internal/testenv"
	"github.com/flameox/flameox/pkg/profile"
)

// TestCollapsedFeedsFlameGraphPl: FlameGraph.pl (the copy
// scripts/install-collectors.sh pins, or FLAMEGRAPH_DIR) reads the
// collapsed export of every fixture without ignoring a line, and its root
// frame holds the profile's total.
func TestCollapsedFeedsFlameGraphPl(t *testing.T) {
	dir := os.Getenv("FLAMEGRAPH_DIR")
	if dir == "" {
		dir = "/usr/local/share/FlameGraph"
	}
	script := filepath.Join(dir, "flamegraph.pl")
	if _, err := os.Stat(script); err != nil {
		testenv.Unable(t, "FlameGraph.pl", "missing", "%s", script)
	}
	perl, err := exec.LookPath("perl")
	if err != nil {
		testenv.Unable(t, "perl", "missing", "%v", err)
	}
	ws, runs := importProfiles(t, exportFixtures...)
	out := t.TempDir()
	root := regexp.MustCompile(`<title>all \(([0-9,]+) [a-z]+, 100%\)</title>`)
	for i, fx := range exportFixtures {
		t.Run(filepath.Base(fx), func(t *testing.T) {
			orig := parseFile(t, fx).P
			si, _ := profile.SampleIndex(orig, "")
			total, _ := profile.Totals(orig, si)
			col := filepath.Join(out, filepath.Base(fx)+".collapsed")
			if _, err := Export(context.Background(), ws, ExportRequest{Input: runs[i], Format: "collapsed", Output: col}, out); err != nil {
				t.Fatal(err)
			}
			var stdout, stderr bytes.Buffer
			cmd := exec.Command(perl, script, col)
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("flamegraph.pl: %v\n%s", err, stderr.String())
			}
			if s := stderr.String(); strings.Contains(s, "Ignored") || strings.Contains(s, "ERROR") {
				t.Fatalf("flamegraph.pl did not read every line: %s", s)
			}
			m := root.FindSubmatch(stdout.Bytes())
			if m == nil {
				t.Fatalf("no root frame in flamegraph.pl's SVG (%d bytes)", stdout.Len())
			}
			got, _ := strconv.ParseInt(strings.ReplaceAll(string(m[1]), ",", ""), 10, 64)
			if got != total {
				t.Errorf("flamegraph.pl's root holds %d, the profile %d", got, total)
			}
		})
	}
}
