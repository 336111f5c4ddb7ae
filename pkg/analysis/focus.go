package analysis

import (
	"cmp"
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/flameox/flameox/pkg/artifact"
	"github.com/flameox/flameox/pkg/catalog"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/profile"
	"github.com/flameox/flameox/pkg/query"
	"github.com/flameox/flameox/pkg/workspace"
	gprof "github.com/google/pprof/profile"
)

// nameFilter is a hotspots request's --focus and --ignore, compiled.
type nameFilter struct {
	focus, ignore *regexp.Regexp
}

// compileFilter compiles focus and ignore (nil when both are empty).
func compileFilter(focus, ignore string) (*nameFilter, error) {
	if focus == "" && ignore == "" {
		return nil, nil
	}
	f := &nameFilter{}
	for _, x := range []struct {
		flag, re string
		to       **regexp.Regexp
	}{{"focus", focus, &f.focus}, {"ignore", ignore, &f.ignore}} {
		if x.re == "" {
			continue
		}
		re, err := regexp.Compile(x.re)
		if err != nil {
			return nil, fault.Wrap(fault.InvalidArguments, err, "--%s is not a regular expression", x.flag).With("parameter", x.flag).
				Fix("Use RE2 syntax, as go tool pprof does, e.g. --" + x.flag + " 'compress/flate\\.'")
		}
		*x.to = re
	}
	return f, nil
}

// qFrameIDs lists a generation's frames by the keys profile.Top names
// rows with, so that rows computed from the native profile carry the
// frame ids the drill-down takes.
var qFrameIDs = catalog.Query{Name: "analysis.frame_ids", Version: "1", SQL: `
SELECT frame_id, coalesce(function, ''), coalesce(module, ''), coalesce(start_line, 0), coalesce(symbolization, 'none') = 'none'
FROM frames WHERE artifact_id = $1 AND evidence_generation_id = $2`}

// filteredHotspots computes hotspots under --focus/--ignore from the
// native profile, exactly as `go tool pprof -top -focus=… -ignore=…`:
// the published tables hold per-function totals and only the heaviest
// stacks, and a filter needs every sample. The profile is parsed as its
// extraction parsed it (same parser, same limits), pprof's own
// FilterSamplesByName selects the samples (after the profile's drop
// frames, as pprof's fetch applies them first), and percentages stay
// relative to the whole profile's total, pprof's default. It returns the
// share of the kept samples' total in frames with symbols.
func filteredHotspots(ctx context.Context, ws *workspace.Workspace, s *query.Session, sc *scope, st SampleType, req HotspotsRequest,
	nf *nameFilter, limit, offset int, res *HotspotsResult) (float64, error) {
	src := sc.src
	_, path, err := (&artifact.Store{Root: ws.Root}).Stat(src.ArtifactID)
	if err != nil {
		return 0, err
	}
	f, err := os.Open(path)
	if err != nil {
		return 0, fault.Wrap(fault.ArtifactIntegrityFailed, err, "open %s", src.ArtifactID)
	}
	prof, err := profile.Parse(f, profile.Options{Limits: ws.Config.Limits})
	f.Close()
	if err != nil {
		return 0, fault.Wrap(fault.ArtifactParseFailed, err, "profile %s", src.ArtifactID).With("artifact_id", src.ArtifactID)
	}
	p := prof.P
	idx := -1
	for i, t := range p.SampleType {
		if t.Type == st.Type {
			idx = i
			break
		}
	}
	if idx < 0 {
		return 0, fault.New(fault.ArtifactParseFailed, "the native profile %s has no sample type %q", src.ArtifactID, st.Type)
	}
	if p.DropFrames != "" || p.KeepFrames != "" {
		p.RemoveUninteresting()
		p.DropFrames, p.KeepFrames = "", ""
	}
	fm, im, _, _ := p.FilterSamplesByName(nf.focus, nf.ignore, nil, nil)
	if nf.focus != nil && !fm {
		res.Limitations = append(res.Limitations, "--focus matched no frame: no sample is shown (go tool pprof: \"Focus expression matched no samples\").")
	}
	if nf.ignore != nil && !im {
		res.Limitations = append(res.Limitations, "--ignore matched no frame: no sample was dropped.")
	}
	var keep func(*gprof.Sample) bool
	if req.Thread != "" || req.Process != "" {
		keep = func(smp *gprof.Sample) bool {
			th, pr := profile.Labels(smp)
			return (req.Thread == "" || th == req.Thread) && (req.Process == "" || pr == req.Process)
		}
	}
	rows := profile.Top(p, idx, keep)
	if err := ctx.Err(); err != nil {
		return 0, fault.Wrap(fault.ProcessCancelled, err, "hotspots cancelled")
	}
	// Frame ids by the names Top gives rows.
	type nodeKey struct {
		name, module string
		start        int64
	}
	ids := map[nodeKey]string{}
	err = s.R.Scan(ctx, qFrameIDs, []any{src.ArtifactID, src.GenerationID}, func(r *sql.Rows) error {
		for r.Next() {
			var id, fn, mod string
			var start int32
			var unsym bool
			if err := r.Scan(&id, &fn, &mod, &start, &unsym); err != nil {
				return err
			}
			k := nodeKey{name: fn}
			if unsym {
				k.module, k.start = filepath.Base(mod), int64(start)
			}
			ids[k] = id
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	var symbolized, kept, minValue int64
	for _, r := range rows {
		if v := cmp.Or(abs(r.Flat), abs(r.Cum)); minValue == 0 || v < minValue {
			minValue = v
		}
		kept += abs(r.Flat)
		if !r.Unsymbolized {
			symbolized += abs(r.Flat)
		}
	}
	res.Total = int64(len(rows))
	res.OutputUnit = NewValueFormat(st.Unit, minValue, st.Total).to
	for i := offset; i < len(rows); i++ {
		if len(res.Rows) == limit {
			res.Truncated = true
			break
		}
		r := rows[i]
		k := nodeKey{name: r.Function}
		if r.Unsymbolized {
			k.module, k.start = filepath.Base(r.Module), r.StartLine
		}
		fr := Frame{FrameID: ids[k], Function: r.Function, File: r.File, StartLine: int(r.StartLine), Module: r.Module,
			Unsymbolized: r.Unsymbolized, Self: r.Flat, Inclusive: r.Cum,
			SelfFraction: frac(r.Flat, st.Total), InclusiveFraction: frac(r.Cum, st.Total)}
		res.Rows = append(res.Rows, HotspotRow{Rank: i + 1, Frame: fr, Inline: r.Inline})
	}
	var active []string
	if req.Focus != "" {
		active = append(active, "focus="+req.Focus)
	}
	if req.Ignore != "" {
		active = append(active, "ignore="+req.Ignore)
	}
	res.Limitations = append(res.Limitations, "Filtered ("+strings.Join(active, ", ")+") from the native profile as go tool pprof -focus/-ignore do; percentages are of the whole profile's total.")
	return frac(symbolized, kept), nil
}

func abs(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}
