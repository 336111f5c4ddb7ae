// Package capturetest builds published workspaces for tests: files
// imported as runs and published, as `flameox import` does, so a test of
// an analysis or a comparison reads real extracted evidence.
package capturetest

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/flameox/flameox/pkg/adapter/all"
	"github.com/flameox/flameox/pkg/broker"
	"github.com/flameox/flameox/pkg/capture"
	"github.com/flameox/flameox/pkg/publish"
	"github.com/flameox/flameox/pkg/workspace"
)

// Workspace initializes a fresh workspace in a temporary folder.
func Workspace(t testing.TB) *workspace.Workspace {
	t.Helper()
	res, err := workspace.Init(context.Background(), t.TempDir(), time.Now(), publish.FirstCommit)
	if err != nil {
		t.Fatal(err)
	}
	return res.Workspace
}

// Import imports each file as one run of kind ("" detects it from the
// content) and publishes them all in one generation; it returns the run
// ids in file order.
func Import(t testing.TB, ws *workspace.Workspace, kind string, files ...string) []string {
	t.Helper()
	ctx := context.Background()
	svc := capture.New(ws, capture.Options{Identity: &capture.IdentityCollector{Runner: broker.Default}})
	var refs []publish.RunRef
	var ids []string
	for _, f := range files {
		abs, err := filepath.Abs(f)
		if err != nil {
			t.Fatal(err)
		}
		imp, err := svc.Import(ctx, capture.ImportRequest{Path: abs, Kind: kind})
		if err != nil {
			t.Fatal(err)
		}
		refs = append(refs, publish.RunRef{RunID: imp.Run.RunID, Revision: imp.Run.Revision})
		ids = append(ids, imp.Run.RunID)
	}
	pub := publish.New(ws, publish.Options{Extractors: all.Registry().Extractors()})
	if _, err := pub.PublishRuns(ctx, refs); err != nil {
		t.Fatal(err)
	}
	return ids
}

// Published is Import into a fresh workspace.
func Published(t testing.TB, kind string, files ...string) (*workspace.Workspace, []string) {
	t.Helper()
	ws := Workspace(t)
	return ws, Import(t, ws, kind, files...)
}
