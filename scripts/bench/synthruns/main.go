// Command synthruns fills a workspace with N synthetic import runs (each
// with a registration of one small shared object) and publishes them, for
// status and listing benchmarks. It writes real manifests through pkg/run
// and publishes through pkg/publish, so what it makes is exactly what
// imports make.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/flameox/flameox/pkg/artifact"
	"github.com/flameox/flameox/pkg/broker"
	"github.com/flameox/flameox/pkg/capture"
	"github.com/flameox/flameox/pkg/publish"
	"github.com/flameox/flameox/pkg/run"
	"github.com/flameox/flameox/pkg/workspace"
	"github.com/google/uuid"
)

func main() {
	wsDir := flag.String("workspace", "", "workspace (.diagnostics) to fill")
	n := flag.Int("runs", 10000, "number of runs")
	flag.Parse()
	if err := fill(*wsDir, *n); err != nil {
		fmt.Fprintln(os.Stderr, "synthruns:", err)
		os.Exit(1)
	}
}

func fill(dir string, n int) error {
	ws, err := workspace.Open(dir)
	if err != nil {
		return err
	}
	ctx := context.Background()
	// One real import provides the object and the identity records.
	seed, err := os.CreateTemp("", "synthruns-*.txt")
	if err != nil {
		return err
	}
	seed.WriteString("synthetic evidence\n")
	seed.Close()
	defer os.Remove(seed.Name())
	svc := &capture.Service{WS: ws, Identity: &capture.IdentityCollector{Runner: broker.Default}}
	first, err := svc.Import(ctx, capture.ImportRequest{Path: seed.Name(), Kind: string(artifact.KindBenchmark)})
	if err != nil {
		return err
	}
	store := &run.Store{Root: ws.Root}
	start := time.Now()
	refs := []publish.RunRef{{RunID: first.Run.RunID, Revision: first.Run.Revision}}
	for i := 1; i < n; i++ {
		m := first.Run.Clone()
		m.RunID = run.NewID()
		m.Revision = 0
		m.CreatedAt = time.Now().UTC()
		m.UpdatedAt = m.CreatedAt
		reg := *first.Registration
		reg.RegistrationID = uuid.NewString()
		reg.RunID = m.RunID
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
	}
	// Publish in chunks of 10,000 runs, as a busy workspace would have.
	for len(refs) > 0 {
		n := min(len(refs), 10000)
		if _, err := (&publish.Publisher{WS: ws}).PublishRuns(ctx, refs[:n]); err != nil {
			return err
		}
		refs = refs[n:]
	}
	fmt.Fprintf(os.Stderr, "synthruns: %d runs in %s\n", n, time.Since(start).Round(time.Millisecond))
	return nil
}
