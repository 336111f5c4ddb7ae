package analysis

import (
	"bytes"
	"context"
	"fmt"

	"github.com/flameox/flameox/pkg/durable"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/profile"
	"github.com/flameox/flameox/pkg/workspace"
)

// OpFlameGraph is the flame graph's operation name.
const OpFlameGraph = "render.flamegraph"

// FlameGraphRequest asks for a profile's flame graph as an SVG file.
type FlameGraphRequest struct {
	Input      string `json:"input" jsonschema:"run id (its profile) or profile artifact id"`
	Output     string `json:"output" jsonschema:"SVG file to write (relative to the project root)"`
	SampleType string `json:"sample_type,omitempty" jsonschema:"sample type (default: the profile's default)"`
	Icicle     bool   `json:"icicle,omitempty" jsonschema:"root at the top"`
	Width      int    `json:"width,omitempty" jsonschema:"pixels (default 1200)"`
	// Diff is a base run or artifact: the picture is Input's, coloured red
	// where it grew from Diff and blue where it shrank.
	Diff string `json:"diff,omitempty" jsonschema:"base run or artifact: colour by change from it"`
}

// FlameGraphResult says what was drawn and where.
type FlameGraphResult struct {
	SchemaVersion int    `json:"schema_version"`
	Operation     string `json:"operation"`
	Path          string `json:"path"`
	Bytes         int64  `json:"bytes"`
	Source        Source `json:"source"`
	SampleType    string `json:"sample_type"`
	Unit          string `json:"unit"`
	profile.FlameStats
	Limitations []string `json:"limitations"`
}

// FlameGraph draws a published profile (its native artifact, parsed as
// extraction parsed it) as a self-contained SVG flame graph with search
// and click-to-zoom, and writes it to Output (relative to base).
func FlameGraph(ctx context.Context, ws *workspace.Workspace, req FlameGraphRequest, base string) (*FlameGraphResult, error) {
	if req.Width != 0 && (req.Width < 200 || req.Width > 20000) {
		return nil, fault.New(fault.InvalidArguments, "--width %d is not between 200 and 20000 pixels", req.Width).With("field", "width")
	}
	out, err := outputPath(ws, req.Output, base)
	if err != nil {
		return nil, err
	}
	prof, src, err := nativeProfile(ctx, ws, req.Input)
	if err != nil {
		return nil, err
	}
	if req.Diff == "" {
		return drawFlameGraph(out, prof, src, req.SampleType, req, nil)
	}
	bprof, bsrc, err := nativeProfile(ctx, ws, req.Diff)
	if err != nil {
		return nil, err
	}
	return drawFlameGraph(out, prof, src, req.SampleType, req, &diffBase{prof: bprof, src: bsrc})
}

type diffBase struct {
	prof *profile.Profile
	src  Source
}

// drawFlameGraph draws prof's sample type as an SVG flame graph into out.
func drawFlameGraph(out string, prof *profile.Profile, src Source, sampleType string, req FlameGraphRequest, diff *diffBase) (*FlameGraphResult, error) {
	si, err := profile.SampleIndex(prof.P, sampleType)
	if err != nil {
		return nil, fault.Wrap(fault.InvalidArguments, err, "profile %s", src.ArtifactID).With("field", "sample_type")
	}
	st := prof.P.SampleType[si]
	root, skipped := profile.FlameTree(prof.P, si)
	title, subtitle := "Flame Graph", src.DisplayName+" · "+st.Type+" ("+st.Unit+")"
	var lim []string
	if diff != nil {
		bi, err := profile.SampleIndex(diff.prof.P, st.Type)
		if err != nil {
			return nil, fault.Wrap(fault.InvalidArguments, err, "the base profile %s", diff.src.ArtifactID).With("field", "diff")
		}
		if bu := diff.prof.P.SampleType[bi].Unit; bu != st.Unit {
			return nil, fault.New(fault.InvalidArguments, "the base's %s is in %s, the candidate's in %s", st.Type, bu, st.Unit).With("field", "diff")
		}
		broot, _ := profile.FlameTree(diff.prof.P, bi)
		gone := profile.FlameDiff(broot, root)
		title = "Differential Flame Graph"
		subtitle = src.DisplayName + " against " + diff.src.DisplayName + " · " + st.Type + " (" + st.Unit + "): red grew, blue shrank"
		lim = append(lim, fmt.Sprintf("Widths are the candidate's; colours are each frame's change from the base along the same frames from the root. %d %s of the base ran in stacks the candidate does not have and are not drawn.", gone, st.Unit))
	}
	var buf bytes.Buffer
	stats, err := profile.WriteFlameGraph(&buf, root, profile.FlameOptions{Title: title, Icicle: req.Icicle, Width: req.Width, Unit: st.Unit,
		Subtitle: subtitle})
	if err != nil {
		return nil, fault.Wrap(fault.InternalError, err, "draw the flame graph")
	}
	stats.Skipped = skipped
	if err := durable.WriteFile(out, buf.Bytes(), 0o644); err != nil {
		return nil, fault.Wrap(fault.InvalidArguments, err, "write %s", out).With("field", "output")
	}
	res := &FlameGraphResult{SchemaVersion: 1, Operation: OpFlameGraph, Path: out, Bytes: int64(buf.Len()), Source: src,
		SampleType: st.Type, Unit: st.Unit, FlameStats: stats, Limitations: append([]string{}, prof.Limitations...)}
	res.Limitations = append(res.Limitations, lim...)
	res.Limitations = append(res.Limitations, "Stacks with the same frames from the root are merged, as FlameGraph.pl merges them; frames narrower than 0.1 px are left out (their time stays in their parent's); x order is by value, not time.")
	if skipped > 0 {
		res.Limitations = append(res.Limitations, "samples with a zero or negative value are not drawn")
	}
	return res, nil
}
