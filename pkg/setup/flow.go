package setup

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/flameox/flameox/pkg/fault"
)

// Request is one setup command line.
type Request struct {
	Hosts    []string // named hosts (flags or --client)
	All      bool     // every detected host
	Scope    Scope
	Yes      bool // apply without asking
	DryRun   bool // show, write nothing
	JSON     bool // the caller prints Result; nothing is printed here
	Remove   bool // take flameox's entry out instead
	Rollback bool
	Verify   bool
}

// IO is where the flow talks to a person.
type IO struct {
	In          io.Reader
	Out, Err    io.Writer
	Interactive bool // In is a terminal: setup may ask
	// Environ is the environment setup runs in (for --verify's servers).
	Environ []string
}

// Interactive reports whether r is a terminal.
func Interactive(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// Result is what setup did; its JSON form is `flameox setup --json`.
type Result struct {
	SchemaVersion int             `json:"schema_version"`
	Operation     string          `json:"operation"` // configure, remove, rollback, verify, detect
	Scope         Scope           `json:"scope"`
	Executable    string          `json:"executable"`
	DryRun        bool            `json:"dry_run"`
	Applied       bool            `json:"applied"`
	Detected      []Detection     `json:"detected,omitempty"`
	Changes       []*Change       `json:"changes"`
	Journal       string          `json:"journal,omitempty"`
	Rollback      *RollbackResult `json:"rollback,omitempty"`
	Verified      []Verified      `json:"verified,omitempty"`
	Message       string          `json:"message"`
}

// Failed reports whether a verification failed.
func (r *Result) Failed() bool {
	for _, v := range r.Verified {
		if !v.OK {
			return true
		}
	}
	return false
}

// Run carries out req: detect, plan, show the diffs, ask, apply with a
// journal; or roll back; or verify.
func Run(ctx context.Context, o Options, req Request, sio IO) (*Result, error) {
	if req.Scope == "" {
		req.Scope = User
	}
	if req.Scope != User && req.Scope != Project {
		return nil, fault.New(fault.InvalidArguments, "--scope is user or project, not %q", req.Scope)
	}
	modes := 0
	for _, on := range []bool{req.Rollback, req.Verify, req.Remove} {
		if on {
			modes++
		}
	}
	if modes > 1 {
		return nil, fault.New(fault.InvalidArguments, "choose one of --rollback, --verify and --remove")
	}
	res := &Result{SchemaVersion: 1, Operation: "configure", Scope: req.Scope, Executable: o.Executable, DryRun: req.DryRun, Changes: []*Change{}}
	say := func(format string, args ...any) {
		if !req.JSON {
			fmt.Fprintf(sio.Out, format, args...)
		}
	}
	if req.Rollback {
		res.Operation = "rollback"
		if len(req.Hosts) > 0 || req.All {
			return nil, fault.New(fault.InvalidArguments, "--rollback undoes the last setup run as a whole; it takes no host flags")
		}
		rb, err := Rollback(ctx, o)
		if err != nil {
			return nil, err
		}
		res.Rollback, res.Applied = rb, true
		for _, f := range rb.Files {
			say("%s  %s (%s)\n", strings.ReplaceAll(f.Action, "_", " "), f.Path, f.Host)
		}
		res.Message = fmt.Sprintf("rolled back the setup run of %s; %d earlier run(s) can still be rolled back", rb.Created.Format("2006-01-02 15:04:05Z"), rb.Left)
		say("%s\n", res.Message)
		return res, nil
	}
	hosts, err := Selected(o, req.Scope, req.Hosts, req.All)
	if err != nil {
		return nil, err
	}
	if req.Verify {
		res.Operation = "verify"
		if len(hosts) == 0 {
			for _, d := range Detect(o, req.Scope) {
				if d.Configured {
					h, _ := HostByName(d.Host)
					hosts = append(hosts, h)
				}
			}
		}
		if len(hosts) == 0 {
			return nil, fault.New(fault.NotFound, "no host has a %s entry in its %s configuration", ServerName, req.Scope).
				Fix("Run 'flameox setup --HOST' first (flameox setup lists the hosts).")
		}
		res.Verified = Verify(ctx, o, hosts, req.Scope, sio.Environ)
		for _, v := range res.Verified {
			if v.OK {
				say("ok    %-12s %s %s, %d tools (%s)\n", v.Host, v.Server, v.ServerVersion, v.Tools, v.File)
			} else {
				say("FAIL  %-12s %s\n", v.Host, v.Error.Human())
			}
			if v.Stale {
				say("      %s starts %s, not this flameox (%s); run setup again to update it\n", v.Host, first(v.Argv), o.Executable)
			}
		}
		res.Message = "verified " + itoa(len(res.Verified)) + " host(s)"
		if res.Failed() {
			res.Message = "verification failed"
		}
		return res, nil
	}
	if req.Remove {
		res.Operation = "remove"
	}
	if len(hosts) == 0 {
		res.Operation = "detect"
		res.Detected = Detect(o, req.Scope)
		if !req.JSON {
			printDetected(sio.Out, res.Detected)
		}
		if !sio.Interactive || req.JSON || req.Yes {
			res.Message = "no host selected; nothing changed. Name hosts (--claude, --cursor, --codex, --gemini, --opencode, --antigravity, --vscode) or pass --all for every detected one"
			say("\n%s\n", res.Message)
			return res, nil
		}
		names, err := ask(sio, "\nConfigure which hosts? (names or numbers, separated by spaces; empty for none): ")
		if err != nil {
			return nil, err
		}
		picked, err := pick(res.Detected, names)
		if err != nil {
			return nil, err
		}
		if len(picked) == 0 {
			res.Message = "no host selected; nothing changed"
			say("%s\n", res.Message)
			return res, nil
		}
		res.Operation = "configure"
		if req.Remove {
			res.Operation = "remove"
		}
		if hosts, err = Selected(o, req.Scope, picked, false); err != nil {
			return nil, err
		}
	}
	if why := transient(o.Executable); !req.Remove && sio.Err != nil && why != "" {
		fmt.Fprintf(sio.Err, "warning: %s is %s; hosts would start a binary that goes away. %s\n", o.Executable, why, transientFix(why))
	}
	changes, err := Plan(o, hosts, req.Scope, req.Remove)
	if err != nil {
		return nil, err
	}
	res.Changes = changes
	n := 0
	for _, c := range changes {
		if c.Changes() {
			n++
			say("%s", c.Diff)
		}
	}
	for _, c := range changes {
		say("%-12s %-16s %s\n", c.Host, strings.ReplaceAll(c.Action, "_", " "), c.File)
	}
	if n == 0 {
		res.Message = "nothing to change: every selected host is already as setup would write it"
		if req.Remove {
			res.Message = "nothing to change: no selected host has a " + ServerName + " entry"
		}
		say("%s\n", res.Message)
		return res, nil
	}
	if req.DryRun {
		res.Message = "dry run: " + itoa(n) + " file(s) would change; nothing was written"
		say("%s\n", res.Message)
		return res, nil
	}
	if !req.Yes {
		if !sio.Interactive || req.JSON {
			return res, fault.New(fault.ExecutionRefused, "%d file(s) would change, but stdin is not a terminal to ask on; nothing was written", n).
				Fix("Review the diff above, then run the same command with --yes (or --dry-run to only look).")
		}
		answer, err := ask(sio, fmt.Sprintf("Write these changes to %d file(s)? [y/N] ", n))
		if err != nil {
			return nil, err
		}
		if a := strings.ToLower(strings.TrimSpace(answer)); a != "y" && a != "yes" {
			res.Message = "nothing changed"
			say("%s\n", res.Message)
			return res, nil
		}
	}
	op := "configure"
	if req.Remove {
		op = "remove"
	}
	jpath, err := Apply(ctx, o, changes, op)
	if err != nil {
		return nil, err
	}
	res.Applied, res.Journal = true, jpath
	res.Message = "wrote " + itoa(n) + " file(s); undo with 'flameox setup --rollback', check with 'flameox setup --verify'"
	say("%s\n", res.Message)
	return res, nil
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

func ask(sio IO, prompt string) (string, error) {
	fmt.Fprint(sio.Err, prompt)
	line, err := bufio.NewReader(sio.In).ReadString('\n')
	if err != nil && line == "" {
		if err == io.EOF {
			return "", nil
		}
		return "", fault.Wrap(fault.ExecutionRefused, err, "read the answer")
	}
	return line, nil
}

func pick(ds []Detection, answer string) ([]string, error) {
	var out []string
	for _, w := range strings.FieldsFunc(answer, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' || r == '\r' }) {
		if i, err := strconv.Atoi(w); err == nil {
			if i < 1 || i > len(ds) {
				return nil, fault.New(fault.InvalidArguments, "no host number %d (1 to %d)", i, len(ds))
			}
			out = append(out, ds[i-1].Host)
			continue
		}
		if _, err := HostByName(w); err != nil {
			return nil, err
		}
		out = append(out, w)
	}
	return out, nil
}

func printDetected(w io.Writer, ds []Detection) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "#\tHOST\tFOUND\tFLAMEOX\tFILE")
	for i, d := range ds {
		found, conf := "-", "-"
		if d.Detected {
			found = "yes"
		}
		if d.Configured {
			conf = "configured"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\n", i+1, d.Host, found, conf, d.File)
	}
	tw.Flush()
}

// transient says why the binary at exe may vanish after setup: a go run
// build in the Go build cache's temporary directory, or npx's cache
// (`npx flameox setup`), which `npm cache clean` empties. "" otherwise.
func transient(exe string) string {
	sep := string(os.PathSeparator)
	switch {
	case strings.Contains(exe, sep+"go-build"):
		return "a temporary build (go run)"
	case strings.Contains(exe, sep+"_npx"+sep):
		return "in npx's cache"
	}
	return ""
}

func transientFix(why string) string {
	if strings.Contains(why, "npx") {
		return "Run `npm install -g flameox` and then `flameox setup`, so that hosts start the installed binary."
	}
	return "Install flameox and run setup from the installed binary."
}
