package flameox

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/flameox/flameox/pkg/capture"
	"github.com/flameox/flameox/pkg/cli"
	"github.com/flameox/flameox/pkg/corpus"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/publish"
	"github.com/flameox/flameox/pkg/query"
	"github.com/flameox/flameox/pkg/run"
	"github.com/flameox/flameox/pkg/services"
)

func importCmd(ctx context.Context, c *Context, args []string) error {
	fs := c.flags("import", "[flags] PATH...")
	var imp capture.ImportRequest
	imp.Flags(fs)
	if err := c.parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return cli.Usagef("import needs at least one PATH")
	}
	ws, err := c.workspace()
	if err != nil {
		return err
	}
	svc := services.Capture(ws, c.Env.Now, c.Env.Environ)
	var results []*capture.ImportResult
	var importErr error
	// On a terminal, a status line says which file is being read and for
	// how long, with a bar when there are several (Env.ShowProgress).
	bar := c.Env.StartProgress("importing", 0)
	defer bar.Stop()
	for i, path := range fs.Args() {
		if fs.NArg() > 1 {
			bar.Update("importing "+path, int64(i), int64(fs.NArg()))
		} else {
			bar.Update("importing "+path, 0, 0)
		}
		req := imp
		req.Path = path
		req.RequestedBy = "cli"
		res, err := svc.ImportFrom(ctx, c.Dir, req)
		if err != nil {
			importErr = err
			break
		}
		results = append(results, res)
	}
	// What was imported is published even when a later path failed; a run
	// whose artifact cannot be extracted is published quarantined, with
	// the error (capture.PublishQuarantining), and the import fails.
	refs := make([]capture.RunRevision, len(results))
	for i, r := range results {
		refs[i] = capture.RunRevision{RunID: r.Run.RunID, Revision: r.Run.Revision}
	}
	if importErr != nil && fault.As(importErr).RunID != "" {
		// The failed run (capture_status failed, with the error) is
		// published too, so `flameox runs list` shows it.
		id := fault.As(importErr).RunID
		if m, err := (&run.Store{Root: ws.Root}).Get(id); err == nil && !m.Open() {
			refs = append(refs, capture.RunRevision{RunID: id, Revision: m.Revision})
		}
	}
	if len(refs) == 0 {
		return importErr
	}
	bar.Update("publishing", 0, 0)
	pub, err := svc.PublishQuarantining(ctx, publish.For(c.publisher(ws)), refs)
	bar.Stop()
	if err != nil {
		return err
	}
	if importErr != nil {
		return importErr
	}
	if len(pub.Quarantined) > 0 {
		return pub.Errors[pub.Quarantined[0].RunID]
	}
	for _, r := range results {
		r.CorpusCommitID = pub.CommitID
	}
	var out any = results
	if len(results) == 1 {
		out = results[0]
	}
	return c.emit(out, func(w io.Writer) {
		for _, r := range results {
			dedup := ""
			if r.Deduplicated {
				dedup = " (identical bytes already stored)"
			}
			// A file no extractor reads says so first.
			if line := r.NotAnalysedLine(); line != "" {
				fmt.Fprintln(w, line)
			}
			fmt.Fprintf(w, "imported %s\n  artifact %s%s\n  run      %s\n  kind     %s, %s\n",
				cli.Name(r.Registration.DisplayName), r.ArtifactID, dedup, r.Run.RunID, r.Registration.Kind, r.Registration.Sensitivity)
		}
		fmt.Fprintf(w, "published as commit %s\n", corpus.Short(pub.CommitID))
	})
}

func runsList(ctx context.Context, c *Context, args []string) error {
	fs := c.flags("runs list", "[filters] [--limit N] [--cursor C]")
	var req query.ListRunsRequest
	var since, until string
	fs.StringVar(&req.RunType, "type", "", "import or execution")
	fs.StringVar(&req.ExecutionStatus, "execution-status", "", "e.g. succeeded, failed, timed_out")
	fs.StringVar(&req.CaptureStatus, "capture-status", "", "e.g. registered, failed")
	fs.StringVar(&req.ValidationStatus, "validation-status", "", "e.g. passed, failed")
	fs.StringVar(&req.Workload, "workload", "", "declared workload name")
	var params []string
	fs.StringArrayVar(&params, "parameter", nil, "only runs whose workload had this parameter value, KEY=VALUE (repeatable; all must match)")
	fs.StringVar(&since, "since", "", "only runs created at or after this RFC 3339 time")
	fs.StringVar(&until, "until", "", "only runs created before this RFC 3339 time")
	cli.PageFlags(fs, &req.Limit, &req.Cursor, query.DefaultLimit, query.MaxLimit)
	if err := c.parse(fs, args); err != nil {
		return err
	}
	var err error
	if req.Parameters, err = parameterFilter(params); err != nil {
		return err
	}
	if req.CreatedAfter, err = parseTime("--since", since); err != nil {
		return err
	}
	if req.CreatedBefore, err = parseTime("--until", until); err != nil {
		return err
	}
	ws, err := c.workspace()
	if err != nil {
		return err
	}
	res, err := query.ListRuns(ctx, ws, req)
	if err != nil {
		return err
	}
	return c.emit(res, func(w io.Writer) { renderRuns(w, res, c.Env.StdoutColumns, c.Env.ColorStdout()) })
}

// whatWidth bounds the WORKLOAD column of runs list (a workload and its
// parameters, or an imported file's name), so one long name cannot push
// the outcome columns off the screen.
const whatWidth = 48

// renderRuns prints runs list: per run what tells it apart from the
// others (the workload and its parameter values or the imported file, the
// adapter, the outcome with its exit code or signal, wall time, peak RSS,
// the benchmark count) and its capture state.
//
// On a terminal (width > 0: its columns) the table fits the line: BENCH,
// PEAK RSS, ADAPTER, WALL and CREATED are left out, in that order, as far
// as needed (a line then says which), and WORKLOAD and STATE are cut in
// the middle; run ids and outcomes are never cut. In a pipe (width 0)
// every column is printed, so grep and logs see each value.
func renderRuns(w io.Writer, res *query.RunList, width int, color bool) {
	t := &cli.Table{
		Header:  []string{"RUN", "CREATED", "WORKLOAD", "ADAPTER", "OUTCOME", "WALL", "PEAK RSS", "BENCH", "STATE"},
		Flex:    []int{2, 8},
		Drop:    []int{7, 6, 3, 5, 1},
		MinFlex: 8,
		Max:     []int{2: whatWidth},
	}
	for _, r := range res.Runs {
		t.Rows = append(t.Rows, []string{r.RunID, r.CreatedAt.Format("2006-01-02 15:04:05"),
			runWhat(r), orDash(r.Adapter), runOutcome(r.RunType, r.ExecutionStatus, r.ExitCode, r.Signal),
			optNs(r.WallTimeNs), optBytes(r.PeakRSSBytes), optCount(r.BenchmarkCount), runState(r)})
	}
	t.Color = func(row, col int) cli.Style {
		if col == 4 {
			return outcomeStyle(t.Rows[row][4])
		}
		return ""
	}
	if dropped, _ := t.Write(w, width, color); len(dropped) > 0 {
		fmt.Fprintf(w, "left out to fit: %s (--json has all)\n", strings.Join(dropped, ", "))
	}
	footer(w, res.Returned, res.Total, res.Truncated, res.Cursor)
}

// runWhat names what a run ran: "workload k=v k=v" or "import FILE".
func runWhat(r query.RunSummary) string {
	if r.RunType == run.TypeImport {
		return "import " + orDash(r.SourceName)
	}
	if r.WorkloadName == "" {
		return "-"
	}
	return strings.TrimSpace(r.WorkloadName + " " + paramText(r.Parameters))
}

// paramText prints parameter values as sorted key=value pairs.
func paramText(p map[string]string) string {
	keys := make([]string, 0, len(p))
	for k := range p {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + p[k]
	}
	return strings.Join(parts, " ")
}

// runOutcome is an execution's status with how the process ended
// ("succeeded", "failed exit 1", "timed_out SIGKILL"); an import was
// not executed.
func runOutcome(runType, status string, exit *int32, signal string) string {
	if runType == run.TypeImport {
		return "imported"
	}
	switch {
	case signal != "":
		return status + " " + signal
	case exit != nil && *exit != 0:
		return fmt.Sprintf("%s exit %d", status, *exit)
	}
	return status
}

// runState is the capture status (with the validation's when one was
// asked for) and why the run's latest revision was written, when that
// says more than the statuses: "registered, validation passed",
// "quarantined: ARTIFACT_PARSE_FAILED", "registered; owner process gone
// (PROCESS_CANCELLED)". The error code is always there when there is one.
func runState(r query.RunSummary) string {
	state := r.CaptureStatus
	if reason := r.Reason; reason != "" && reason != r.ExecutionStatus && reason != r.CaptureStatus {
		if strings.HasPrefix(reason, r.CaptureStatus) {
			state = reason
		} else {
			state += "; " + reason
		}
	}
	if v := r.ValidationStatus; v != "" && v != run.ValidationNotRequested {
		state += ", validation " + v
	}
	if r.ErrorCode != "" && !strings.Contains(state, r.ErrorCode) {
		state += " (" + r.ErrorCode + ")"
	}
	return state
}

func optNs(p *int64) string {
	if p == nil {
		return "-"
	}
	return formatQuantity(float64(*p), "ns")
}

func optBytes(p *int64) string {
	if p == nil || *p <= 0 {
		return "-"
	}
	return bytesHuman(*p)
}

func optCount(n int) string {
	if n == 0 {
		return "-"
	}
	return fmt.Sprint(n)
}

// parameterFilter reads repeated --parameter KEY=VALUE flags; nil when
// there are none.
func parameterFilter(flags []string) (map[string]string, error) {
	var out map[string]string
	for _, kv := range flags {
		k, v, err := query.ParseParameter(kv)
		if err != nil {
			return nil, err
		}
		if out == nil {
			out = map[string]string{}
		}
		if _, dup := out[k]; dup {
			return nil, cli.Usagef("--parameter %s is given twice", k)
		}
		out[k] = v
	}
	return out, nil
}

func parseTime(flag, v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return time.Time{}, cli.Usagef("%s: %v", flag, err)
	}
	return t, nil
}

func footer(w io.Writer, returned int, total int64, truncated bool, cursor string) {
	fmt.Fprintf(w, "%d of %d", returned, total)
	if truncated {
		fmt.Fprintf(w, "; more with --cursor %s", cursor)
	}
	fmt.Fprintln(w)
}

func runsShow(ctx context.Context, c *Context, args []string) error {
	fs := c.flags("runs show", "RUN_ID")
	if err := c.parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return cli.Usagef("runs show needs exactly one RUN_ID")
	}
	ws, err := c.workspace()
	if err != nil {
		return err
	}
	d, err := query.ShowRun(ctx, ws, fs.Arg(0))
	if err != nil {
		return err
	}
	return c.emit(d, func(w io.Writer) { renderRun(w, d) })
}

// renderRun prints runs show: the run, what it ran (workload, parameter
// values, adapter, or the imported file), its outcome and resources, its
// artifacts, and each limitation once.
func renderRun(w io.Writer, d *query.RunDetail) {
	m := d.Run
	if !d.Published {
		fmt.Fprintln(w, "(not published yet: showing the run's current manifest)")
	} else if d.PublishedRevision != d.CurrentRevision {
		fmt.Fprintf(w, "(showing published revision %d; the run is at revision %d)\n", d.PublishedRevision, d.CurrentRevision)
	}
	fmt.Fprintf(w, "run         %s (%s, revision %d)\n", m.RunID, m.RunType, m.Revision)
	fmt.Fprintf(w, "created     %s\n", m.CreatedAt.Format("2006-01-02 15:04:05.000Z"))
	if wl := m.Workload; wl != nil {
		line := cli.Name(wl.Name)
		if p := paramText(wl.Parameters); p != "" {
			line += "  " + cli.Name(p)
		}
		line += "  (adapter " + cli.Name(orDash(wl.Adapter))
		if wl.Collector != "" {
			line += ", collector " + cli.Name(wl.Collector)
			if wl.CollectorVersion != "" {
				line += " " + cli.Name(wl.CollectorVersion)
			}
		}
		line += ")"
		fmt.Fprintf(w, "workload    %s\n", line)
	}
	if im := m.Import; im != nil {
		fmt.Fprintf(w, "imported    %s (by %s)\n", cli.Name(orDash(im.SourceName)), cli.Name(orDash(im.RequestedBy)))
	}
	fmt.Fprintf(w, "status      execution %s, capture %s, validation %s\n", m.ExecutionStatus, m.CaptureStatus, m.ValidationStatus)
	if m.Reason != "" && m.Reason != m.ExecutionStatus && m.Reason != m.CaptureStatus {
		fmt.Fprintf(w, "reason      %s\n", cli.Safe(m.Reason))
	}
	if p := m.Process; p != nil {
		fmt.Fprintf(w, "process     %s\n", processLine(p))
		if u := p.Collector; u != nil {
			fmt.Fprintf(w, "collector   %s\n", usageLine(u))
		}
	}
	if d.BenchmarkCount > 0 {
		fmt.Fprintf(w, "benchmarks  %d (flameox measurements query --run %s)\n", d.BenchmarkCount, m.RunID)
	}
	if m.Environment != nil {
		fmt.Fprintf(w, "environment %s (%s)\n", m.Environment.EnvironmentID, m.Environment.IdentityQuality)
	}
	if m.SourceState != nil {
		fmt.Fprintf(w, "source      %s (%s)\n", m.SourceState.SourceStateID, m.SourceState.IdentityQuality)
	}
	for _, a := range m.Artifacts {
		fmt.Fprintf(w, "artifact    %s %s (%s, %s, %d bytes)\n", a.ArtifactID, cli.Name(a.DisplayName), a.Kind, a.Sensitivity, a.ByteLength)
	}
	if m.Error != nil {
		fmt.Fprintf(w, "error       %s\n", cli.Safe(m.Error.Error()))
	}
	printLimitations(w, "limitation  ", m.Limitations)
}

// processLine is how a process ended and what it used: "exit 0, wall
// 3.542s, user 3.453s, sys 182.0ms, peak RSS 95.7 MiB (python3.11)". The
// figures are the workload's own (see run.ProcessInfo), named by its root
// process; peak RSS says when it is unknown.
func processLine(p *run.ProcessInfo) string {
	out := fmt.Sprintf("exit %d", p.ExitCode)
	if p.Signal != "" {
		out += ", signal " + p.Signal
	}
	if p.TimedOut {
		out += ", timed out"
	}
	out += ", wall " + formatQuantity(float64(p.WallTimeNs), "ns") + ", user " + formatQuantity(float64(p.UserTimeNs), "ns") +
		", sys " + formatQuantity(float64(p.SystemTimeNs), "ns") + ", peak RSS " + rssText(p.PeakRSSBytes, p.PeakRSSSource)
	switch len(p.Processes) {
	case 0:
	case 1:
		out += " (" + cli.Cut(p.Processes[0], 40) + ")"
	default:
		// The sampled children differ run to run; the root does not
		// (--json lists them all).
		out += " (" + cli.Cut(p.Processes[0], 40) + " and its children)"
	}
	return out
}

// usageLine is the resource use of the processes above a wrapped
// workload (the collector: py-spy, perf, bwrap), and how they ended when
// that was not exit 0.
func usageLine(u *run.Usage) string {
	exit := ""
	switch {
	case u.Signal != "":
		exit = "signal " + u.Signal + ", "
	case u.ExitCode != 0:
		exit = fmt.Sprintf("exit %d, ", u.ExitCode)
	}
	return cli.Cut(orDash(strings.Join(u.Processes, ", ")), 60) + ": " + exit + "user " + formatQuantity(float64(u.UserTimeNs), "ns") +
		", sys " + formatQuantity(float64(u.SystemTimeNs), "ns") + ", peak RSS " + rssText(u.PeakRSSBytes, u.PeakRSSSource) +
		" (not counted in the workload's figures)"
}

func rssText(n int64, source string) string {
	if source == "unknown" || n <= 0 {
		return "unknown"
	}
	return bytesHuman(n)
}

// printLimitations prints each distinct limitation once, in order, however
// many sections of a result carry it.
func printLimitations(w io.Writer, label string, lists ...[]string) {
	seen := map[string]bool{}
	for _, list := range lists {
		for _, l := range list {
			if seen[l] {
				continue
			}
			seen[l] = true
			fmt.Fprintf(w, "%s%s\n", label, cli.Safe(l))
		}
	}
}

func artifactsList(ctx context.Context, c *Context, args []string) error {
	fs := c.flags("artifacts list", "[--kind K] [--run RUN_ID] [--limit N] [--cursor C]")
	var req query.ListArtifactsRequest
	fs.StringVar(&req.Kind, "kind", "", "only objects registered with this kind")
	fs.StringVar(&req.RunID, "run", "", "only objects this run registered")
	cli.PageFlags(fs, &req.Limit, &req.Cursor, query.DefaultLimit, query.MaxLimit)
	if err := c.parse(fs, args); err != nil {
		return err
	}
	ws, err := c.workspace()
	if err != nil {
		return err
	}
	res, err := query.ListArtifacts(ctx, ws, req)
	if err != nil {
		return err
	}
	return c.emit(res, func(w io.Writer) {
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ARTIFACT\tBYTES\tKINDS\tSENSITIVITY\tREGISTRATIONS\tNAME")
		for _, a := range res.Artifacts {
			fmt.Fprintf(tw, "%s\t%d\t%v\t%s\t%d\t%s\n", a.ArtifactID, a.ByteLength, a.Kinds, a.EffectiveSensitivity, a.Registrations, cli.Name(a.DisplayName))
		}
		tw.Flush()
		footer(w, res.Returned, res.Total, res.Truncated, res.Cursor)
	})
}

func artifactsShow(ctx context.Context, c *Context, args []string) error {
	fs := c.flags("artifacts show", "ARTIFACT_ID")
	if err := c.parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return cli.Usagef("artifacts show needs exactly one ARTIFACT_ID")
	}
	ws, err := c.workspace()
	if err != nil {
		return err
	}
	d, err := query.ShowArtifact(ctx, ws, fs.Arg(0))
	if err != nil {
		return err
	}
	return c.emit(d, func(w io.Writer) {
		fmt.Fprintf(w, "artifact    %s\nbytes       %d\npayload     %s\nsensitivity %s (effective)\n", d.ArtifactID, d.ByteLength, d.PayloadPath, d.EffectiveSensitivity)
		for _, r := range d.Registrations {
			fmt.Fprintf(w, "registered  run %s as %s (%s, %s, role %s, by %s)\n", r.RunID, cli.Name(r.DisplayName), r.Kind, r.Sensitivity, r.Role, cli.Name(r.Producer))
		}
	})
}

// runsOutput prints one page of a run's stored stdout or stderr (the
// redacted bytes the capture kept), escaped, with where the next one
// starts.
func runsOutput(ctx context.Context, c *Context, args []string) error {
	fs := c.flags("runs output", "RUN_ID")
	var req capture.OutputRequest
	fs.StringVar(&req.Stream, "stream", "stdout", "stdout, stderr, oracle_stdout or oracle_stderr")
	fs.Int64Var(&req.Offset, "offset", 0, "first byte to read (a page's next_offset)")
	fs.Int64Var(&req.MaxBytes, "max-bytes", capture.DefaultOutputPage, fmt.Sprintf("bytes to read, at most %d", capture.MaxOutputPage))
	if err := c.parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return cli.Usagef("runs output needs exactly one RUN_ID")
	}
	ws, err := c.workspace()
	if err != nil {
		return err
	}
	req.RunID = fs.Arg(0)
	p, err := capture.ReadOutput(ctx, ws, req)
	if err != nil {
		return err
	}
	return c.emit(p, func(w io.Writer) {
		io.WriteString(w, p.Text)
		if p.Text != "" && !strings.HasSuffix(p.Text, "\n") {
			fmt.Fprintln(w)
		}
		switch {
		case p.ArtifactID == "":
			fmt.Fprintf(c.Env.Stderr, "run %s wrote nothing on %s\n", p.RunID, p.Stream)
		case p.Truncated:
			fmt.Fprintf(c.Env.Stderr, "bytes %d-%d of %d; more with --offset %d\n", p.Offset, p.NextOffset, p.Total, p.NextOffset)
		}
	})
}
