package flameox

import (
	"strings"

	"github.com/flameox/flameox/pkg/cli"
	"github.com/spf13/pflag"
)

// Terminal habits (docs/cli.md, "Terminal output"): --color=auto|always|never
// (and --no-color, NO_COLOR) decide colour, --quiet drops progress and
// information lines from stderr; both are global flags, accepted before
// the command and, like --json, after it.

// terminalFlags registers --color, --no-color and --quiet on fs, into c.
func (c *Context) terminalFlags(fs *pflag.FlagSet) {
	if c.color == "" {
		c.color = "auto"
	}
	fs.StringVar(&c.color, "color", c.color, "colour: auto (only a terminal, not with NO_COLOR or TERM=dumb), always or never")
	fs.BoolVar(&c.noColor, "no-color", c.noColor, "no colour (--color=never)")
	fs.BoolVarP(&c.Env.Quiet, "quiet", "q", c.Env.Quiet, "no progress and no information lines on stderr (errors still)")
}

// applyTerminal puts the parsed --color into the Env.
func (c *Context) applyTerminal() error {
	mode, err := cli.ParseColor(c.color)
	if err != nil {
		return err
	}
	if c.noColor {
		mode = cli.ColorNever
	}
	c.Env.Color = mode
	return nil
}

// outcomeStyle colours an execution's outcome in a table: green when it
// succeeded, red when it failed, timed out or was cancelled.
func outcomeStyle(outcome string) cli.Style {
	switch word, _, _ := strings.Cut(outcome, " "); word {
	case "succeeded", "imported":
		return cli.Green
	case "failed", "timed_out", "cancelled", "killed", "crashed":
		return cli.Red
	}
	return ""
}
