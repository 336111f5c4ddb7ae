package heaptrack

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/flameox/flameox/pkg/adapter"
	"github.com/flameox/flameox/pkg/adapter/adaptertest"
)

// TestConformance runs the adapter contract with testdata's captures.
func TestConformance(t *testing.T) {
	decl := adapter.ArtifactDecl{RelPath: DataFile, Kind: KindMemory, Role: "primary", MediaType: MediaType, Required: true}
	adaptertest.Run(t, New(),
		adaptertest.Fixture{Path: "testdata/heaptrack.alloc.zst", Decl: decl},
		adaptertest.Fixture{Path: "testdata/heaptrack.alloc.gz", Decl: decl})
}

// TestPlanSuffix: heaptrack writes .zst only when the zstd command is on
// PATH, so the plan declares .gz without it.
func TestPlanSuffix(t *testing.T) {
	for _, c := range []struct {
		zstd bool
		want string
	}{{true, DataFile}, {false, DataFileGzip}} {
		a := &Adapter{Sys: RealSystem()}
		a.Sys.LookPath = func(f string) (string, error) {
			if f == "zstd" && !c.zstd {
				return "", exec.ErrNotFound
			}
			return "/usr/bin/" + f, nil
		}
		p, err := a.Plan(adapter.PlanRequest{OutputDir: "/out", Argv: []string{"/bin/ls"}})
		if err != nil {
			t.Fatal(err)
		}
		if p.Artifacts[0].RelPath != c.want || strings.Join(p.Argv, " ") != "/usr/bin/heaptrack -o /out/heaptrack.flameox /bin/ls" {
			t.Errorf("zstd=%v: plan %q declares %s, want %s", c.zstd, p.Argv, p.Artifacts[0].RelPath, c.want)
		}
	}
	if _, err := New().Plan(adapter.PlanRequest{OutputDir: "/out", Argv: []string{"/bin/ls"}, Options: map[string]string{"x": "1"}}); err == nil {
		t.Error("an unknown option is accepted")
	}
}
