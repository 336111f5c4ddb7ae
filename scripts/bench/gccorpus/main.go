// Command gccorpus fills a workspace with N import runs, each registering
// its own small object, published through pkg/publish in chunks of C runs
// with automatic compaction on (as flameox publishes), so the workspace
// holds what a long-lived one does: N run directories, N objects, many
// superseded generations and commits. Then it times retention.MakePlan
// (gc's dry run) in process; scripts/bench/gc-100k.sh times the binary.
//
//	go run ./scripts/bench/gccorpus -workspace DIR/.diagnostics -runs 100000
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"sort"
	"strconv"
	"time"

	"github.com/flameox/flameox/pkg/artifact"
	"github.com/flameox/flameox/pkg/broker"
	"github.com/flameox/flameox/pkg/capture"
	"github.com/flameox/flameox/pkg/lock"
	"github.com/flameox/flameox/pkg/publish"
	"github.com/flameox/flameox/pkg/retention"
	"github.com/flameox/flameox/pkg/run"
	"github.com/flameox/flameox/pkg/workspace"
	"github.com/google/uuid"
)

func main() {
	wsDir := flag.String("workspace", "", "workspace (.diagnostics) to fill")
	n := flag.Int("runs", 100000, "number of runs")
	chunk := flag.Int("chunk", 10, "runs per publication")
	planOnly := flag.Bool("plan-only", false, "only time the dry run on the workspace as it is")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the timed dry runs")
	flag.Parse()
	if *planOnly {
		ws, err := workspace.Open(*wsDir)
		if err == nil {
			err = timePlan(ws, *cpuprofile)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "gccorpus:", err)
			os.Exit(1)
		}
		return
	}
	if err := fill(*wsDir, *n, *chunk); err != nil {
		fmt.Fprintln(os.Stderr, "gccorpus:", err)
		os.Exit(1)
	}
}

func fill(dir string, n, chunk int) error {
	ws, err := workspace.Open(dir)
	if err != nil {
		return err
	}
	ctx := context.Background()
	tmp, err := os.MkdirTemp("", "gccorpus-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	seed := filepath.Join(tmp, "seed.txt")
	os.WriteFile(seed, []byte("synthetic evidence\n"), 0o644)
	// One real import provides the identity records and a template run.
	svc := &capture.Service{WS: ws, Identity: &capture.IdentityCollector{Runner: broker.Default}}
	first, err := svc.Import(ctx, capture.ImportRequest{Path: seed, Kind: string(artifact.KindMetadata)})
	if err != nil {
		return err
	}
	store := &run.Store{Root: ws.Root}
	objects := &artifact.Store{Root: ws.Root}
	pub := &publish.Publisher{WS: ws, AutoCompact: true}
	start := time.Now()
	refs := []publish.RunRef{{RunID: first.Run.RunID, Revision: first.Run.Revision}}
	src := filepath.Join(tmp, "payload.txt")
	flush := func() error {
		if len(refs) == 0 {
			return nil
		}
		_, err := pub.PublishRuns(ctx, refs)
		refs = refs[:0]
		return err
	}
	for i := 1; i < n; i++ {
		os.WriteFile(src, []byte("synthetic evidence "+strconv.Itoa(i)+"\n"), 0o644)
		staged, err := objects.StageImport(ctx, src, 1<<20)
		if err != nil {
			return err
		}
		var c artifact.Content
		err = ws.WithLock(ctx, ws.Locks(), lock.Write, func() error {
			var err error
			c, _, err = objects.Place(staged, ".txt")
			return err
		})
		staged.Discard()
		if err != nil {
			return err
		}
		m := first.Run.Clone()
		m.RunID = run.NewID()
		m.Revision = 0
		m.CreatedAt = time.Now().UTC()
		m.UpdatedAt = m.CreatedAt
		reg := *first.Registration
		reg.RegistrationID = uuid.NewString()
		reg.RunID = m.RunID
		reg.ArtifactID = c.ArtifactID
		reg.ByteLength = c.ByteLength
		reg.PayloadPath = artifact.ObjectRel(c.ArtifactID) + "/" + c.PayloadName
		m.CaptureStatus = run.CapturePending
		m.Artifacts = nil
		if err := store.Create(m); err != nil {
			return err
		}
		next := m.Clone()
		next.Revision = 1
		next.CaptureStatus = run.CaptureRegistered
		next.Artifacts = []run.Registration{reg}
		if err := store.Append(&m, next); err != nil {
			return err
		}
		refs = append(refs, publish.RunRef{RunID: next.RunID, Revision: next.Revision})
		if len(refs) >= chunk {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if err := flush(); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "gccorpus: %d runs in %s\n", n, time.Since(start).Round(time.Millisecond))
	return timePlan(ws, "")
}

// timePlan times five dry runs that list everything unreachable now.
func timePlan(ws *workspace.Workspace, cpuprofile string) error {
	ctx := context.Background()
	if cpuprofile != "" {
		f, err := os.Create(cpuprofile)
		if err != nil {
			return err
		}
		defer f.Close()
		pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
	}
	var err error
	zero := time.Duration(0)
	var times []time.Duration
	var p *retention.Plan
	for range 5 {
		t0 := time.Now()
		p, err = retention.MakePlan(ctx, ws, retention.Options{MinAge: &zero})
		if err != nil {
			return err
		}
		times = append(times, time.Since(t0))
	}
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	fmt.Printf("gc dry run in process: %s (median of 5); %d items, %d bytes; roots: %d commits, %d generations whole, %d manifests only, %d artifacts\n",
		times[2].Round(time.Millisecond), len(p.Items), p.TotalBytes, p.Roots.Commits, p.Roots.Generations, p.Roots.ManifestsOnly, p.Roots.Artifacts)
	for k, v := range p.ByKind {
		fmt.Printf("  %s: %d items, %d bytes\n", k, v.Items, v.Bytes)
	}
	return nil
}
