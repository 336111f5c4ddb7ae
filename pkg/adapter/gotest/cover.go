package gotest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/flameox/flameox/pkg/adapter"
	"github.com/flameox/flameox/pkg/config"
	"github.com/flameox/flameox/pkg/digest"
	"github.com/flameox/flameox/pkg/evidence/schema"
	"github.com/flameox/flameox/pkg/fault"
	"golang.org/x/mod/modfile"
	"golang.org/x/tools/cover"
)

// Coverage extractor identity.
const (
	CoverExtractorName    = "gocover"
	CoverExtractorVersion = "1"
)

// CoverExtractor reads a Go coverage profile — what `go test
// -coverprofile` writes in set, count or atomic mode, and what `go tool
// covdata textfmt` writes from a GOCOVERDIR, the same text format — with
// golang.org/x/tools/cover, the parser `go tool cover` itself uses, into
// observations and run-level measurements:
//
//   - one line_hit "coverage.block" per profile block (line_from..line_to
//     its lines; value_json hits, statements, start_col, end_col);
//   - one summary "coverage.file" per source file;
//   - coverage.statements, coverage.covered_statements and
//     coverage.percent_covered for the run, computed as `go tool cover
//     -func` computes its total line.
//
// File names are the profile's (import path + file name); those inside
// the project's own module are made project-relative (ModuleOf).
type CoverExtractor struct {
	// ModuleOf names the Go module whose files are made project-relative
	// for an input: its module path, and the directory of its go.mod
	// relative to the project root ("." at the root). Nil: ProjectModule.
	ModuleOf func(in adapter.ExtractInput) (modulePath, dir string, ok bool)
}

func (*CoverExtractor) Name() string    { return CoverExtractorName }
func (*CoverExtractor) Version() string { return CoverExtractorVersion }

// Strict: a file that starts like a Go coverage profile, or that a gotest
// capture registered as one, and then does not parse is a broken profile;
// publication fails instead of passing over it.
func (*CoverExtractor) Strict() bool { return true }

// ArtifactKind: an import that names no kind records a coverage profile as
// execution coverage.
func (*CoverExtractor) ArtifactKind() string { return KindCoverage }

// Accepts decides by content: the first line is "mode: set", "mode:
// count" or "mode: atomic". A file registered as execution coverage
// whose first line starts with "mode:" (a bad mode), and anything a
// gotest capture registered as its coverage profile, are accepted too, so
// that a broken profile is refused with the reason instead of being
// stored unread.
func (*CoverExtractor) Accepts(in adapter.ExtractInput) bool {
	head := in.Head
	if len(head) == 0 {
		if f, err := os.Open(in.Path); err == nil {
			head = make([]byte, 64)
			n, _ := io.ReadFull(f, head)
			f.Close()
			head = head[:n]
		}
	}
	if in.Kind == KindCoverage && (in.Producer == Name || bytes.HasPrefix(head, []byte("mode:"))) {
		return true
	}
	line, _, _ := bytes.Cut(head, []byte("\n"))
	switch string(bytes.TrimSuffix(line, []byte("\r"))) {
	case "mode: set", "mode: count", "mode: atomic":
		return true
	}
	return false
}

// Extract parses the whole profile. Anything the parser refuses (a
// truncated or malformed block, a negative or out-of-range number, an
// unknown mode, an empty file) is ARTIFACT_PARSE_FAILED and no row is
// written.
func (e *CoverExtractor) Extract(ctx context.Context, in adapter.ExtractInput, sink adapter.Sink) (*adapter.Extraction, error) {
	p, err := readCover(in.Path, in.Limits)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	modOf := e.ModuleOf
	if modOf == nil {
		modOf = ProjectModule
	}
	mod, dir, known := modOf(in)
	p.mapFiles(mod, dir, known)
	n, err := p.write(ctx, in, sink)
	if err != nil {
		return nil, err
	}
	return &adapter.Extraction{Extractor: CoverExtractorName, Version: CoverExtractorVersion,
		Rows: map[string]int64{"observations": n, "measurements": 3}, Limitations: p.limitations(mod, known)}, nil
}

// coverProfile is a parsed profile and its totals.
type coverProfile struct {
	mode     string
	files    []*cover.Profile
	names    []string // the file column for files[i]
	mapped   int      // files made project-relative
	blocks   int64
	stmts    int64
	covered  int64
	maxCount int
}

// errTooManyBlocks stops the parser once the profile has more lines than
// the limits allow blocks.
var errTooManyBlocks = errors.New("too many coverage blocks")

// lineCounter fails the read once more than max lines went through it, so
// the parser (which keeps every block) allocates for at most max blocks.
type lineCounter struct {
	r     io.Reader
	lines int64
	max   int64
}

func (c *lineCounter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.lines += int64(bytes.Count(p[:n], []byte("\n")))
	if c.lines > c.max {
		return 0, errTooManyBlocks
	}
	return n, err
}

// coverLimits are what a coverage profile may hold: its bytes
// (max_decompressed_bytes) and its blocks (max_samples, one row each).
func coverLimits(l config.Limits) (maxBytes, maxBlocks int64) {
	def := config.DefaultLimits()
	maxBytes, maxBlocks = l.MaxDecompressedBytes, l.MaxSamples
	if maxBytes <= 0 {
		maxBytes = def.MaxDecompressedBytes
	}
	if maxBlocks <= 0 {
		maxBlocks = def.MaxSamples
	}
	return maxBytes, maxBlocks
}

func parseFailed(format string, args ...any) *fault.Error {
	return fault.New(fault.ArtifactParseFailed, "not a readable Go coverage profile: "+format, args...).
		Fix("Extract the file `go test -coverprofile=cover.out` writes (or `go tool covdata textfmt -i=DIR -o=cover.out`); `go tool cover -func=cover.out` reads the same files.")
}

// readCover opens, bounds and parses a profile and checks what the parser
// lets through: the mode, block spans, and sums that would overflow.
func readCover(path string, lim config.Limits) (*coverProfile, error) {
	maxBytes, maxBlocks := coverLimits(lim)
	f, err := os.Open(path)
	if err != nil {
		return nil, fault.Wrap(fault.ArtifactParseFailed, err, "open the Go coverage profile")
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fault.Wrap(fault.ArtifactParseFailed, err, "read the Go coverage profile")
	}
	if st.Size() == 0 {
		return nil, parseFailed("the file is empty (a profile starts with a `mode: set|count|atomic` line)").With("reason", "empty")
	}
	if st.Size() > maxBytes {
		return nil, parseFailed("%d bytes exceed limits.max_decompressed_bytes (%d)", st.Size(), maxBytes).
			With("reason", "too_large").With("limit", "max_decompressed_bytes")
	}
	head := make([]byte, 64)
	k, _ := io.ReadFull(f, head)
	first, _, _ := bytes.Cut(head[:k], []byte("\n"))
	mode := string(bytes.TrimPrefix(first, []byte("mode: ")))
	if !bytes.HasPrefix(first, []byte("mode: ")) || (mode != "set" && mode != "count" && mode != "atomic") {
		return nil, parseFailed("the first line is %q, not `mode: set`, `mode: count` or `mode: atomic`", clip(string(first))).With("reason", "bad_mode")
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, fault.Wrap(fault.ArtifactParseFailed, err, "read the Go coverage profile")
	}
	files, err := cover.ParseProfilesFromReader(&lineCounter{r: f, max: maxBlocks + 1})
	if errors.Is(err, errTooManyBlocks) {
		return nil, parseFailed("more than %d blocks (limits.max_samples)", maxBlocks).With("reason", "too_many_blocks").With("limit", "max_samples")
	}
	if err != nil {
		return nil, parseFailed("%s", clip(err.Error())).With("reason", "syntax")
	}
	p := &coverProfile{mode: mode, files: files}
	for _, f := range files {
		if !validName(f.FileName) {
			return nil, parseFailed("the file name %q is not a source file name", clip(f.FileName)).With("reason", "bad_file_name")
		}
		var fstmts int64
		for _, b := range f.Blocks {
			switch {
			case b.StartLine < 1 || b.EndLine < b.StartLine || b.EndLine > math.MaxInt32:
				return nil, parseFailed("%s: block %d.%d,%d.%d does not span lines 1..2^31-1 forwards", clip(f.FileName), b.StartLine, b.StartCol, b.EndLine, b.EndCol).With("reason", "bad_block")
			case b.Count < 0:
				// Repeated blocks are merged by adding their counts, which
				// can wrap around.
				return nil, parseFailed("%s:%d: the merged count of a repeated block overflows", clip(f.FileName), b.StartLine).With("reason", "count_overflow")
			case int64(b.NumStmt) > math.MaxInt64-p.stmts || int64(b.NumStmt) > math.MaxInt64-fstmts:
				return nil, parseFailed("%s:%d: the statement counts overflow", clip(f.FileName), b.StartLine).With("reason", "statements_overflow")
			}
			p.blocks++
			p.stmts += int64(b.NumStmt)
			fstmts += int64(b.NumStmt)
			if b.Count > 0 {
				p.covered += int64(b.NumStmt)
			}
			p.maxCount = max(p.maxCount, b.Count)
		}
	}
	return p, nil
}

// validName refuses file names that could not have come from the go
// command: control characters, or not valid UTF-8.
func validName(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f || r == '\uFFFD' {
			return false
		}
	}
	return true
}

func clip(s string) string {
	if len(s) > 120 {
		return strings.ToValidUTF8(s[:120], "") + "…"
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// ProjectModule finds the project's own Go module for an input stored in
// a flameox workspace: it walks up from the payload to the workspace
// directory (the one holding workspace.json), resolves its project_root,
// and reads the module path of the project root's go.mod. ok is false
// when any step fails (an artifact outside a workspace, a project that is
// not a Go module).
func ProjectModule(in adapter.ExtractInput) (modulePath, dir string, ok bool) {
	if in.Path == "" {
		return "", "", false
	}
	abs, err := filepath.Abs(in.Path)
	if err != nil {
		return "", "", false
	}
	for d := filepath.Dir(abs); ; {
		if b, err := readSmall(filepath.Join(d, "workspace.json")); err == nil {
			var meta struct {
				ProjectRoot string `json:"project_root"`
			}
			if json.Unmarshal(b, &meta) != nil || meta.ProjectRoot == "" {
				return "", "", false
			}
			root := meta.ProjectRoot
			if !filepath.IsAbs(root) {
				root = filepath.Join(d, root)
			}
			gomod, err := readSmall(filepath.Join(root, "go.mod"))
			if err != nil {
				return "", "", false
			}
			if m := modfile.ModulePath(gomod); m != "" {
				return m, ".", true
			}
			return "", "", false
		}
		up := filepath.Dir(d)
		if up == d {
			return "", "", false
		}
		d = up
	}
}

// readSmall reads a metadata file of at most 1 MiB.
func readSmall(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 1<<20+1))
	if err == nil && len(b) > 1<<20 {
		err = errors.New("too large")
	}
	return b, err
}

// mapFiles fills names: a file of module mod (its import path starts
// with mod + "/") becomes dir/rest, project-relative with forward
// slashes; any other keeps the profile's name.
func (p *coverProfile) mapFiles(mod, dir string, known bool) {
	p.names = make([]string, len(p.files))
	for i, f := range p.files {
		p.names[i] = f.FileName
		if !known || mod == "" {
			continue
		}
		if rest, ok := strings.CutPrefix(f.FileName, mod+"/"); ok && rest != "" {
			p.names[i] = filepath.ToSlash(filepath.Join(dir, rest))
			p.mapped++
		}
	}
}

// write appends the observations and the three run measurements.
func (p *coverProfile) write(ctx context.Context, in adapter.ExtractInput, sink adapter.Sink) (int64, error) {
	var art any
	if in.ArtifactID != "" {
		art = in.ArtifactID
	}
	var n int64
	if p.blocks > 0 {
		w, err := sink.Table(schema.Observations)
		if err != nil {
			return 0, err
		}
		val := make([]byte, 0, 96)
		for i, f := range p.files {
			if err := ctx.Err(); err != nil {
				return n, err
			}
			file := p.names[i]
			ids, err := newBlockIDs(in.RunID, in.ArtifactID, file)
			if err != nil {
				return n, err
			}
			var stmts, covered, coveredBlocks int64
			for _, b := range f.Blocks {
				id := ids.block(b)
				// value_json is canonical JSON (RFC 8785: keys sorted,
				// integers only) for counts up to 2^53; a larger count is
				// written exactly where RFC 8785 would round it to a
				// double.
				val = append(val[:0], `{"end_col":`...)
				val = strconv.AppendInt(val, int64(b.EndCol), 10)
				val = append(val, `,"hits":`...)
				val = strconv.AppendInt(val, int64(b.Count), 10)
				val = append(val, `,"start_col":`...)
				val = strconv.AppendInt(val, int64(b.StartCol), 10)
				val = append(val, `,"statements":`...)
				val = strconv.AppendInt(val, int64(b.NumStmt), 10)
				val = append(val, '}')
				// observation_id, run_id, artifact_id, kind, name,
				// value_json, file, line_from, line_to, context,
				// evidence_level
				if err := w.AppendRow([]any{id, in.RunID, art, "line_hit", "coverage.block", string(val), file,
					int32(b.StartLine), int32(b.EndLine), nil, "observed"}); err != nil {
					return n, err
				}
				n++
				stmts += int64(b.NumStmt)
				if b.Count > 0 {
					covered += int64(b.NumStmt)
					coveredBlocks++
				}
			}
			summary := map[string]any{"blocks": len(f.Blocks), "covered_blocks": coveredBlocks, "statements": stmts,
				"covered_statements": covered, "percent_covered": percent(covered, stmts)}
			if file != f.FileName {
				summary["profile_file"] = f.FileName
			}
			sv, err := digest.Canonical(summary)
			if err != nil {
				return n, err
			}
			id, err := digest.Of(map[string]any{"run_id": in.RunID, "artifact_id": in.ArtifactID, "kind": "summary",
				"name": "coverage.file", "file": file, "line_from": nil, "line_to": nil, "context": nil})
			if err != nil {
				return n, err
			}
			if err := w.AppendRow([]any{id, in.RunID, art, "summary", "coverage.file", string(sv), file,
				nil, nil, nil, "observed"}); err != nil {
				return n, err
			}
			n++
		}
	}
	m := &adapter.Measurements{Sink: sink, RunID: in.RunID, ArtifactID: in.ArtifactID}
	dims := map[string]string{"mode": p.mode, "source": "go coverage profile", "files": strconv.Itoa(len(p.files)),
		"blocks": strconv.FormatInt(p.blocks, 10)}
	pct := percent(p.covered, p.stmts)
	stmts, covered := p.stmts, p.covered
	for _, x := range []schema.Measurement{
		{Name: "coverage.statements", Int: &stmts, Unit: "count", Aggregation: "sum"},
		{Name: "coverage.covered_statements", Int: &covered, Unit: "count", Aggregation: "sum"},
		{Name: "coverage.percent_covered", Float: &pct, Unit: "percent", Aggregation: "ratio", EvidenceLevel: "derived"},
	} {
		id, err := digest.Of(map[string]any{"run_id": in.RunID, "artifact_id": in.ArtifactID, "name": x.Name, "scope": "run"})
		if err != nil {
			return n, err
		}
		x.ID, x.Scope, x.Dimensions = id, "run", dims
		if err := m.Write(x); err != nil {
			return n, err
		}
	}
	return n, nil
}

// blockIDs makes the observation ids of one file's blocks: the digest of
// the canonical JSON (RFC 8785) of {"artifact_id", "context": null,
// "end_col", "file", "kind", "line_from", "line_to", "name", "run_id",
// "start_col"}, exactly what digest.Of gives for that map. The strings
// are canonicalized once per file by digest.Canonical and the integers
// spliced in per block, because canonicalizing a map per block costs more
// than the rest of the extraction.
type blockIDs struct {
	head, tail []byte // before end_col; from "name" on, up to start_col
	file       []byte // `,"file":F,"kind":"line_hit","line_from":`
	buf        []byte
}

func newBlockIDs(runID, artifactID, file string) (*blockIDs, error) {
	str := func(s string) ([]byte, error) { return digest.Canonical(s) }
	a, err := str(artifactID)
	if err != nil {
		return nil, err
	}
	f, err := str(file)
	if err != nil {
		return nil, err
	}
	r, err := str(runID)
	if err != nil {
		return nil, err
	}
	ids := &blockIDs{}
	ids.head = append(append(append(ids.head, `{"artifact_id":`...), a...), `,"context":null,"end_col":`...)
	ids.file = append(append(append(ids.file, `,"file":`...), f...), `,"kind":"line_hit","line_from":`...)
	ids.tail = append(append(append(ids.tail, `,"name":"coverage.block","run_id":`...), r...), `,"start_col":`...)
	return ids, nil
}

func (ids *blockIDs) block(b cover.ProfileBlock) string {
	buf := append(ids.buf[:0], ids.head...)
	buf = strconv.AppendInt(buf, int64(b.EndCol), 10)
	buf = append(buf, ids.file...)
	buf = strconv.AppendInt(buf, int64(b.StartLine), 10)
	buf = append(buf, `,"line_to":`...)
	buf = strconv.AppendInt(buf, int64(b.EndLine), 10)
	buf = append(buf, ids.tail...)
	buf = strconv.AppendInt(buf, int64(b.StartCol), 10)
	buf = append(buf, '}')
	ids.buf = buf
	return digest.Bytes(buf)
}

// percent is go tool cover's: 100 × covered / total, 0 for no statements.
func percent(covered, total int64) float64 {
	if total == 0 {
		return 0
	}
	return 100 * float64(covered) / float64(total)
}

func (p *coverProfile) limitations(mod string, known bool) []string {
	lim := []string{
		"coverage is not causality: a block that ran was executed while the tests ran, which does not show that it mattered to their outcome or to performance",
		"Go counts statements in blocks, not lines: each coverage.block row is one block of the profile (line_from..line_to with its columns in value_json), a line may belong to several blocks, and percentages are of statements",
		"coverage.statements and coverage.covered_statements sum every block, as go test's \"coverage: N% of statements\" does; `go tool cover -func` totals the blocks inside function declarations only, so blocks in package-level function literals make the two differ",
	}
	switch p.mode {
	case "set":
		lim = append(lim, "mode set: hits is 1 for a block that ran at least once and 0 otherwise, not a count")
	default:
		lim = append(lim, fmt.Sprintf("mode %s: hits is the number of times a block ran (repeated blocks in the profile are added, as go tool cover adds them)", p.mode))
	}
	switch {
	case !known:
		lim = append(lim, "the project's Go module is unknown (no go.mod at the project root of the workspace), so files keep the profile's import-path names")
	case p.mapped < len(p.files):
		lim = append(lim, fmt.Sprintf("files of module %s are project-relative; %d files outside it keep the profile's import-path names", mod, len(p.files)-p.mapped))
	default:
		lim = append(lim, "files of module "+mod+" are project-relative (its go.mod is at the project root)")
	}
	if p.blocks == 0 {
		lim = append(lim, "the profile holds no block: nothing was instrumented, so there are no statements to cover")
	}
	return lim
}

var (
	_ adapter.Extractor = (*CoverExtractor)(nil)
	_ adapter.Strict    = (*CoverExtractor)(nil)
	_ adapter.Kinded    = (*CoverExtractor)(nil)
)
