package compare

import (
	"context"
	"fmt"

	"github.com/flameox/flameox/pkg/analysis"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/query"
	"github.com/flameox/flameox/pkg/workspace"
)

// ProfileTop is how many changed functions a comparison shows.
const ProfileTop = 10

// maxProfileRuns bounds the runs whose profiles a comparison reads a
// side: a comparison is a read that should answer in seconds, and merging
// many large profiles does not (docs/performance.md, "Profile changes");
// analysis.DiffMerged itself takes up to analysis.MaxMergedInputs.
const maxProfileRuns = 16

// ProfileSide counts one side's profiles.
type ProfileSide struct {
	// Runs counts the side's eligible runs whose profiles were looked for
	// (at most maxProfileRuns); WithProfile those that carry one; Merged
	// those merged (a profile without the sample type is not).
	Runs        int   `json:"runs"`
	WithProfile int   `json:"runs_with_profile"`
	Merged      int   `json:"profiles_merged"`
	Total       int64 `json:"total"`
	// DurationNanos is the merged profiles' summed duration, when every
	// one records it.
	DurationNanos int64 `json:"duration_ns,omitempty"`
}

// ProfileChanges are the top function changes between two run sets'
// profiles: every eligible run's profile of a side merged, the
// candidate's minus the baseline's, ranked as
// `go tool pprof -top -diff_base=BASE C1 C2 …` ranks them (BASE the
// baseline's profiles merged).
type ProfileChanges struct {
	SampleType string      `json:"sample_type"`
	Unit       string      `json:"unit"`
	OutputUnit string      `json:"output_unit"`
	Method     string      `json:"method"`
	Baseline   ProfileSide `json:"baseline"`
	Candidate  ProfileSide `json:"candidate"`
	// TotalDelta is the candidate's total minus the baseline's;
	// ShownDelta the sum of the rows' self deltas.
	TotalDelta int64 `json:"total_delta"`
	ShownDelta int64 `json:"shown_delta"`
	// Changed counts every changed function (Added new in the candidate,
	// Removed gone from it); Rows are the top ProfileTop by |self delta|.
	Changed     int64              `json:"changed"`
	Added       int                `json:"added"`
	Removed     int                `json:"removed"`
	Rows        []analysis.DiffRow `json:"rows"`
	Limitations []string           `json:"limitations"`
}

// Format is the value format of the changes' values.
func (pc *ProfileChanges) Format() analysis.ValueFormat {
	return analysis.DeltaFormat(pc.Unit, pc.OutputUnit)
}

// profileRuns is a side's eligible runs, in member order (block, run),
// at most maxProfileRuns; n counts them all.
func profileRuns(e *query.SetEvidence) (ids []string, n int) {
	for _, m := range e.Members {
		if !eligible(m) {
			continue
		}
		if n++; len(ids) < maxProfileRuns {
			ids = append(ids, m.RunID)
		}
	}
	return ids, n
}

// metricSampleType is the profile sample type whose stacks hold what a
// memory metric counts (memray's and heaptrack's retained stacks, their
// allocation counts); other metrics read the profiles' default type.
var metricSampleType = map[string]string{
	"memory.retained_end":          "retained_space",
	"memory.leaked":                "retained_space",
	"memory.retained_allocations":  "retained_objects",
	"memory.allocations":           "alloc_objects",
	"memory.temporary_allocations": "temporary_objects",
}

// profileChanges sets c.ProfileChanges when both sides carry profiles of
// a compatible sample type; when only one does, or the profiles cannot be
// compared, it says so in c.Limitations. A run set without profiles adds
// nothing. Only a workspace that cannot be read is an error: a profile
// that cannot be read is a limitation.
func (c *Comparison) profileChanges(ctx context.Context, ws *workspace.Workspace, base, cand *query.SetEvidence) error {
	bids, bn := profileRuns(base)
	cids, cn := profileRuns(cand)
	if len(bids) == 0 || len(cids) == 0 {
		return nil
	}
	var d *analysis.MergedDiff
	var err error
	// A memory metric reads the stacks that hold what it counts (the
	// bytes retained at exit, not the peak's), when both sides carry them.
	if st := metricSampleType[c.Metric]; st != "" {
		d, err = analysis.DiffMerged(ctx, ws, analysis.MergedDiffRequest{Base: bids, Candidate: cids, Limit: ProfileTop, SampleType: st})
		if err != nil || !d.Compared {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			d, err = nil, nil
		}
	}
	if d == nil {
		d, err = analysis.DiffMerged(ctx, ws, analysis.MergedDiffRequest{Base: bids, Candidate: cids, Limit: ProfileTop})
	}
	if err != nil {
		if ctx.Err() == nil && (fault.Is(err, fault.QueryBudgetExceeded) || fault.Is(err, fault.InvalidArguments) || fault.Is(err, fault.NotFound)) {
			c.Limitations = append(c.Limitations, "profile changes are not shown: "+fault.As(err).Message)
			return nil
		}
		return err
	}
	side := func(s analysis.MergedSide) ProfileSide {
		return ProfileSide{Runs: s.Inputs, WithProfile: s.Inputs - len(s.NoProfile), Merged: len(s.Sources),
			Total: s.SampleType.Total, DurationNanos: s.DurationNanos}
	}
	b, k := side(d.Base), side(d.Candidate)
	if !d.Compared {
		switch {
		case b.WithProfile == 0 && k.WithProfile == 0:
			// Neither side profiled: nothing to say.
		case b.WithProfile == 0 || k.WithProfile == 0:
			has, lacks, n := "baseline", "candidate", b
			if b.WithProfile == 0 {
				has, lacks, n = "candidate", "baseline", k
			}
			c.Limitations = append(c.Limitations, fmt.Sprintf("only the %s's runs carry profiles (%d of %d eligible runs read), the %s's none: no profile changes are shown",
				has, n.WithProfile, n.Runs, lacks))
		default:
			c.Limitations = append(c.Limitations, "both sides carry profiles, but no profile of one side has a sample type compatible with the other's: no profile changes are shown")
		}
		return nil
	}
	pc := &ProfileChanges{SampleType: d.Base.SampleType.Type, Unit: d.Base.SampleType.Unit, OutputUnit: d.OutputUnit, Method: d.Method,
		Baseline: b, Candidate: k, TotalDelta: d.TotalDelta, ShownDelta: d.ShownDelta, Changed: d.Changed, Added: d.Added, Removed: d.Removed,
		Rows: d.Rows, Limitations: d.Limitations}
	for _, s := range []struct {
		name   string
		n, max int
	}{{"baseline", bn, len(bids)}, {"candidate", cn, len(cids)}} {
		if s.n > s.max {
			pc.Limitations = append(pc.Limitations, fmt.Sprintf("%s: the profiles of the first %d of %d eligible runs (by block) are merged", s.name, s.max, s.n))
		}
	}
	c.ProfileChanges = pc
	return nil
}
