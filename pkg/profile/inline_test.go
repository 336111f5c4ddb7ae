package profile

import (
	"path/filepath"
	"testing"

	"github.com/flameox/flameox/pkg/profile/pproftest"
)

// TestTopInlineLabelsMatchGoToolPprof compares Top's "(inline)" and
// "(partial-inline)" labels with the real `go tool pprof -top` for every
// sample type of every pprof fixture (they hold both kinds).
func TestTopInlineLabelsMatchGoToolPprof(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.pb.gz")
	labelled := 0
	for _, file := range files {
		p := parseFile(t, file)
		for idx, st := range p.P.SampleType {
			t.Run(filepath.Base(file)+"/"+st.Type, func(t *testing.T) {
				want := pproftest.TopLabeled(t, file, st.Type, st.Unit)
				got := Top(p.P, idx, nil)
				if len(got) != len(want) {
					t.Fatalf("Top %d rows, pprof %d", len(got), len(want))
				}
				diffs := 0
				for i, w := range want {
					if w.Inline != "" {
						labelled++
					}
					if got[i].Function != w.Name || got[i].Inline != w.Inline {
						if diffs++; diffs <= 5 {
							t.Errorf("row %d: Top %q (%s), pprof %q (%s)", i, got[i].Function, got[i].Inline, w.Name, w.Inline)
						}
					}
				}
			})
		}
	}
	if labelled == 0 {
		t.Fatal("no fixture row carries an inline label: nothing was compared")
	}
}
