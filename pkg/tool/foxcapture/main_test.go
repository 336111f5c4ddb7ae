package foxcapture_test

import (
	"bytes"
	"os"
	"os/exec"
	"testing"

	"github.com/flameox/flameox/pkg/cli"
	"github.com/flameox/flameox/pkg/tool/flameox"
	"github.com/flameox/flameox/pkg/tool/foxcapture"
)

// TestMain lets the test binary act as flameox or fox-capture in a child
// process, so these tests run the real tools as processes (cmd/ holds no
// logic: each main is one cli.Main call) without a separate build.
func TestMain(m *testing.M) {
	switch os.Getenv("FLAMEOX_TEST_AS") {
	case "flameox":
		os.Exit(cli.Main("flameox", flameox.Run))
	case "fox-capture":
		os.Exit(cli.Main("fox-capture", foxcapture.Run))
	}
	os.Exit(m.Run())
}

type result struct {
	stdout, stderr string
	exit           int
}

// tool runs the test binary as the named tool in dir.
func tool(t *testing.T, name, dir string, args ...string) result {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "FLAMEOX_TEST_AS="+name)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := result{stdout: out.String(), stderr: errb.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.exit = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return r
}

func mustOK(t *testing.T, r result) result {
	t.Helper()
	if r.exit != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", r.exit, r.stdout, r.stderr)
	}
	return r
}
