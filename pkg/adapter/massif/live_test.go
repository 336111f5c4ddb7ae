package massif

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/flameox/flameox/pkg/adapter/adaptertest"
	"github.com/flameox/flameox/pkg/adapter/process"
	"github.com/flameox/flameox/pkg/config"
	"github.com/flameox/flameox/pkg/internal/testenv"
	"github.com/flameox/flameox/pkg/run"
)

// growC keeps 8 MiB allocated by retain (in 64 KiB blocks), after a
// temporary 1 MiB from scratch, then frees one block: massif marks a
// peak only when the heap shrinks, so that free makes the 8 MiB the peak.
const growC = `#include <stdlib.h>
#include <string.h>
static void *keep[128];
__attribute__((noinline)) void retain(int i) { keep[i] = malloc(64 << 10); memset(keep[i], 1, 64 << 10); }
__attribute__((noinline)) void scratch(void) { char *p = malloc(1 << 20); memset(p, 2, 1 << 20); free(p); }
int main(void) { scratch(); for (int i = 0; i < 128; i++) retain(i); free(keep[0]); return keep[3] == 0; }
`

// TestLiveCapture compiles a tiny C allocator, captures it under
// `valgrind --tool=massif` through the real capture service and broker,
// and checks the registered massif.out: its peak heap holds the 8 MiB
// retain allocated, under retain's frame.
func TestLiveCapture(t *testing.T) {
	if testing.Short() {
		t.Skip("live capture")
	}
	a := New()
	adaptertest.Usable(t, a.Probe(context.Background()))
	cc := testenv.LookPath(t, "cc")
	project := t.TempDir()
	src := filepath.Join(project, "grow.c")
	os.WriteFile(src, []byte(growC), 0o644)
	if out, err := exec.Command(cc, "-g", "-O0", "-o", filepath.Join(project, "grow"), src).CombinedOutput(); err != nil {
		t.Fatalf("cc: %v\n%s", err, out)
	}
	toml := "schema_version = 1\n[workloads.grow]\nargv = [\"./grow\"]\ntimeout_seconds = 120\n"
	l := adaptertest.Capture(t, project, toml, "grow", Name, process.New(), a)
	r := l.Result
	if r.Run.ExecutionStatus != run.ExecSucceeded {
		t.Fatalf("run %s: %+v\nstderr:\n%s", r.Run.ExecutionStatus, r.Run.Error, l.Stderr())
	}
	reg, ok := l.Regs[OutFile]
	if !ok || reg.Role != "primary" || reg.Producer != Name {
		t.Fatalf("massif.out is not registered: %+v", r.Run.Artifacts)
	}
	f, err := os.Open(l.Path(reg))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := Parse(f, config.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	if m.Peak < 0 || m.TreeOf != m.Peak {
		t.Fatalf("no peak snapshot: %+v", m.Snapshots)
	}
	p := m.Snapshots[m.TreeOf]
	if p.Heap < 128*64<<10 {
		t.Fatalf("peak heap %d, want at least %d", p.Heap, 128*64<<10)
	}
	var retain int64
	for _, n := range m.Tree {
		if n.Function == "retain" && n.Parent == 0 {
			retain += n.Bytes
		}
	}
	if retain != 128*64<<10 {
		t.Fatalf("retain holds %d bytes at the peak, want %d; tree %+v", retain, 128*64<<10, m.Tree)
	}
	t.Logf("valgrind %s: peak heap %d B at snapshot %d", r.Plan.Capability.Version, p.Heap, p.Num)
}
