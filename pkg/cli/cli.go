package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/flameox/flameox/pkg/fault"
	"github.com/spf13/pflag"
)

// OutputMode says how a tool reports its result and errors on stdout.
type OutputMode int

const (
	// Human: readable text on stdout, errors as text on stderr.
	Human OutputMode = iota
	// JSON: the domain result as one JSON document on stdout; errors also
	// as a JSON envelope on stdout (and text on stderr).
	JSON
	// Records: JSON lines on stdout; an error becomes an "error" record.
	Records
)

// Env is everything a tool may take from its process.
type Env struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// Getenv reads the parent environment. Tools must never copy the whole
	// environment into records; see pkg/broker for child environments.
	Getenv  func(string) string
	Environ func() []string
	// Dir is the working directory the tool was started in.
	Dir string
	Now func() time.Time
	// StderrTerminal reports whether stderr is a terminal (for progress).
	StderrTerminal bool
	// StdoutTerminal reports whether stdout is a terminal (for colour).
	StdoutTerminal bool
	// StdoutColumns is the width of the terminal stdout is, 0 when it is
	// not one; text output reads it through Width.
	StdoutColumns int
	// Executable is the path of the running binary (for finding siblings).
	Executable string

	// Mode is set by the tool once it has parsed its flags.
	Mode OutputMode
	// Name is the program name used as the prefix of error messages.
	Name string
	// Color is the --color setting (ColorStdout, ColorStderr); Quiet is
	// --quiet: no progress and no information lines on stderr (Infof),
	// errors still. Both are set by the tool's global flags.
	Color ColorMode
	Quiet bool
}

// RunFunc is the one signature every tool has.
type RunFunc func(ctx context.Context, env *Env, args []string) error

// OSEnv builds an Env from the current process.
func OSEnv(name string) *Env {
	dir, _ := os.Getwd()
	exe, _ := os.Executable()
	return &Env{
		Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr,
		Getenv: os.Getenv, Environ: os.Environ,
		Dir: dir, Now: time.Now,
		StderrTerminal: isTerminal(os.Stderr),
		StdoutTerminal: isTerminal(os.Stdout),
		StdoutColumns:  terminalColumns(os.Stdout),
		Executable:     exe,
		Name:           name,
	}
}

// Main runs tool with the process's arguments and returns the exit status.
// SIGINT and SIGTERM cancel the tool's context; a second signal is left to
// its default action. SIGPIPE is deliberately not caught, so a closed stdout
// (`fox-… | head`) ends the process quietly.
func Main(name string, tool RunFunc) int {
	lateFirstGC()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		// After the first signal the tool cleans up; a second one takes the
		// default action and ends the process at once.
		<-ctx.Done()
		stop()
	}()
	env := OSEnv(name)
	return Run(ctx, env, tool, os.Args[1:])
}

// Run runs tool in env and reports its error; it is Main without the process.
func Run(ctx context.Context, env *Env, tool RunFunc, args []string) int {
	err := tool(ctx, env, args)
	return Report(env, err)
}

// Report writes err the way env.Mode asks and returns the exit status.
func Report(env *Env, err error) int {
	if err == nil {
		return fault.ExitOK
	}
	if errors.Is(err, pflag.ErrHelp) {
		return fault.ExitOK
	}
	var neg *NegativeResult
	if errors.As(err, &neg) {
		if neg.Message != "" {
			fmt.Fprintf(env.Stderr, "%s: %s\n", env.Name, neg.Message)
		}
		if neg.Code != 0 {
			return neg.Code
		}
		return fault.ExitNegative
	}
	fe := fault.As(err)
	if errors.Is(err, context.Canceled) && fe.Code == fault.InternalError {
		fe = fault.Wrap(fault.ProcessCancelled, err, "interrupted")
	}
	fmt.Fprintf(env.Stderr, "%s %s\n", Paint(env.ColorStderr(), BoldRed, env.Name+":"), SafeLines(fe.Human()))
	switch env.Mode {
	case JSON:
		writeJSON(env.Stdout, ErrorEnvelope{SchemaVersion: 1, OK: false, Error: fe})
	case Records:
		writeJSONLine(env.Stdout, ErrorRecord{Record: "error", SchemaVersion: 1, Error: *fe})
	}
	return fe.ExitCode()
}

// NegativeResult ends a tool with a non-zero exit status (1 unless Code
// says otherwise) after its result has already been written: a validation
// that found problems, a gate that failed, a captured workload that failed
// or timed out. No error envelope is printed; the result says what happened.
type NegativeResult struct {
	Message string
	Code    int
}

func (n *NegativeResult) Error() string { return n.Message }

// ErrorEnvelope is what `--json` prints when a command fails; MCP returns the
// same envelope.
type ErrorEnvelope struct {
	SchemaVersion int          `json:"schema_version"`
	OK            bool         `json:"ok"`
	Error         *fault.Error `json:"error"`
}

// ErrorRecord is the record a plumbing tool writes when it fails, so that
// downstream stages see why the stream ended.
type ErrorRecord struct {
	Record        string `json:"record"`
	SchemaVersion int    `json:"schema_version"`
	fault.Error
}

func writeJSON(w io.Writer, v any) {
	data, err := json.MarshalIndent(v, "", "  ")
	if err == nil {
		w.Write(append(EscapeJSON(data), '\n'))
	}
}

func writeJSONLine(w io.Writer, v any) {
	data, err := json.Marshal(v)
	if err == nil {
		w.Write(append(EscapeJSON(data), '\n'))
	}
}

// PrintJSON writes v as an indented JSON document (the --json form), with
// the characters EscapeJSON names escaped.
func PrintJSON(w io.Writer, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fault.Wrap(fault.InternalError, err, "encode result")
	}
	_, err = w.Write(append(EscapeJSON(data), '\n'))
	return err
}

// NewFlags returns a flag set that reports errors instead of exiting and
// prints usage to env.Stderr.
func NewFlags(env *Env, name, usage string) *pflag.FlagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	fs.SortFlags = false
	fs.Usage = func() {
		fmt.Fprintf(env.Stderr, "%s\n\nFlags:\n%s", usage, fs.FlagUsages())
	}
	return fs
}

// Parse parses args and converts flag errors into INVALID_ARGUMENTS.
//
// A flag set is named for its command line, "fox-capture import" or
// "fox-publish". The message names only the verb ("import: unknown flag:
// --x"), because Report already puts the program name in front of every
// message; the remediation names the whole command.
func Parse(fs *pflag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return err
		}
		_, verb, _ := strings.Cut(fs.Name(), " ")
		e := fault.Wrap(fault.InvalidArguments, err, "%s", verb)
		if verb == "" {
			e.Message = err.Error()
		}
		return e.Fix("Run '" + fs.Name() + " --help' for usage.")
	}
	return nil
}

// Usagef returns an INVALID_ARGUMENTS error.
func Usagef(format string, args ...any) error {
	return fault.New(fault.InvalidArguments, format, args...)
}

// HelpVerb handles a verb tool's missing verb or help request: with no
// arguments it prints usage and fails (missing verb); with -h, --help or
// help it prints usage and reports handled. Otherwise it does nothing.
func HelpVerb(env *Env, usage string, args []string) (handled bool, err error) {
	if len(args) > 0 && args[0] != "-h" && args[0] != "--help" && args[0] != "help" {
		return false, nil
	}
	fmt.Fprintln(env.Stderr, usage)
	if len(args) == 0 {
		return true, Usagef("missing verb")
	}
	return true, nil
}

func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// PageFlags registers the --limit and --cursor flags every list takes;
// def and max are the list's default and largest page.
func PageFlags(fs *pflag.FlagSet, limit *int, cursor *string, def, max int) {
	fs.IntVar(limit, "limit", 0, fmt.Sprintf("rows to return (default %d, max %d)", def, max))
	fs.StringVar(cursor, "cursor", "", "continue after a previous page")
}
