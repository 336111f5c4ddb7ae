package flameox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/flameox/flameox/pkg/adapter/all"
	"github.com/flameox/flameox/pkg/capture"
	"github.com/flameox/flameox/pkg/cli"
	"github.com/flameox/flameox/pkg/corpus"
	"github.com/flameox/flameox/pkg/faultpoint"
	"github.com/flameox/flameox/pkg/publish"
	"github.com/flameox/flameox/pkg/retention"
	"github.com/flameox/flameox/pkg/run"
	"github.com/flameox/flameox/pkg/services"
	"github.com/flameox/flameox/pkg/status"
	"github.com/flameox/flameox/pkg/workload"
)

func workloadList(ctx context.Context, c *Context, args []string) error {
	fs := c.flags("workload list", "")
	if err := c.parse(fs, args); err != nil {
		return err
	}
	ws, err := c.workspace()
	if err != nil {
		return err
	}
	res, err := workload.ListFor(ws)
	if err != nil {
		return err
	}
	return c.emit(res, func(w io.Writer) {
		if len(res.Workloads) == 0 {
			fmt.Fprintf(w, "no workloads declared in %s\n", workload.FileName)
			return
		}
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "WORKLOAD\tAPPROVAL\tPARAMETERS\tORACLE\tTIMEOUT")
		for _, s := range res.Workloads {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%gs\n", cli.Name(s.Name), s.Approval, cli.Name(strings.Join(s.ParameterNames, ",")), orDash(s.OracleStrength), s.TimeoutSeconds)
		}
		tw.Flush()
	})
}

func workloadShow(ctx context.Context, c *Context, args []string) error {
	fs := c.flags("workload show", "NAME")
	if err := c.parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return cli.Usagef("workload show needs exactly one NAME")
	}
	ws, err := c.workspace()
	if err != nil {
		return err
	}
	d, err := workload.ShowFor(ws, fs.Arg(0))
	if err != nil {
		return err
	}
	return c.emit(d, func(w io.Writer) { renderWorkload(w, d) })
}

func workloadApprove(ctx context.Context, c *Context, args []string) error {
	fs := c.flags("workload approve", "NAME [--dry-run]")
	dryRun := fs.Bool("dry-run", false, "with a pending proposal: show the diff to flameox.toml and change nothing")
	if err := c.parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return cli.Usagef("workload approve needs exactly one NAME")
	}
	ws, err := c.workspace()
	if err != nil {
		return err
	}
	// A proposal (MCP propose_workload) is adopted here, by a person: the
	// exact diff is shown, then written into flameox.toml and approved.
	if p, err := pendingProposal(ws, fs.Arg(0)); err != nil {
		return err
	} else if p != nil {
		return approveProposal(ctx, c, ws, p, *dryRun)
	}
	wl, _, err := workload.Lookup(ws, fs.Arg(0))
	if err != nil {
		return err
	}
	ap, err := workload.Approve(ctx, ws, wl, c.Env.Now())
	if err != nil {
		return err
	}
	return c.emit(ap, func(w io.Writer) {
		fmt.Fprintf(w, "approved %s at definition %s\n", wl.Name, ap.DefinitionID)
	})
}

// captureFlags are shared by capture plan and capture run.
type captureFlags struct {
	workload   string
	parameters []string
}

// captureRequest parses the flags of capture plan and capture run (the
// global --quiet among them: terminalFlags).
func (c *Context) captureRequest(name string, args []string) (*capture.PlanRequest, error) {
	fs := c.flags(name, "ADAPTER --workload NAME [--parameters KEY=VALUE[,KEY=VALUE]|JSON]...")
	var f captureFlags
	fs.StringVar(&f.workload, "workload", "", "declared workload name (required)")
	if name == "capture plan" {
		fs.BoolVarP(&c.Verbose, "verbose", "v", false, "list every environment variable the plan drops")
	}
	fs.StringArrayVar(&f.parameters, "parameters", nil, workload.ParametersUsage)
	if err := c.parse(fs, args); err != nil {
		return nil, err
	}
	if fs.NArg() != 1 || f.workload == "" {
		return nil, cli.Usagef("%s needs ADAPTER and --workload NAME", name)
	}
	params, err := workload.ParseParameterArgs(f.parameters)
	if err != nil {
		return nil, err
	}
	return &capture.PlanRequest{Adapter: fs.Arg(0), Workload: f.workload, Parameters: params}, nil
}

func (c *Context) captureService() (*capture.Service, error) {
	ws, err := c.workspace()
	if err != nil {
		return nil, err
	}
	return services.Capture(ws, c.Env.Now, c.Env.Environ), nil
}

func capturePlan(ctx context.Context, c *Context, args []string) error {
	req, err := c.captureRequest("capture plan", args)
	if err != nil {
		return err
	}
	svc, err := c.captureService()
	if err != nil {
		return err
	}
	p, err := svc.Plan(ctx, *req)
	if err != nil {
		return err
	}
	return c.emit(p, func(w io.Writer) { renderPlan(w, p, c.Verbose) })
}

// renderPlan prints capture plan. The environment line names what passes
// and what the plan sets; the dropped variables (often dozens: every
// inherited name the allow-list does not pass) are counted, and listed
// with verbose.
func renderPlan(w io.Writer, p *capture.CapturePlan, verbose bool) {
	fmt.Fprintf(w, "adapter      %s (%s %s)\n", p.Adapter, p.Capability.Status, p.Capability.Version)
	fmt.Fprintf(w, "workload     %s  [%s]  definition %s\n", p.Workload.Name, p.Workload.Approval, corpus.Short(p.Workload.DefinitionID))
	keys := make([]string, 0, len(p.Workload.Parameters))
	for k := range p.Workload.Parameters {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(w, "  %s = %s\n", k, cli.Safe(p.Workload.Parameters[k]))
	}
	fmt.Fprintf(w, "command      %s\n", quoteArgv(p.Argv))
	if len(p.Wrapped) != len(p.Argv) {
		fmt.Fprintf(w, "started as   %s\n", quoteArgv(p.Wrapped))
	}
	fmt.Fprintf(w, "cwd          %s\n", cli.Safe(p.Cwd))
	fmt.Fprintf(w, "environment  passes %s; sets %s; %s\n", listOr(p.Environment.Passed), listOr(p.Environment.Overrides), droppedText(p.Environment.Dropped, verbose))
	fmt.Fprintf(w, "containment  %s (network %s): %s\n", p.Containment.State, p.Containment.Network, p.Containment.Reason)
	fmt.Fprintf(w, "limits       timeout %ds, grace %ds, output %d bytes per stream\n", p.Limits.TimeoutNs/1e9, p.Limits.GraceNs/1e9, p.Limits.MaxOutputBytes)
	for _, a := range p.Artifacts {
		fmt.Fprintf(w, "artifact     %s (%s, %s)\n", a.RelPath, a.Kind, a.Role)
	}
	for _, s := range p.Steps {
		fmt.Fprintf(w, "then         %s → %s\n", quoteArgv(s.Argv), s.Produces.RelPath)
	}
	if p.Oracle != nil {
		fmt.Fprintf(w, "oracle       %s: %s\n", p.Oracle.Strength, quoteArgv(p.Oracle.Argv))
	}
	if p.Check != "" {
		fmt.Fprintf(w, "check        %s\n", cli.Safe(p.Check))
	}
	printLimitations(w, "limitation   ", p.Limitations)
	for _, warn := range p.Warnings {
		fmt.Fprintf(w, "warning      %s\n", cli.Safe(warn))
	}
}

func captureRun(ctx context.Context, c *Context, args []string) error {
	req, err := c.captureRequest("capture run", args)
	if err != nil {
		return err
	}
	svc, err := c.captureService()
	if err != nil {
		return err
	}
	// Progress is for a person: only on a terminal, never with --json
	// (stdout is then the result alone) or --quiet.
	if c.Env.ShowProgress() {
		defer svc.ShowProgress(c.Env.Stderr, c.Env.Now)()
	}
	res, err := svc.Execute(ctx, *req)
	var ab *capture.Abandoned
	if errors.As(err, &ab) {
		// The run is terminal; publish it so it is not hidden, then fail.
		c.publisher(svc.WS).PublishRuns(context.WithoutCancel(ctx),
			[]publish.RunRef{{RunID: ab.Run.RunID, Revision: ab.Run.Revision}})
		return ab.Err
	}
	if err != nil {
		return err
	}
	if svc.Progress != nil {
		svc.Progress(capture.Progress{Phase: "publishing", Step: 4, Total: 5, Message: "publishing the run"})
	}
	faultpoint.Hit("capture.publishing")
	// Publication happens even after an interrupt: the run is terminal and
	// its artifacts are stored; leaving it unpublished would hide it.
	// An artifact that cannot be extracted quarantines the run, which is
	// published so, and the capture fails with that error.
	pub, err := svc.PublishQuarantining(context.WithoutCancel(ctx), publish.For(c.publisher(svc.WS)),
		[]capture.RunRevision{{RunID: res.Run.RunID, Revision: res.Run.Revision}})
	if err != nil {
		return err
	}
	if len(pub.Quarantined) > 0 {
		return pub.Errors[res.Run.RunID]
	}
	res.CorpusCommitID = pub.CommitID
	if svc.Progress != nil {
		svc.Progress(capture.Progress{Phase: "completed", Step: 5, Total: 5, Message: res.Run.ExecutionStatus})
	}
	if err := c.emit(res, func(w io.Writer) { renderCapture(w, res) }); err != nil {
		return err
	}
	return captureExit(res.Run)
}

// captureExit turns a recorded but unsuccessful run into the exit status
// of its outcome (the result has been printed already), the same one
// fox-capture uses (run.OutcomeRules, docs/exit-codes.md).
func captureExit(m *run.Manifest) error { return capture.RunExit(m) }

func renderCapture(w io.Writer, res *capture.Result) {
	m := res.Run
	fmt.Fprintf(w, "run          %s\n", m.RunID)
	fmt.Fprintf(w, "status       execution %s, capture %s, validation %s\n", m.ExecutionStatus, m.CaptureStatus, m.ValidationStatus)
	if p := m.Process; p != nil {
		fmt.Fprintf(w, "process      %s\n", processLine(p))
		if u := p.Collector; u != nil {
			fmt.Fprintf(w, "collector    %s\n", usageLine(u))
		}
	}
	if m.Containment != nil {
		fmt.Fprintf(w, "containment  %s\n", m.Containment.State)
	}
	for _, a := range m.Artifacts {
		fmt.Fprintf(w, "artifact     %s %s (%s, %d bytes)\n", a.ArtifactID, cli.Name(a.DisplayName), a.Kind, a.ByteLength)
	}
	if m.Validation != nil {
		fmt.Fprintf(w, "validation   %s\n", cli.Safe(m.Validation.Reason))
	}
	if m.Error != nil {
		fmt.Fprintf(w, "error        %s\n", cli.Safe(m.Error.Error()))
	}
	renderFailure(w, m.RunID, res.Failure)
	// The run's limitations include the plan's; the result repeats them.
	printLimitations(w, "limitation   ", m.Limitations, res.Limitations)
	if res.CorpusCommitID != "" {
		fmt.Fprintf(w, "published    commit %s\n", corpus.Short(res.CorpusCommitID))
	}
}

// failureLines is how many lines of a failure capture run prints.
const failureLines = 10

// renderFailure prints why a capture failed: the class and summary, the
// remedy, and the last lines of what explains it (the adapter's reading,
// else the tail of stderr, else of stdout); the escaping was done when the
// failure was read.
func renderFailure(w io.Writer, runID string, f *capture.Failure) {
	if f == nil {
		return
	}
	fmt.Fprintf(w, "failure      %s: %s\n", f.Class, f.Summary)
	for _, r := range f.Remediation {
		fmt.Fprintf(w, "fix          %s\n", r)
	}
	lines := f.Lines
	stream := "stdout"
	for _, t := range []struct {
		name string
		tail *capture.OutputTail
	}{{"stderr", f.Stderr}, {"stdout", f.Stdout}} {
		if len(lines) == 0 && t.tail != nil {
			lines, stream = strings.Split(strings.TrimRight(t.tail.Text, "\n"), "\n"), t.name
		}
	}
	if len(f.Lines) == 0 && f.Stderr != nil {
		stream = "stderr"
	}
	lines = lines[max(len(lines)-failureLines, 0):]
	for _, l := range lines {
		fmt.Fprintf(w, "  | %s\n", l)
	}
	if f.Stdout != nil || f.Stderr != nil {
		fmt.Fprintf(w, "output       flameox runs output %s --stream %s\n", runID, stream)
	}
}

func capabilities(ctx context.Context, c *Context, args []string) error {
	fs := c.flags("capabilities", "")
	if err := c.parse(fs, args); err != nil {
		return err
	}
	res := all.Capabilities(ctx)
	return c.emit(res, func(w io.Writer) {
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ADAPTER\tSTATUS\tVERSION\tNOTES")
		for _, a := range append(res.Adapters, res.Containment) {
			notes := []string{}
			for k, v := range a.Facts {
				notes = append(notes, k+"="+v)
			}
			sort.Strings(notes)
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", a.Adapter, a.Status, cli.Name(orDash(a.Version)), cli.Safe(strings.Join(notes, " ")))
			for _, r := range a.Remediation {
				fmt.Fprintf(tw, "\t\t\tfix: %s\n", cli.Safe(r))
			}
		}
		tw.Flush()
	})
}

func recoverCmd(ctx context.Context, c *Context, args []string) error {
	fs := c.flags("recover", "")
	if err := c.parse(fs, args); err != nil {
		return err
	}
	svc, err := c.captureService()
	if err != nil {
		return err
	}
	published, err := status.PublishedRevisions(ctx, svc.WS)
	if err != nil {
		return err
	}
	res, err := svc.RecoverWith(ctx, capture.RecoverOptions{Published: published})
	if err != nil {
		return err
	}
	// A gc apply or restore a crash interrupted is put back first.
	if res.TrashResumed, err = retention.Resume(ctx, svc.WS); err != nil {
		return err
	}
	if len(res.ToPublish) > 0 {
		out, err := svc.PublishQuarantining(ctx, publish.For(c.publisher(svc.WS)), res.ToPublish)
		if err != nil {
			return err
		}
		res.Published, res.CorpusCommitID = out.Published, out.CommitID
		res.Quarantined = append(res.Quarantined, out.Quarantined...)
	}
	for _, e := range res.Experiments {
		commit, err := c.publisher(svc.WS).CloseExperiment(ctx, svc, e)
		if err != nil {
			return err
		}
		res.CorpusCommitID = commit
	}
	return c.emit(res, func(w io.Writer) {
		for _, r := range res.Closed {
			fmt.Fprintf(w, "closed      %s: %s\n", r.RunID, r.Reason)
		}
		for _, r := range res.Repaired {
			fmt.Fprintf(w, "repaired    %s: %s\n", r.RunID, r.Reason)
		}
		for _, r := range res.Removed {
			fmt.Fprintf(w, "removed     runs/%s: %s\n", r.RunID, r.Reason)
		}
		for _, r := range res.Quarantined {
			fmt.Fprintf(w, "quarantined %s: %s\n", r.RunID, cli.Safe(r.Reason))
		}
		for _, id := range res.Live {
			fmt.Fprintf(w, "live        %s (owner still running; left alone)\n", id)
		}
		for _, id := range res.Undecided {
			fmt.Fprintf(w, "unsure      %s (owner could not be checked; left alone)\n", id)
		}
		for _, p := range res.Problems {
			fmt.Fprintf(w, "problem     %s: %s\n", p.RunID, cli.Safe(p.Error.Error()))
		}
		for _, s := range res.StagingRemoved {
			fmt.Fprintf(w, "removed     %s\n", s)
		}
		for _, id := range res.TrashResumed {
			fmt.Fprintf(w, "resumed     trash %s (a crashed gc apply or restore, put back)\n", id)
		}
		for _, e := range res.Experiments {
			fmt.Fprintf(w, "closed      experiment %s: %d trial(s) published (%s)\n", e.ExperimentID, len(e.Trials), e.Reason)
		}
		if len(res.Published) > 0 {
			fmt.Fprintf(w, "published   %d run(s) as commit %s\n", len(res.Published), corpus.Short(res.CorpusCommitID))
		}
		if len(res.Closed)+len(res.Repaired)+len(res.Removed)+len(res.Quarantined)+len(res.Live)+len(res.Undecided)+
			len(res.Problems)+len(res.StagingRemoved)+len(res.Published)+len(res.Experiments) == 0 {
			fmt.Fprintln(w, "nothing to recover")
		}
	})
}

func quoteArgv(argv []string) string {
	parts := make([]string, len(argv))
	for i, a := range argv {
		if a == "" || strings.ContainsAny(a, " \t\n'\"\\$`;|&<>(){}*?[]#~") {
			parts[i] = "'" + strings.ReplaceAll(cli.Safe(a), "'", `'\''`) + "'"
		} else {
			parts[i] = cli.Safe(a)
		}
	}
	return strings.Join(parts, " ")
}

// droppedText says how many inherited variables a plan drops; verbose
// lists them.
func droppedText(dropped []string, verbose bool) string {
	switch {
	case len(dropped) == 0:
		return "drops nothing"
	case verbose:
		return "drops " + cli.Safe(strings.Join(dropped, ","))
	}
	return fmt.Sprintf("drops %d inherited variable(s) (--verbose lists them)", len(dropped))
}

func listOr(s []string) string {
	if len(s) == 0 {
		return "nothing"
	}
	return strings.Join(s, ",")
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
