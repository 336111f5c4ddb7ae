package flameox

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/flameox/flameox/pkg/analysis"
	"github.com/flameox/flameox/pkg/cli"
	"github.com/flameox/flameox/pkg/corpus"
	"github.com/flameox/flameox/pkg/workspace"
)

// pytorchCommands are analyze pytorch.
func pytorchCommands() []*Command {
	return []*Command{{Name: "analyze pytorch", Args: "RUN_OR_ARTIFACT",
		Summary: "what a torch.profiler trace spent its time on: operators (self/total CPU, device time, shapes), synchronization, device idle gaps, warm-up vs steady steps, repeated small operations, memory",
		MCPTool: "analyze_pytorch", Run: analyzePyTorch}}
}

func analyzePyTorch(ctx context.Context, c *Context, args []string) error {
	var req analysis.PyTorchRequest
	var res *analysis.PyTorchResult
	return recipeCmd{name: "analyze pytorch", records: "its commit and input trace", positional: 1, flags: req.Flags,
		synopsis:  "RUN_OR_ARTIFACT [--sort self|total|device|count] [--limit N] [--format text|markdown|json] [--record]",
		wrongArgs: "analyze pytorch needs one RUN_OR_ARTIFACT",
		run: func(ctx context.Context, ws *workspace.Workspace, pos []string) (analysis.Recordable, error) {
			req.Input = pos[0]
			var err error
			res, err = analysis.PyTorch(ctx, ws, req)
			return res, err
		},
		emit: func(rec *analysis.Recorded, md bool) error {
			out := analysis.PyTorchOutput{PyTorchResult: res, Recorded: rec}
			return c.emit(out, func(w io.Writer) { renderPyTorch(w, &out, md) })
		}}.exec(ctx, c, args)
}

// renderPyTorch prints the recipe as aligned tables (text) or Markdown
// tables: the operators first, as torch.profiler's key_averages().table()
// does, then the device, synchronization, steps and memory.
func renderPyTorch(w io.Writer, out *analysis.PyTorchOutput, md bool) {
	res := out.PyTorchResult
	d := analysis.HumanDuration
	heading := func(s string) {
		if md {
			fmt.Fprintf(w, "\n#### %s\n\n", s)
		} else {
			fmt.Fprintf(w, "\n%s\n", s)
		}
	}
	table := func(head []string, rows [][]string) {
		if md {
			fmt.Fprintf(w, "| %s |\n|%s\n", strings.Join(head, " | "), strings.Repeat("---|", len(head)))
			for _, r := range rows {
				for i := range r {
					r[i] = strings.ReplaceAll(r[i], "|", `\|`)
				}
				fmt.Fprintf(w, "| %s |\n", strings.Join(r, " | "))
			}
			return
		}
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, strings.Join(head, "\t"))
		for _, r := range rows {
			fmt.Fprintln(tw, strings.Join(r, "\t"))
		}
		tw.Flush()
	}
	if md {
		fmt.Fprintf(w, "### flameox analyze pytorch: `%s`\n\n", res.Source.ArtifactID)
		fmt.Fprintf(w, "- **trace** %s (run `%s`), %s, commit `%s`\n", cli.Name(res.Source.DisplayName), res.Source.RunID, d(res.SpanNs), corpus.Short(res.CorpusCommitID))
	} else {
		fmt.Fprintf(w, "trace       %s (%s), run %s, %s, commit %s\n", cli.Name(res.Source.DisplayName), res.Source.ArtifactID, res.Source.RunID, d(res.SpanNs), corpus.Short(res.CorpusCommitID))
	}
	for _, o := range res.Observations {
		fmt.Fprintf(w, "- %s\n", cli.Safe(o))
	}
	heading(fmt.Sprintf("Operators (%d of %d, by %s)", len(res.Operators), res.OperatorsTotal, res.Parameters.Sort))
	var rows [][]string
	for _, o := range res.Operators {
		shapes := ""
		if len(o.Shapes) > 0 {
			shapes = o.Shapes[0].Shapes
			if len(o.Shapes) > 1 {
				shapes += fmt.Sprintf(" (+%d)", len(o.Shapes)-1)
			}
		}
		dev := "-"
		if o.DeviceTotalNs > 0 {
			dev = d(o.DeviceTotalNs)
		}
		alloc := "-"
		if o.Allocations > 0 {
			alloc = analysis.HumanBytes(o.AllocBytes)
		}
		rows = append(rows, []string{cli.Name(o.Name), fmt.Sprint(o.Count), d(o.SelfCPUNs), d(o.TotalCPUNs), d(o.MeanNs), dev, alloc, cli.Name(shapes)})
	}
	table([]string{"operator", "calls", "self CPU", "CPU total", "CPU mean", "device total", "allocated", "input shapes"}, rows)
	if len(res.Kernels) > 0 {
		heading(fmt.Sprintf("Device work (%d of %d)", len(res.Kernels), res.KernelsTotal))
		rows = rows[:0]
		for _, k := range res.Kernels {
			rows = append(rows, []string{cli.Name(k.Name), k.Category, fmt.Sprint(k.Count), d(k.TotalNs), d(k.MaxNs)})
		}
		table([]string{"kernel / copy", "category", "count", "total", "max"}, rows)
	}
	if len(res.Devices) > 0 {
		heading("Devices")
		rows = rows[:0]
		for _, v := range res.Devices {
			gap := "-"
			if len(v.Gaps) > 0 {
				gap = fmt.Sprintf("%s at %s", d(v.Gaps[0].DurationNs), d(v.Gaps[0].StartNs))
			}
			rows = append(rows, []string{cli.Name(v.Process), d(v.BusyNs), d(v.IdleNs), fmt.Sprintf("%.1f%%", 100*v.Utilization), fmt.Sprint(v.GapCount), gap})
		}
		table([]string{"device", "busy", "idle", "utilization", "gaps", "longest gap"}, rows)
	}
	if len(res.Sync.Calls) > 0 {
		heading(fmt.Sprintf("Synchronization (host %s, device %s)", d(res.Sync.HostNs), d(res.Sync.DeviceNs)))
		rows = rows[:0]
		for _, s := range res.Sync.Calls {
			rows = append(rows, []string{cli.Name(s.Name), s.Category, fmt.Sprint(s.Count), d(s.TotalNs)})
		}
		table([]string{"call", "category", "count", "total"}, rows)
	}
	if st := res.Steps; st != nil {
		heading(fmt.Sprintf("Steps (%d; first %s, steady median %s ± %s MAD)", st.Count, d(st.FirstNs), d(st.SteadyMedianNs), d(st.SteadyMADNs)))
		rows = rows[:0]
		for _, s := range st.Steps {
			rows = append(rows, []string{cli.Name(s.Name), d(s.StartNs), d(s.DurationNs)})
		}
		table([]string{"step", "start", "duration"}, rows)
	}
	if len(res.RepeatedSmallOps) > 0 {
		heading(fmt.Sprintf("Repeated small operations (>= 3 calls, mean <= %s)", d(res.SmallOpCutoffNs)))
		rows = rows[:0]
		for _, o := range res.RepeatedSmallOps {
			rows = append(rows, []string{cli.Name(o.Name), fmt.Sprint(o.Count), d(o.MeanNs), d(o.TotalNs)})
		}
		table([]string{"operator", "calls", "mean", "total"}, rows)
	}
	if len(res.Compilation) > 0 {
		heading("Compiled regions")
		rows = rows[:0]
		for _, c := range res.Compilation {
			rows = append(rows, []string{cli.Name(c.Name), fmt.Sprint(c.Count), d(c.TotalNs)})
		}
		table([]string{"region", "count", "total"}, rows)
	}
	if len(res.Memory) > 0 {
		heading("Memory")
		rows = rows[:0]
		for _, m := range res.Memory {
			peak := "-"
			if m.PeakBytes != nil {
				peak = analysis.HumanBytes(*m.PeakBytes)
			}
			rows = append(rows, []string{m.Device, analysis.HumanBytes(m.AllocatedBytes), fmt.Sprint(m.Allocations), analysis.HumanBytes(m.FreedBytes), peak})
		}
		table([]string{"device", "allocated", "allocations", "freed", "peak"}, rows)
	}
	c := res.Coverage
	heading("Coverage")
	flags := []struct {
		name string
		ok   bool
	}{{"self CPU time", c.SelfCPUTime}, {"device time", c.DeviceTime}, {"device linked to operators", c.DeviceLinked}, {"input shapes", c.InputShapes},
		{"memory", c.MemoryAllocations}, {"synchronization", c.Synchronization}, {"warm-up steps", c.WarmupPhases}, {"python stacks", c.PythonStacks}}
	var have, lack []string
	for _, f := range flags {
		if f.ok {
			have = append(have, f.name)
		} else {
			lack = append(lack, f.name)
		}
	}
	fmt.Fprintf(w, "in the trace: %s\n", strings.Join(have, ", "))
	if len(lack) > 0 {
		fmt.Fprintf(w, "not in it:    %s\n", strings.Join(lack, ", "))
	}
	if !md {
		fmt.Fprintln(w)
	}
	for _, l := range res.Limitations {
		if md {
			fmt.Fprintf(w, "- limitation: %s\n", cli.Safe(l))
		} else {
			fmt.Fprintf(w, "limitation  %s\n", cli.Safe(l))
		}
	}
	if out.Recorded != nil {
		fmt.Fprintf(w, "recorded    as analysis %s in commit %s\n", out.Recorded.AnalysisID, corpus.Short(out.Recorded.CorpusCommitID))
	}
	for _, s := range res.NextSteps {
		fmt.Fprintf(w, "next        %s\n", cli.Safe(s))
	}
}
