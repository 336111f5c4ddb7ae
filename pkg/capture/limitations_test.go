package capture

import (
	"strings"
	"testing"

	"github.com/flameox/flameox/pkg/broker"
	"github.com/flameox/flameox/pkg/run"
)

// TestUsageLimitations: each way a resource figure can be inexact gets its
// limitation, and exact figures get none (the capture_gotest script scrubs
// this line, whose presence depends on the machine).
func TestUsageLimitations(t *testing.T) {
	collector := &run.Usage{Processes: []string{"py-spy"}}
	tests := []struct {
		name string
		p    *run.ProcessInfo
		want []string // substrings, one per limitation, in order
	}{
		{"nil", nil, nil},
		{"wait4", &run.ProcessInfo{PeakRSSSource: broker.RSSWait4}, nil},
		{"sampled", &run.ProcessInfo{PeakRSSSource: broker.RSSSampled}, []string{"Peak RSS was sampled from /proc"}},
		{"sampled under a collector", &run.ProcessInfo{PeakRSSSource: broker.RSSSampled, Collector: collector},
			[]string{"the collector py-spy reaps it"}},
		{"unknown", &run.ProcessInfo{PeakRSSSource: broker.RSSUnknown}, []string{"Peak RSS is unknown"}},
		{"cpu sampled", &run.ProcessInfo{PeakRSSSource: broker.RSSWait4, CPUSource: broker.CPUSampled},
			[]string{"CPU time was sampled from /proc"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := usageLimitations(tt.p)
			if len(got) != len(tt.want) {
				t.Fatalf("got %d limitations %q, want %d", len(got), got, len(tt.want))
			}
			for i, w := range tt.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("limitation %d = %q, want it to say %q", i, got[i], w)
				}
			}
		})
	}
}
