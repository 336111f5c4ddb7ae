package corpus

import "testing"

// BenchmarkEnsureAnchors is `flameox init`'s anchor step: every table's
// empty Parquet file rendered and written into a new workspace.
func BenchmarkEnsureAnchors(b *testing.B) {
	for b.Loop() {
		b.StopTimer()
		root := b.TempDir()
		b.StartTimer()
		if err := EnsureAnchors(root); err != nil {
			b.Fatal(err)
		}
	}
}
