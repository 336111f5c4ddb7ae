package stacks_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/flameox/flameox/pkg/cli"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/internal/testenv"
	"github.com/flameox/flameox/pkg/profile/bombtest"
	"github.com/flameox/flameox/pkg/tool/flameox"
)

// TestMain lets the test binary act as flameox in a child process, so the
// bomb corpus goes through the real `flameox import` without a separate
// build.
func TestMain(m *testing.M) {
	if os.Getenv("FLAMEOX_BOMB_TEST_AS") == "flameox" {
		os.Exit(cli.Main("flameox", flameox.Run))
	}
	os.Exit(m.Run())
}

// addressSpace is the bound each import runs under (prlimit --as). About
// 2 GiB of it is taken before any input is read (DuckDB's threads and
// glibc's per-thread malloc arenas reserve address space they never
// touch); the rest is what decoding may use. The large cases, which read
// a full 1 GiB (speedscope JSON is held whole) or import the
// 10^6-location profile, run under largeAddressSpace.
const (
	addressSpace      = 4 << 30
	largeAddressSpace = 6 << 30
)

type importResult struct {
	exit           int
	stdout, stderr string
}

// runFlameox runs the test binary as flameox in dir under the
// address-space bound as.
func runFlameox(t *testing.T, dir string, as int64, args ...string) importResult {
	t.Helper()
	cmd := exec.Command("prlimit", append([]string{fmt.Sprintf("--as=%d", as), "--", os.Args[0]}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "FLAMEOX_BOMB_TEST_AS=flameox")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := importResult{stdout: out.String(), stderr: errb.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.exit = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return r
}

// envelope is a failed command's --json output.
type envelope struct {
	OK    *bool `json:"ok"`
	Error *struct {
		Code    string            `json:"code"`
		Details map[string]string `json:"details"`
	} `json:"error"`
}

// TestImportBombCorpus imports every file of the bomb corpus with the real
// `flameox import` under an address-space bound: every one must end in a
// structured error (ARTIFACT_TOO_LARGE naming its limit, for the bombs) or
// a correct result, never a crash. Before [limits], the first file killed
// the import with "fatal error: out of memory" (exit 2, no JSON).
func TestImportBombCorpus(t *testing.T) {
	testenv.LookPath(t, "prlimit") // util-linux
	files := t.TempDir()
	cases, err := bombtest.Write(files, testing.Short())
	if err != nil {
		t.Fatal(err)
	}
	project := t.TempDir()
	if r := runFlameox(t, project, addressSpace, "init"); r.exit != 0 {
		t.Fatalf("init: exit %d: %s", r.exit, r.stderr)
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			as := int64(addressSpace)
			if c.Large {
				as = largeAddressSpace
			}
			r := runFlameox(t, project, as, "import", "--json", c.File)
			if strings.Contains(r.stderr, "fatal error") || strings.Contains(r.stderr, "goroutine ") || strings.Contains(r.stderr, "panic:") {
				t.Fatalf("crashed (exit %d): %.2000s", r.exit, r.stderr)
			}
			var env envelope
			if err := json.Unmarshal([]byte(r.stdout), &env); err != nil {
				t.Fatalf("exit %d, stdout is not JSON (%v): %.500s\nstderr: %.2000s", r.exit, err, r.stdout, r.stderr)
			}
			failed := env.OK != nil && !*env.OK
			switch {
			case failed && env.Error == nil:
				t.Fatalf("ok=false without an error: %.500s", r.stdout)
			case failed && r.exit != fault.New(fault.Code(env.Error.Code), "").ExitCode():
				t.Fatalf("exit %d for %s, documented exit is %d", r.exit, env.Error.Code, fault.New(fault.Code(env.Error.Code), "").ExitCode())
			case failed && env.Error.Code == string(fault.InternalError):
				t.Fatalf("INTERNAL_ERROR: %.1000s", r.stdout)
			case !failed && r.exit != 0:
				t.Fatalf("exit %d with a result: %.500s", r.exit, r.stdout)
			}
			switch c.Want {
			case bombtest.Refused:
				if !failed || env.Error.Code != string(fault.ArtifactTooLarge) {
					t.Fatalf("want ARTIFACT_TOO_LARGE, got exit %d: %.1000s", r.exit, r.stdout)
				}
				d := env.Error.Details
				if d["limit_key"] != "limits."+c.Limit || d["limit"] == "" || d["observed"] == "" {
					t.Fatalf("details do not name limits.%s, its value and the count: %v", c.Limit, d)
				}
			case bombtest.Imported:
				if failed {
					t.Fatalf("want a published run, got %+v", env.Error)
				}
				checkHotspots(t, project, as, r.stdout, c)
			}
		})
	}
}

// checkHotspots checks an imported case's hotspots: the frames on some
// stack and the first sample type's total, as the corpus computed them.
func checkHotspots(t *testing.T, project string, as int64, importOut string, c bombtest.Case) {
	t.Helper()
	var imp struct {
		ArtifactID string `json:"artifact_id"`
	}
	if err := json.Unmarshal([]byte(importOut), &imp); err != nil || imp.ArtifactID == "" {
		t.Fatalf("import result without artifact_id: %v", err)
	}
	r := runFlameox(t, project, as, "analyze", "hotspots", imp.ArtifactID, "--json")
	if r.exit != 0 {
		t.Fatalf("hotspots: exit %d: %.1000s", r.exit, r.stdout+r.stderr)
	}
	var h struct {
		Total      int `json:"total"`
		SampleType struct {
			Total int64 `json:"total"`
		} `json:"sample_type"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &h); err != nil {
		t.Fatal(err)
	}
	if h.Total != c.Frames || h.SampleType.Total != c.Total {
		t.Fatalf("hotspots: %d frames, total %d; want %d frames, total %d", h.Total, h.SampleType.Total, c.Frames, c.Total)
	}
}
