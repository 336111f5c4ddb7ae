// Package foxpublish is fox-publish, the only tool that advances
// corpus/HEAD.
//
// Usage:
//
//	fox-publish [--workspace DIR] [--batch N] [FILE...]
//
// It reads records (JSON lines) from the files named, or from stdin, and
// publishes every `run` record's run revision, every `analysis` record
// (from fox-analyze --record), every investigation, hypothesis,
// experiment, variant, trial and run_set record (pkg/inquiry: from
// fox-capture's experiment runner and from flameox), and every
// `comparison_result` record (from fox-compare compare: a comparisons
// row, its analyses row and evidence references; one already recorded is
// reported on stderr and not published again), as evidence: one
// generation per batch (by default one for the whole input), committed
// atomically; the inquiry records of a flush go in one generation of
// their own, published before its runs. For
// each publication it writes a `generation` and a `commit` record on
// stdout. Records of other kinds pass through unchanged; an `error` record
// passes through and makes fox-publish exit non-zero after publishing the
// rest. Malformed lines are reported as file:line on stderr and skipped.
package foxpublish

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/flameox/flameox/pkg/analysis/provenance"
	"github.com/flameox/flameox/pkg/cli"
	"github.com/flameox/flameox/pkg/corpus"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/inquiry"
	"github.com/flameox/flameox/pkg/publish"
	"github.com/flameox/flameox/pkg/record"
	"github.com/flameox/flameox/pkg/run"
	"github.com/flameox/flameox/pkg/runset"
	"github.com/flameox/flameox/pkg/services/publishing"
	"github.com/flameox/flameox/pkg/workspace"
)

// Run is fox-publish's entry point.
func Run(ctx context.Context, env *cli.Env, args []string) error {
	env.Mode = cli.Records
	fs := cli.NewFlags(env, "fox-publish", "usage: fox-publish [--workspace DIR] [--batch N] [FILE...]")
	wsDir := fs.String("workspace", "", "workspace directory (default: the one named by the records)")
	batch := fs.Int("batch", 0, "publish a generation every N runs (0: one for the whole input)")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	p := &pipeline{ctx: ctx, env: env, out: record.NewWriter(env.Stdout), batch: *batch, explicit: *wsDir}
	inputs := fs.Args()
	if len(inputs) == 0 {
		inputs = []string{"-"}
	}
	for _, name := range inputs {
		if err := p.read(name); err != nil {
			return err
		}
	}
	if err := p.flush(); err != nil {
		return err
	}
	if p.failed != nil {
		return p.failed
	}
	if p.malformed > 0 {
		return fault.New(fault.InvalidArguments, "%d malformed record line(s) skipped", p.malformed)
	}
	return nil
}

type pipeline struct {
	ctx       context.Context
	env       *cli.Env
	out       *record.Writer
	batch     int
	explicit  string
	ws        *workspace.Workspace
	pending   []publish.RunRef
	analyses  []publish.AnalysisRow
	inquiry   []any // pkg/inquiry bodies, in input order
	compared  []*publish.Comparison
	malformed int
	failed    error
}

func (p *pipeline) read(name string) error {
	var in io.Reader = p.env.Stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return fault.Wrap(fault.InvalidArguments, err, "open %s", name)
		}
		defer f.Close()
		in = f
	} else {
		name = "<stdin>"
	}
	r := record.NewReader(in, name)
	for r.Scan() {
		switch it := r.Record().(type) {
		case *record.SyntaxError:
			fmt.Fprintln(p.env.Stderr, "fox-publish:", it)
			p.malformed++
		case *record.Raw:
			if err := p.handle(it); err != nil {
				return err
			}
		}
	}
	if err := r.Err(); err != nil {
		return fault.Wrap(fault.InvalidArguments, err, "read %s", name)
	}
	return nil
}

func (p *pipeline) handle(raw *record.Raw) error {
	switch raw.Record {
	case record.KindRun:
		if err := record.Check(raw.Header, record.KindRun, record.SchemaVersion); err != nil {
			fmt.Fprintln(p.env.Stderr, "fox-publish:", err)
			p.malformed++
			return nil
		}
		var rec run.Record
		if err := raw.Decode(&rec); err != nil {
			fmt.Fprintln(p.env.Stderr, "fox-publish:", err)
			p.malformed++
			return nil
		}
		if err := p.workspace(rec.Workspace); err != nil {
			return err
		}
		if !run.ValidID(rec.RunID) || rec.Revision < 0 {
			fmt.Fprintf(p.env.Stderr, "fox-publish: %s:%d: invalid run id or revision\n", raw.File, raw.LineNo)
			p.malformed++
			return nil
		}
		p.pending = append(p.pending, publish.RunRef{RunID: rec.RunID, Revision: rec.Revision})
		if p.batch > 0 && len(p.pending) >= p.batch {
			return p.flush()
		}
		return nil
	case record.KindAnalysis:
		r, err := provenance.Decode(raw.Line)
		if err != nil || r.AnalysisID == "" || r.CorpusCommitID == "" {
			fmt.Fprintf(p.env.Stderr, "fox-publish: %s:%d: malformed analysis record\n", raw.File, raw.LineNo)
			p.malformed++
			return nil
		}
		if err := p.workspace(r.Workspace); err != nil {
			return err
		}
		p.analyses = append(p.analyses, publish.AnalysisRowOf(r))
		return nil
	case inquiry.KindInvestigation, inquiry.KindHypothesis, inquiry.KindExperiment, inquiry.KindVariant, inquiry.KindTrial, inquiry.KindRunSet:
		body, ws, err := inquiry.Decode(raw)
		if err == nil {
			err = inquiry.Validate(body)
		}
		if err != nil {
			fmt.Fprintf(p.env.Stderr, "fox-publish: %s:%d: malformed %s record: %v\n", raw.File, raw.LineNo, raw.Record, err)
			p.malformed++
			return nil
		}
		if err := p.workspace(ws); err != nil {
			return err
		}
		p.inquiry = append(p.inquiry, body)
		return nil
	case publish.KindComparisonResult:
		c, err := decodeComparison(raw)
		if err != nil {
			fmt.Fprintf(p.env.Stderr, "fox-publish: %s:%d: malformed comparison_result record: %v\n", raw.File, raw.LineNo, err)
			p.malformed++
			return nil
		}
		// A comparison_result names no workspace: the stream's, or the
		// one --workspace or the working directory names.
		if err := p.workspace(""); err != nil {
			return err
		}
		p.compared = append(p.compared, c)
		return nil
	case record.KindError:
		var e cli.ErrorRecord
		if raw.Decode(&e) == nil {
			fe := e.Error
			p.failed = &fe
		} else {
			p.failed = fault.New(fault.InternalError, "an upstream tool failed")
		}
	}
	return p.out.WriteRaw(raw)
}

// workspace opens the workspace a record names (or --workspace), and
// refuses a stream that mixes workspaces.
func (p *pipeline) workspace(named string) error {
	want := p.explicit
	if want == "" {
		want = named
	}
	if p.ws != nil {
		// A record that names no workspace belongs to the stream's.
		if want != "" && filepath.Clean(want) != p.ws.Root && p.explicit == "" {
			return fault.New(fault.InvalidArguments, "records name two workspaces: %s and %s", p.ws.Root, want)
		}
		return nil
	}
	if want == "" {
		ws, err := workspace.Discover(p.env.Dir, "")
		if err != nil {
			return err
		}
		p.ws = ws
		return nil
	}
	ws, err := workspace.Discover(p.env.Dir, want)
	if err != nil {
		return err
	}
	p.ws = ws
	return nil
}

func (p *pipeline) flush() error {
	// Runs first: an experiment's trials and run sets, later in the same
	// stream, name them.
	if err := p.flushRuns(); err != nil {
		return err
	}
	if len(p.inquiry) > 0 {
		bodies := p.inquiry
		p.inquiry = nil
		// A run set fox-capture froze names the HEAD its runs were
		// captured against; published just now, they are at HEAD, where
		// the set is pinned (its id and digest do not name a commit).
		for _, b := range bodies {
			if rs, ok := b.(*inquiry.RunSet); ok {
				if _, err := runset.Repin(p.ctx, p.ws.Root, rs); err != nil {
					return err
				}
			}
		}
		pub := publishing.Publisher(p.ws, p.env.Now)
		res, err := pub.PublishInquiry(p.ctx, bodies)
		if err != nil {
			return err
		}
		c, err := p.published(res, nil, fmt.Sprintf("%d investigation, hypothesis, experiment, trial or run set record(s)", len(bodies)))
		if err != nil {
			return err
		}
		if err := p.compaction(res, c); err != nil {
			return err
		}
	}
	if len(p.analyses) > 0 {
		rows := p.analyses
		p.analyses = nil
		pub := publishing.Publisher(p.ws, p.env.Now)
		res, err := pub.PublishAnalyses(p.ctx, rows)
		if err != nil {
			return err
		}
		if _, err := p.published(res, nil, fmt.Sprintf("%d analysis record(s)", len(rows))); err != nil {
			return err
		}
	}
	return p.flushComparisons()
}

// decodeComparison reads a comparison_result record's comparison.
func decodeComparison(raw *record.Raw) (*publish.Comparison, error) {
	if err := record.Check(raw.Header, publish.KindComparisonResult, record.SchemaVersion); err != nil {
		return nil, err
	}
	var rec struct {
		Result json.RawMessage `json:"result"`
	}
	if err := raw.Decode(&rec); err != nil {
		return nil, err
	}
	if len(rec.Result) == 0 {
		return nil, fault.New(fault.InvalidArguments, "no result")
	}
	return publish.DecodeComparison(rec.Result)
}

// flushComparisons records the comparisons read since the last flush in
// one generation; each one's id and analysis go to stderr.
func (p *pipeline) flushComparisons() error {
	if len(p.compared) == 0 {
		return nil
	}
	cs := p.compared
	p.compared = nil
	pub := publishing.Publisher(p.ws, p.env.Now)
	out, err := pub.PublishComparisons(p.ctx, cs, time.Time{})
	if err != nil {
		return err
	}
	for _, r := range out.Recorded {
		how := "recorded"
		if r.AlreadyRecorded {
			how = "already recorded"
		}
		fmt.Fprintf(p.env.Stderr, "fox-publish: comparison %s %s (analysis %s) in commit %s\n", r.ComparisonID, how, r.AnalysisID, r.CorpusCommitID)
	}
	if out.Result == nil {
		return nil
	}
	_, err = p.published(out.Result, nil, fmt.Sprintf("%d comparison record(s)", out.Result.Tables["comparisons"]))
	return err
}

// published writes a publication's generation and commit records and says
// on stderr what it published; it returns the commit record.
func (p *pipeline) published(res *publish.Result, runIDs []string, what string) (corpus.CommitRecord, error) {
	g, c := publish.Records(p.ws.Root, res, runIDs)
	if err := p.out.Write(g); err != nil {
		return c, err
	}
	if err := p.out.Write(c); err != nil {
		return c, err
	}
	fmt.Fprintf(p.env.Stderr, "fox-publish: %s in generation %s\n", what, res.GenerationID)
	return c, nil
}

func (p *pipeline) flushRuns() error {
	if len(p.pending) == 0 {
		return nil
	}
	refs := p.pending
	p.pending = nil
	pub := publishing.Publisher(p.ws, p.env.Now)
	res, err := pub.PublishRuns(p.ctx, refs)
	if err != nil {
		return err
	}
	ids := make([]string, len(refs))
	for i, r := range refs {
		ids[i] = r.RunID
	}
	g, c := publish.Records(p.ws.Root, res, ids)
	if err := p.out.Write(g); err != nil {
		return err
	}
	if err := p.out.Write(c); err != nil {
		return err
	}
	fmt.Fprintf(p.env.Stderr, "fox-publish: generation %s (%d run(s)); HEAD is now %s\n", res.GenerationID, res.Runs, res.CommitID)
	return p.compaction(res, c)
}

// compaction reports what automatic compaction did after publication res
// (whose commit record is c).
func (p *pipeline) compaction(res *publish.Result, c corpus.CommitRecord) error {
	if cp := res.Compaction; cp != nil {
		// Automatic compaction moved HEAD once more: say so in the stream.
		cc := corpus.CommitRecord{Header: c.Header, Workspace: c.Workspace, CommitID: cp.CommitID,
			ParentCommitID: res.CommitID, GenerationID: cp.GenerationID}
		if err := p.out.Write(cc); err != nil {
			return err
		}
		fmt.Fprintf(p.env.Stderr, "fox-publish: merged %d small generations into %s; HEAD is now %s\n", len(cp.Superseded), cp.GenerationID, cp.CommitID)
	}
	if res.CompactionError != "" {
		fmt.Fprintf(p.env.Stderr, "fox-publish: automatic compaction did not run: %s\n", res.CompactionError)
	}
	return nil
}
