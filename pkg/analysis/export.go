package analysis

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/flameox/flameox/pkg/artifact"
	"github.com/flameox/flameox/pkg/digest"
	"github.com/flameox/flameox/pkg/durable"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/profile"
	"github.com/flameox/flameox/pkg/query"
	"github.com/flameox/flameox/pkg/version"
	"github.com/flameox/flameox/pkg/workspace"
)

// OpExport is the profile export's operation name.
const OpExport = "export"

// ExportFormats are the formats a profile exports to.
var ExportFormats = []string{"pprof", "collapsed", "speedscope", "flamegraph"}

// ExportRequest asks for a profile in another tool's format.
type ExportRequest struct {
	Input      string `json:"input" jsonschema:"run id (its profile) or profile artifact id"`
	Format     string `json:"format" jsonschema:"pprof, collapsed, speedscope or flamegraph (SVG)"`
	Output     string `json:"output" jsonschema:"file to write (relative to the project root); never inside .diagnostics"`
	SampleType string `json:"sample_type,omitempty" jsonschema:"for collapsed and speedscope (default: the profile's default)"`
}

// ExportResult says what was written.
type ExportResult struct {
	SchemaVersion int    `json:"schema_version"`
	Operation     string `json:"operation"`
	Format        string `json:"format"`
	Path          string `json:"path"`
	Bytes         int64  `json:"bytes"`
	Source        Source `json:"source"`
	profile.ExportStats
	Limitations []string `json:"limitations"`
}

// Export writes a published profile's native artifact, parsed as its
// extraction parsed it, in the format asked for, to Output (relative to
// base). It never writes the corpus: an Output inside .diagnostics is
// refused.
func Export(ctx context.Context, ws *workspace.Workspace, req ExportRequest, base string) (*ExportResult, error) {
	if !slices.Contains(ExportFormats, req.Format) {
		return nil, fault.New(fault.InvalidArguments, "export format %q is not one of %s", req.Format, strings.Join(ExportFormats, ", ")).With("field", "format")
	}
	out, err := outputPath(ws, req.Output, base)
	if err != nil {
		return nil, err
	}
	prof, src, err := nativeProfile(ctx, ws, req.Input)
	if err != nil {
		return nil, err
	}
	if req.Format == "flamegraph" {
		fg, err := drawFlameGraph(out, prof, src, req.SampleType, FlameGraphRequest{}, nil)
		if err != nil {
			return nil, err
		}
		return &ExportResult{SchemaVersion: 1, Operation: OpExport, Format: req.Format, Path: out, Bytes: fg.Bytes, Source: src,
			ExportStats: profile.ExportStats{SampleType: fg.SampleType, Unit: fg.Unit, Stacks: fg.Frames, Total: fg.Total, Skipped: fg.Skipped},
			Limitations: fg.Limitations}, nil
	}
	res := &ExportResult{SchemaVersion: 1, Operation: OpExport, Format: req.Format, Path: out, Source: src,
		Limitations: append([]string{}, prof.Limitations...)}
	var buf bytes.Buffer
	if req.Format == "pprof" {
		if req.SampleType != "" {
			return nil, fault.New(fault.InvalidArguments, "a pprof export keeps every sample type; --sample-type is for collapsed and speedscope").With("field", "sample_type")
		}
		if err := prof.P.Write(&buf); err != nil {
			return nil, fault.Wrap(fault.InternalError, err, "write the pprof profile")
		}
		si, _ := profile.SampleIndex(prof.P, "")
		res.SampleType, res.Unit, res.Stacks = prof.P.SampleType[si].Type, prof.P.SampleType[si].Unit, len(prof.P.Sample)
		res.Total, _ = prof.Totals(si)
	} else {
		si, err := profile.SampleIndex(prof.P, req.SampleType)
		if err != nil {
			return nil, fault.Wrap(fault.InvalidArguments, err, "profile %s", src.ArtifactID).With("field", "sample_type")
		}
		if req.Format == "collapsed" {
			res.ExportStats, err = profile.WriteCollapsed(&buf, prof.P, si)
			res.Limitations = append(res.Limitations, "frames root to leaf joined by ';' (a ';' in a name becomes ':'), inlined functions expanded, one line per distinct stack; the format has no files or lines")
		} else {
			res.ExportStats, err = profile.WriteSpeedscope(&buf, prof.P, si, src.DisplayName, "flameox "+version.Version())
		}
		if err != nil {
			return nil, fault.Wrap(fault.InternalError, err, "write the %s export", req.Format)
		}
		if res.Skipped > 0 {
			res.Limitations = append(res.Limitations, "samples with a zero or negative value are left out: collapsed stacks and speedscope weights are positive")
		}
	}
	if err := durable.WriteFile(out, buf.Bytes(), 0o644); err != nil {
		return nil, fault.Wrap(fault.InvalidArguments, err, "write %s", out).With("field", "output")
	}
	res.Bytes = int64(buf.Len())
	return res, nil
}

// inside reports whether path is dir or under it.
func inside(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// outputPath is where a file the user asked for goes: out, relative to
// base, outside the workspace (with symlinks resolved), in a directory
// that exists.
func outputPath(ws *workspace.Workspace, out, base string) (string, error) {
	out = strings.TrimSpace(out)
	if out == "" {
		return "", fault.New(fault.InvalidArguments, "an output file is needed (-o FILE)").With("field", "output")
	}
	if !filepath.IsAbs(out) {
		out = filepath.Join(base, out)
	}
	out = filepath.Clean(out)
	// The directory is compared with symlinks resolved, so a link into
	// the workspace is refused too; the file itself is replaced by a
	// rename, which never writes through a link.
	dir, err := filepath.EvalSymlinks(filepath.Dir(out))
	if err != nil {
		return "", fault.Wrap(fault.InvalidArguments, err, "the output's directory %s", filepath.Dir(out)).With("field", "output").
			Fix("Write into a directory that exists (mkdir it first).")
	}
	root, _ := filepath.EvalSymlinks(ws.Root)
	if inside(filepath.Clean(ws.Root), out) || (root != "" && inside(root, filepath.Join(dir, filepath.Base(out)))) {
		return "", fault.New(fault.InvalidArguments, "refusing to write %s inside the workspace %s: only publication writes the corpus", out, ws.Root).With("field", "output")
	}
	return out, nil
}

// nativeProfile parses the native artifact of a run's profile (or of a
// profile artifact) as its extraction did: same parser, same limits.
func nativeProfile(ctx context.Context, ws *workspace.Workspace, input string) (*profile.Profile, Source, error) {
	src := Source{ArtifactID: strings.TrimSpace(input)}
	if !digest.Valid(src.ArtifactID) {
		s, err := query.OpenTables(ctx, ws, hotspotsTables...)
		if err != nil {
			return nil, src, err
		}
		sc, err := resolve(ctx, s, src.ArtifactID, "", "")
		s.Close()
		if err != nil {
			return nil, src, err
		}
		src = *sc.src
	}
	_, path, err := (&artifact.Store{Root: ws.Root}).Stat(src.ArtifactID)
	if err != nil {
		return nil, src, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, src, fault.Wrap(fault.ArtifactIntegrityFailed, err, "open %s", src.ArtifactID)
	}
	prof, err := profile.Parse(f, profile.Options{Limits: ws.Config.Limits})
	f.Close()
	if err != nil {
		return nil, src, fault.Wrap(fault.ArtifactParseFailed, err, "profile %s", src.ArtifactID).With("artifact_id", src.ArtifactID).
			Fix("Profiles (pprof, perf script, speedscope, collapsed stacks) export and render; traces and memory captures open in their own viewers (flameox open).")
	}
	return prof, src, nil
}
