package flameox

import (
	"context"

	"github.com/flameox/flameox/pkg/analysis"
	"github.com/flameox/flameox/pkg/cli"
	"github.com/flameox/flameox/pkg/workspace"
	"github.com/spf13/pflag"
)

// recipeCmd is what every `flameox analyze RECIPE` command (memory,
// execution, pytorch, failures, scaling) shares: the request's flags,
// --format text|markdown|json and --record, a fixed number of positional
// arguments, the analysis, its optional recording, and the output.
type recipeCmd struct {
	name     string // "analyze memory"
	synopsis string // what follows the name in the usage line
	// records says what --record persists besides the result ("its
	// commit and input runs").
	records    string
	positional int
	wrongArgs  string // the usage error for another count
	flags      func(*pflag.FlagSet)
	// run takes the positional arguments and returns the recordable result.
	run func(ctx context.Context, ws *workspace.Workspace, pos []string) (analysis.Recordable, error)
	// emit prints the result (with its recording, nil when not asked) as
	// JSON or, when not --json, as text or Markdown.
	emit func(rec *analysis.Recorded, md bool) error
}

func (r recipeCmd) exec(ctx context.Context, c *Context, args []string) error {
	fs := c.flags(r.name, r.synopsis)
	r.flags(fs)
	format := fs.String("format", "text", "output: text, markdown, or json (as --json)")
	rec := fs.Bool("record", false, "persist the analysis (with "+r.records+") in the corpus")
	if err := c.parse(fs, args); err != nil {
		return err
	}
	if err := c.outputFormat(*format, "text", "markdown"); err != nil {
		return err
	}
	if fs.NArg() != r.positional {
		return cli.Usagef("%s", r.wrongArgs)
	}
	ws, err := c.workspace()
	if err != nil {
		return err
	}
	started := c.Env.Now()
	res, err := r.run(ctx, ws, fs.Args())
	if err != nil {
		return err
	}
	var recorded *analysis.Recorded
	if *rec {
		if recorded, err = c.record(ctx, res, started); err != nil {
			return err
		}
	}
	return r.emit(recorded, *format == "markdown")
}
