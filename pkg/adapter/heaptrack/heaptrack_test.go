package heaptrack

import (
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
