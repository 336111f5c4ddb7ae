package chart

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"html/template"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/flameox/flameox/pkg/analysis"
	"github.com/flameox/flameox/pkg/compare"
	"github.com/flameox/flameox/pkg/durable"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/inquiry"
	"github.com/flameox/flameox/pkg/query"
	"github.com/flameox/flameox/pkg/workspace"
)

// ReportRequest names the investigation a report page shows.
type ReportRequest struct {
	InvestigationID string
	Output          string
}

// Bounds of a report page: the flame graphs it embeds (one per variant,
// the first succeeded run with a profile) and the trials it lists.
const (
	maxFlames     = 8
	flameWidth    = 1100
	maxPageTrials = 200
)

// Report writes an investigation as one self-contained HTML page: its
// question, hypotheses, experiments with their comparison and scaling
// plots (inline SVG) and flame graphs (their own SVG, script included,
// in a sandboxed frame), the recorded comparisons and the findings;
// every number links to the ids it was read from.
func Report(ctx context.Context, ws *workspace.Workspace, req ReportRequest, base string) (*PictureResult, error) {
	out, err := analysis.OutputPath(ws, req.Output, base)
	if err != nil {
		return nil, err
	}
	rep, err := query.SummarizeInvestigation(ctx, ws, req.InvestigationID)
	if err != nil {
		return nil, err
	}
	pics := make([]ExperimentPictures, len(rep.Experiments))
	flames := 0
	for i, e := range rep.Experiments {
		if err := experimentPictures(ctx, ws, e, &pics[i], &flames); err != nil {
			return nil, err
		}
	}
	cited, err := citedFlames(ctx, ws, rep, &flames)
	if err != nil {
		return nil, err
	}
	b, err := Page(rep, Pictures{Experiments: pics, Cited: cited})
	if err != nil {
		return nil, err
	}
	if err := durable.WriteFile(out, b, 0o644); err != nil {
		return nil, fault.Wrap(fault.InvalidArguments, err, "write %s", out).With("field", "output")
	}
	return &PictureResult{SchemaVersion: 1, Operation: OpReport, Path: out, Format: "html", Bytes: int64(len(b)),
		CorpusCommitID: rep.CorpusCommitID, Inputs: []string{req.InvestigationID}, Drawn: len(rep.Experiments),
		Limitations: append([]string{"the plots and flame graphs are read at HEAD when the page is made; the tables at corpus commit " + rep.CorpusCommitID},
			rep.Limitations...)}, nil
}

// ExperimentPictures are what a report draws for one experiment; a
// Note says why a picture is missing.
type ExperimentPictures struct {
	Comparison     []byte // SVG
	Effects        []Effect
	EffectSets     [][2]string // the run sets behind each effect
	ComparisonNote string
	Scaling        []byte // SVG
	ScalingNote    string
	Flames         []Flame
}

// Pictures are what a report page draws besides its tables: per
// experiment, in order, and the flame graphs of what findings cite.
type Pictures struct {
	Experiments []ExperimentPictures
	Cited       []Flame
}

// Flame is one run's flame graph.
type Flame struct {
	Variant    string
	RunID      string
	ArtifactID string
	SVG        []byte
}

// soft is an error a page reports in place of a picture (nothing to
// draw, a declaration the analysis does not apply to), not one that
// stops it.
func soft(err error) bool {
	return fault.Is(err, fault.NotFound) || fault.Is(err, fault.InvalidArguments) || fault.Is(err, fault.ComparisonInvalid)
}

func experimentPictures(ctx context.Context, ws *workspace.Workspace, e query.ExperimentReport, p *ExperimentPictures, flames *int) error {
	labels, ids := experimentSets(e.Variants, e.RunSets)
	switch {
	case len(ids) < 2:
		p.ComparisonNote = fmt.Sprintf("no comparison picture: %d frozen run set(s)", len(ids))
	case e.PrimaryMetric == "":
		p.ComparisonNote = "no comparison picture: no primary metric declared"
	default:
		req := compare.ConfirmRequest{Metric: e.PrimaryMetric, Polarity: e.Polarity, Threshold: e.PracticalThreshold, Confidence: e.ConfidenceLevel}
		c, _, _, err := setsComparison(ctx, ws, req, labels, ids)
		if err == nil {
			p.Effects = c.Effects
			for _, id := range ids[1:] {
				p.EffectSets = append(p.EffectSets, [2]string{ids[0], id})
			}
			p.Comparison, err = Comparison(c, SVG)
		}
		if err != nil && !soft(err) {
			return err
		}
		if err != nil {
			p.ComparisonNote = "no comparison picture: " + fault.As(err).Message
		}
	}
	sres, err := analysis.Scaling(ctx, ws, analysis.ScalingRequest{ExperimentID: e.ExperimentID})
	if err == nil {
		p.Scaling, err = Scaling(ScalingOf(sres), SVG)
	}
	if err != nil && !soft(err) {
		return err
	}
	if err != nil {
		p.ScalingNote = "no scaling picture: " + fault.As(err).Message
	}
	dir, err := os.MkdirTemp("", "flameox-report-")
	if err != nil {
		return fault.Wrap(fault.InternalError, err, "a temporary directory for the flame graphs")
	}
	defer os.RemoveAll(dir)
	done := map[string]bool{}
	for _, t := range e.Trials {
		if *flames >= maxFlames || done[t.Variant] || t.RunID == "" || t.Outcome != inquiry.TrialSucceeded {
			continue
		}
		// One try per variant: its runs are captured alike, so one
		// without a profile means none has one.
		done[t.Variant] = true
		fl, err := flameOf(ctx, ws, dir, t.RunID, *flames)
		if err != nil {
			return err
		}
		if fl != nil {
			fl.Variant = t.Variant
			p.Flames = append(p.Flames, *fl)
			*flames++
		}
	}
	return nil
}

// citedFlames are the flame graphs of the runs and artifacts findings
// cite (a profiled run captured beside the measurement runs), where they
// carry a profile.
func citedFlames(ctx context.Context, ws *workspace.Workspace, rep *query.InvestigationReport, flames *int) ([]Flame, error) {
	dir, err := os.MkdirTemp("", "flameox-report-")
	if err != nil {
		return nil, fault.Wrap(fault.InternalError, err, "a temporary directory for the flame graphs")
	}
	defer os.RemoveAll(dir)
	var out []Flame
	done := map[string]bool{}
	for _, f := range rep.Findings {
		for _, ref := range f.Evidence {
			if *flames >= maxFlames || done[ref.ID] || (ref.Type != "run" && ref.Type != "artifact") {
				continue
			}
			done[ref.ID] = true
			fl, err := flameOf(ctx, ws, dir, ref.ID, *flames)
			if err != nil {
				return nil, err
			}
			if fl != nil {
				fl.Variant = "cited by " + f.FindingID
				out = append(out, *fl)
				*flames++
			}
		}
	}
	return out, nil
}

// flameOf draws the flame graph of a run's profile or a profile
// artifact; nil when it has none.
func flameOf(ctx context.Context, ws *workspace.Workspace, dir, input string, n int) (*Flame, error) {
	name := filepath.Join(dir, strconv.Itoa(n)+".svg")
	res, err := analysis.FlameGraph(ctx, ws, analysis.FlameGraphRequest{Input: input, Output: name, Width: flameWidth}, dir)
	if err != nil {
		if soft(err) || fault.Is(err, fault.ArtifactParseFailed) {
			return nil, nil
		}
		return nil, err
	}
	b, err := os.ReadFile(res.Path)
	if err != nil {
		return nil, fault.Wrap(fault.InternalError, err, "read the flame graph back")
	}
	return &Flame{RunID: res.Source.RunID, ArtifactID: res.Source.ArtifactID, SVG: b}, nil
}

// Number is one number of the page: its text, its exact value (the
// data-value attribute a reader or test can check) and the id it links
// to.
type Number struct {
	Text  string
	Value string
	Ref   string
}

func number(x *float64, text func(float64) string, ref string) Number {
	if x == nil {
		return Number{Text: "–", Ref: ref}
	}
	return Number{Text: text(*x), Value: strconv.FormatFloat(*x, 'g', -1, 64), Ref: ref}
}

func pct(x float64) string   { return fmt.Sprintf("%+.2f%%", x*100) }
func ratio(x float64) string { return strconv.FormatFloat(x, 'f', 4, 64) }

// IDRow is one line of the page's table of ids.
type IDRow struct{ Kind, ID, What string }

type pageExperiment struct {
	query.ExperimentReport
	Outcomes       []string
	VariantCounts  [][]int
	Comparison     template.HTML
	ComparisonNote string
	Effects        []pageEffect
	Scaling        template.HTML
	ScalingNote    string
	Flames         []pageFlame
	Trials         []query.ExperimentTrial
	TrialsCut      bool
}

type pageEffect struct {
	Name                string
	Baseline, Candidate string
	Ratio, Lo, Hi       Number
	Decision            string
}

type pageFlame struct {
	Flame
	Src template.URL
}

type pageComparison struct {
	query.RecordedComparison
	Change, Low, High Number
	Pairs             Number
}

type pageData struct {
	CSP         string
	Cited       []pageFlame
	R           *query.InvestigationReport
	Experiments []pageExperiment
	Comparisons []pageComparison
	IDs         []IDRow
}

// Page renders the report page from a report and its pictures (one per
// experiment, in order). html/template escapes every text from the
// corpus; only the SVG drawn here (gonum's, text escaped) is inlined as
// markup, and a flame graph goes into a sandboxed frame as a data URL.
func Page(r *query.InvestigationReport, pp Pictures) ([]byte, error) {
	pics := pp.Experiments
	d := pageData{R: r}
	seen := map[string]bool{}
	addID := func(kind, id, what string) {
		if id != "" && !seen[id] {
			seen[id] = true
			d.IDs = append(d.IDs, IDRow{kind, id, what})
		}
	}
	flame := func(f Flame) pageFlame {
		addID("run", f.RunID, "profiled run ("+f.Variant+")")
		addID("artifact", f.ArtifactID, "profile of run "+f.RunID)
		// The flame graph's own script needs its own document (it reads
		// document.documentElement): a data URL frame, sandboxed, no
		// request made.
		return pageFlame{Flame: f, Src: template.URL("data:image/svg+xml;base64," + base64.StdEncoding.EncodeToString(f.SVG))}
	}
	addID("investigation", r.Investigation.InvestigationID, r.Investigation.Question)
	for _, h := range r.Hypotheses {
		addID("hypothesis", h.HypothesisID, h.Claim)
	}
	for i, e := range r.Experiments {
		pe := pageExperiment{ExperimentReport: e, Outcomes: inquiry.TerminalOutcomes(), Trials: e.Trials}
		addID("experiment", e.ExperimentID, e.PrimaryMetric)
		for _, v := range e.Variants {
			counts := make([]int, len(pe.Outcomes))
			for j, o := range pe.Outcomes {
				counts[j] = v.Outcomes[o]
			}
			pe.VariantCounts = append(pe.VariantCounts, counts)
		}
		for _, s := range e.RunSets {
			addID("run set", s.RunSetID, fmt.Sprintf("%d runs: %s", s.MemberCount, s.Selection))
		}
		if len(pe.Trials) > maxPageTrials {
			pe.Trials, pe.TrialsCut = pe.Trials[:maxPageTrials], true
		}
		for _, t := range pe.Trials {
			if t.RunID != "" {
				addID("run", t.RunID, "trial "+t.TrialID+" of "+t.Variant+", "+t.Outcome)
			}
		}
		if i < len(pics) {
			p := pics[i]
			pe.Comparison, pe.ComparisonNote = template.HTML(stripProlog(p.Comparison)), p.ComparisonNote
			pe.Scaling, pe.ScalingNote = template.HTML(stripProlog(p.Scaling)), p.ScalingNote
			for j, ef := range p.Effects {
				pf := pageEffect{Name: ef.Name, Decision: ef.Decision}
				if j < len(p.EffectSets) {
					pf.Baseline, pf.Candidate = p.EffectSets[j][0], p.EffectSets[j][1]
				}
				opt := func(x float64) *float64 {
					if !finite(x) {
						return nil
					}
					return &x
				}
				pf.Ratio = number(opt(ef.Ratio), ratio, pf.Candidate)
				pf.Lo, pf.Hi = number(opt(ef.Lo), ratio, pf.Candidate), number(opt(ef.Hi), ratio, pf.Candidate)
				pe.Effects = append(pe.Effects, pf)
			}
			for _, f := range p.Flames {
				pe.Flames = append(pe.Flames, flame(f))
			}
		}
		d.Experiments = append(d.Experiments, pe)
	}
	for _, c := range r.Comparisons {
		addID("comparison", c.ComparisonID, c.Metric)
		pc := pageComparison{RecordedComparison: c,
			Change: number(c.RelativeChange, pct, c.ComparisonID),
			Low:    number(c.ConfidenceLow, pct, c.ComparisonID),
			High:   number(c.ConfidenceHigh, pct, c.ComparisonID)}
		if c.Pairs != nil {
			x := float64(*c.Pairs)
			pc.Pairs = number(&x, func(v float64) string { return strconv.FormatFloat(v, 'f', 0, 64) }, c.ComparisonID)
		} else {
			pc.Pairs = number(nil, nil, c.ComparisonID)
		}
		addID("run set", c.BaselineRunSetID, "baseline of comparison "+c.ComparisonID)
		addID("run set", c.CandidateRunSetID, "candidate of comparison "+c.ComparisonID)
		d.Comparisons = append(d.Comparisons, pc)
	}
	for _, a := range r.Analyses {
		addID("analysis", a.AnalysisID, a.Recipe+" over "+strconv.Itoa(a.InputRuns)+" runs")
		addID("artifact", a.ResultArtifactID, "result of analysis "+a.AnalysisID)
	}
	for _, f := range pp.Cited {
		d.Cited = append(d.Cited, flame(f))
	}
	for _, f := range r.Findings {
		addID("finding", f.FindingID, f.Title)
		for _, ref := range f.Evidence {
			addID(ref.Type, ref.ID, "cited by finding "+f.FindingID+" ("+ref.Relation+")")
		}
	}
	d.CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; frame-src data:"
	var hashes []string
	all := slices.Clone(d.Cited)
	for _, e := range d.Experiments {
		all = append(all, e.Flames...)
	}
	for _, f := range all {
		if h := scriptHash(f.SVG); h != "" && !slices.Contains(hashes, "'"+h+"'") {
			hashes = append(hashes, "'"+h+"'")
		}
	}
	if len(hashes) > 0 {
		d.CSP += "; script-src " + strings.Join(hashes, " ")
	}
	var buf bytes.Buffer
	if err := pageTemplate().Execute(&buf, d); err != nil {
		return nil, fault.Wrap(fault.InternalError, err, "render the report page")
	}
	return buf.Bytes(), nil
}

// scriptHash is the CSP source of a flame graph's script: a data URL
// frame inherits the page's policy, which allows no other script.
func scriptHash(svg []byte) string {
	const open, end = "<script><![CDATA[", "]]></script>"
	i := bytes.Index(svg, []byte(open))
	j := bytes.LastIndex(svg, []byte(end))
	if i < 0 || j < i {
		return ""
	}
	sum := sha256.Sum256(svg[i+len(open) : j])
	return "sha256-" + base64.StdEncoding.EncodeToString(sum[:])
}

// pageTemplate is parsed on first use: every flameox process links this
// package, few of them write a report.
var pageTemplate = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("report").Funcs(template.FuncMap{
		"fixed": func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) },
	}).Parse(pageHTML))
})
