package workload

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/flameox/flameox/pkg/durable"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/lock"
	"github.com/flameox/flameox/pkg/workspace"
)

// Proposals: an agent drafts, a person adopts. propose_workload (MCP)
// writes a proposed `[workloads.NAME]` table to
// .diagnostics/proposals/NAME.toml, a complete flameox.toml of that one
// workload headed by its definition id. Nothing reads that directory to
// run anything: the workload declared in flameox.toml (if any) is what
// plans and captures use, and a name that is only proposed is refused
// (File.Workload) with the command that adopts it. `flameox workload
// approve NAME` shows the person the exact text diff of the table against
// flameox.toml, writes the table into flameox.toml (replacing the
// workload's own table text, or appending it; every other line, comments
// included, stays as it was), checks that what it wrote parses to the
// proposed definition id, approves that definition and removes the
// proposal.

// ProposalsDir is the directory of pending proposals inside the workspace.
const ProposalsDir = "proposals"

// Proposal is one workload as an agent proposes it: the fields of a
// `[workloads.NAME]` table.
type Proposal struct {
	Name           string                       `json:"name"`
	Description    string                       `json:"description,omitempty"`
	Argv           []string                     `json:"argv"`
	Cwd            string                       `json:"cwd,omitempty"`
	TimeoutSeconds float64                      `json:"timeout_seconds,omitempty"`
	Env            map[string]string            `json:"env,omitempty"`
	AllowEnv       []string                     `json:"allow_env,omitempty"`
	Options        map[string]string            `json:"options,omitempty"`
	Parameters     map[string]ProposedParameter `json:"parameters,omitempty"`
	Oracle         *Oracle                      `json:"oracle,omitempty"`
}

// ProposedParameter is a list of choices (JSON strings, numbers or
// booleans) or a range {min, max, default} of JSON numbers.
type ProposedParameter struct {
	Choices []json.RawMessage `json:"choices,omitempty"`
	Min     json.RawMessage   `json:"min,omitempty"`
	Max     json.RawMessage   `json:"max,omitempty"`
	Default json.RawMessage   `json:"default,omitempty"`
}

// ProposalResult is what propose_workload returns.
type ProposalResult struct {
	SchemaVersion int    `json:"schema_version"`
	Name          string `json:"name"`
	DefinitionID  string `json:"definition_id"`
	// File is the proposal, relative to the project root.
	File string `json:"file"`
	// Status is "new" (no such workload yet), "change" (it differs from
	// the declared one) or "unchanged".
	Status string `json:"status"`
	// Changes lists what differs from the declared definition.
	Changes   []string `json:"changes"`
	NextSteps []string `json:"next_steps"`
}

// Proposal statuses.
const (
	ProposalNew       = "new"
	ProposalChange    = "change"
	ProposalUnchanged = "unchanged"
)

// Pending is a proposal read back from its file.
type Pending struct {
	Name     string
	Path     string // absolute
	Table    string // the `[workloads.NAME]` table text
	Workload *Workload
}

// proposalPath is the proposal file of name (a valid workload name) for
// the project at root.
func proposalPath(root, name string) string {
	return filepath.Join(root, workspace.DirName, ProposalsDir, name+".toml")
}

// hasProposal reports whether name has a pending proposal.
func hasProposal(root, name string) bool {
	if root == "" || !nameRE().MatchString(name) || len(name) > MaxNameBytes {
		return false
	}
	st, err := os.Stat(proposalPath(root, name))
	return err == nil && st.Mode().IsRegular()
}

// proposedOnly is the refusal for a name that is proposed, not declared.
func proposedOnly(name string) *fault.Error {
	return fault.New(fault.ExecutionRefused, "workload %q is only proposed (%s/%s/%s.toml); nothing proposed runs before a person adopts and approves it", name, workspace.DirName, ProposalsDir, name).
		With("workload", name).With("reason", "proposed").
		Fix("Ask the human to review and run `flameox workload approve " + name + "` in a terminal (CLI only): it shows the diff, adds the workload to " + FileName + " and approves it.")
}

// Propose validates p as a workload and writes it as a pending proposal.
// It never changes flameox.toml or approvals.json.
func Propose(ctx context.Context, ws *workspace.Workspace, p Proposal, now time.Time) (*ProposalResult, error) {
	table, err := RenderTable(p)
	if err != nil {
		return nil, err
	}
	path := proposalPath(ws.ProjectRoot, p.Name)
	f, err := Parse(fileOf(table), path)
	if err != nil {
		return nil, err
	}
	w := f.Workloads[p.Name]
	cur, err := Load(ws.ProjectRoot)
	if err != nil {
		return nil, err
	}
	res := &ProposalResult{SchemaVersion: 1, Name: p.Name, DefinitionID: w.id, Status: ProposalNew, Changes: []string{},
		File: filepath.ToSlash(filepath.Join(workspace.DirName, ProposalsDir, p.Name+".toml"))}
	if old := cur.Workloads[p.Name]; old != nil {
		res.Status = ProposalChange
		if old.id == w.id {
			res.Status = ProposalUnchanged
		} else {
			res.Changes = Diff(old.Canonical(), w.Canonical())
		}
	}
	header := fmt.Sprintf("# Proposed over MCP (propose_workload) at %s; not declared, not approved.\n# definition_id = %s\n# Review and adopt: flameox workload approve %s\n",
		now.UTC().Format(time.RFC3339), w.id, p.Name)
	err = ws.WithLock(ctx, ws.Locks(), lock.Write, func() error {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		return durable.WriteFile(path, []byte(header+fileOf(table)), 0o644)
	})
	if err != nil {
		return nil, fault.Wrap(fault.WorkspaceInvalid, err, "write the proposal %s", res.File)
	}
	res.NextSteps = []string{"Ask the human to review and run `flameox workload approve " + p.Name + "` in a terminal (agents cannot approve); until then plan_capture refuses a proposed-only workload and runs a declared one as it is."}
	return res, nil
}

func fileOf(table string) string {
	return "schema_version = " + strconv.Itoa(SchemaVersion) + "\n\n" + table
}

// LoadProposal reads name's pending proposal, or NOT_FOUND.
func LoadProposal(ws *workspace.Workspace, name string) (*Pending, error) {
	if !nameRE().MatchString(name) || len(name) > MaxNameBytes {
		return nil, fault.New(fault.InvalidArguments, "%q is not a workload name", clip(name))
	}
	path := proposalPath(ws.ProjectRoot, name)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fault.New(fault.NotFound, "no proposal for workload %q", name).With("workload", name)
	}
	if err != nil {
		return nil, fault.Wrap(fault.WorkspaceInvalid, err, "read %s", path)
	}
	f, err := Parse(string(b), path)
	if err != nil {
		return nil, err
	}
	w := f.Workloads[name]
	if w == nil || len(f.Workloads) != 1 || len(f.Experiments) != 0 {
		return nil, fault.New(fault.WorkspaceInvalid, "%s must declare exactly [workloads.%s]", path, name).
			Fix("Delete the proposal and propose again (propose_workload).")
	}
	// The table is the file without its header comments and schema_version:
	// what was rendered, or what a person edited there.
	table := string(b)
	if i := strings.Index(table, "\n["); i >= 0 {
		table = table[i+1:]
	}
	return &Pending{Name: name, Path: path, Table: table, Workload: w}, nil
}

// Adoption is what `flameox workload approve` did with a proposal.
type Adoption struct {
	// Diff is the exact line diff of flameox.toml: "-" lines left it,
	// "+" lines entered it ("" when the text was already there).
	Diff string `json:"diff"`
	// Changes are Diff's phrases against the declared definition (none
	// for a new workload).
	Changes []string `json:"changes"`
	// Replaced says the workload's table was replaced in place rather
	// than appended.
	Replaced bool `json:"replaced"`
}

// PlanAdoption computes the new flameox.toml text that adopting pending
// gives, and its diff, without writing anything.
func PlanAdoption(ws *workspace.Workspace, pending *Pending) (newSrc string, a *Adoption, err error) {
	path := filepath.Join(ws.ProjectRoot, FileName)
	src := ""
	if b, err := os.ReadFile(path); err == nil {
		src = string(b)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", nil, fault.Wrap(fault.WorkspaceInvalid, err, "read %s", path)
	}
	cur, err := Parse(orEmpty(src), path)
	if err != nil {
		return "", nil, err
	}
	a = &Adoption{Changes: []string{}}
	if old := cur.Workloads[pending.Name]; old != nil {
		a.Changes = Diff(old.Canonical(), pending.Workload.Canonical())
	}
	table := pending.Table
	if !strings.HasSuffix(table, "\n") {
		table += "\n"
	}
	var oldText string
	start, end, found := findTable(src, pending.Name)
	if found {
		oldText = src[start:end]
		newSrc = src[:start] + table + src[end:]
		a.Replaced = true
	} else {
		base := src
		if strings.TrimSpace(base) == "" {
			base = fileOf("")
		}
		if !strings.HasSuffix(base, "\n") {
			base += "\n"
		}
		newSrc = base + "\n" + table
	}
	f, err := Parse(newSrc, path)
	if err != nil {
		return "", nil, fault.New(fault.ExecutionRefused, "adopting the proposal would leave %s invalid: %s", FileName, fault.As(err).Message).
			With("workload", pending.Name).Fix("Edit " + FileName + " by hand: copy [workloads." + pending.Name + "] from " + pending.Path + ", then `flameox workload approve " + pending.Name + "`.")
	}
	if w := f.Workloads[pending.Name]; w == nil || w.id != pending.Workload.id {
		return "", nil, fault.New(fault.ExecutionRefused, "%s declares workload %q outside its own [workloads.%s] table (dotted keys or subtables elsewhere), so the proposal cannot replace it as text", FileName, pending.Name, pending.Name).
			With("workload", pending.Name).Fix("Edit " + FileName + " by hand: copy [workloads." + pending.Name + "] from " + pending.Path + ", then `flameox workload approve " + pending.Name + "`.")
	}
	if found {
		a.Diff = lineDiff(oldText, table)
	} else {
		a.Diff = lineDiff("", table)
	}
	return newSrc, a, nil
}

// Adopt writes newSrc (from PlanAdoption) as flameox.toml, approves the
// proposed definition and removes the proposal. The approval binds the
// proposal's definition id: if flameox.toml changed since PlanAdoption,
// nothing is written.
func Adopt(ctx context.Context, ws *workspace.Workspace, pending *Pending, newSrc string, now time.Time) (*Approval, error) {
	path := filepath.Join(ws.ProjectRoot, FileName)
	f, err := Parse(newSrc, path)
	if err != nil {
		return nil, err
	}
	w := f.Workloads[pending.Name]
	if w == nil || w.id != pending.Workload.id {
		return nil, fault.New(fault.InternalError, "the adopted text does not declare the proposed definition")
	}
	perm := fs.FileMode(0o644)
	if st, err := os.Stat(path); err == nil {
		perm = st.Mode().Perm()
	}
	if err := durable.WriteFile(path, []byte(newSrc), perm); err != nil {
		return nil, fault.Wrap(fault.WorkspaceInvalid, err, "write %s", path)
	}
	ap, err := Approve(ctx, ws, w, now)
	if err != nil {
		return nil, err
	}
	if err := os.Remove(pending.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fault.Wrap(fault.WorkspaceInvalid, err, "remove %s", pending.Path)
	}
	return ap, nil
}

func orEmpty(src string) string {
	if strings.TrimSpace(src) == "" {
		return fileOf("")
	}
	return src
}

// headerRE matches a TOML table header line: [a.b] or [[a.b]], with the
// key parts captured as written.
var headerRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^\s*\[\[?\s*([^\]]*?)\s*\]\]?\s*(#.*)?$`)
})

// findTable locates the text of [workloads.NAME] and its subtables
// ([workloads.NAME.parameters], …): from its header line to the next
// header of another table (comment lines just above that header stay with
// it), or the end.
func findTable(src, name string) (start, end int, found bool) {
	lines := strings.SplitAfter(src, "\n")
	off := 0
	start = -1
	lastContent := 0
	for _, ln := range lines {
		if m := headerRE().FindStringSubmatch(strings.TrimRight(ln, "\r\n")); m != nil {
			own := isOwnTable(m[1], name)
			switch {
			case start < 0 && own && keyParts(m[1]) == 2:
				start = off
			case start >= 0 && !own:
				return start, lastContent, true
			}
		}
		off += len(ln)
		t := strings.TrimSpace(ln)
		if start >= 0 && t != "" && !strings.HasPrefix(t, "#") {
			lastContent = off
		}
	}
	if start < 0 {
		return 0, 0, false
	}
	return start, len(src), true
}

// isOwnTable reports whether a header's key names workloads.NAME or a
// table below it.
func isOwnTable(key, name string) bool {
	parts := splitKey(key)
	return len(parts) >= 2 && parts[0] == "workloads" && parts[1] == name
}

func keyParts(key string) int { return len(splitKey(key)) }

// splitKey splits a dotted TOML key, unquoting simple quoted parts.
func splitKey(key string) []string {
	var out []string
	for _, p := range strings.Split(key, ".") {
		p = strings.TrimSpace(p)
		if len(p) >= 2 && (p[0] == '"' && p[len(p)-1] == '"' || p[0] == '\'' && p[len(p)-1] == '\'') {
			p = p[1 : len(p)-1]
		}
		out = append(out, p)
	}
	return out
}

// maxDiffCells bounds lineDiff's table (old lines × new lines).
const maxDiffCells = 1 << 22

// lineDiff is a minimal line diff of a → b ("-"/"+"/" " prefixed lines).
func lineDiff(a, b string) string {
	x, y := splitLines(a), splitLines(b)
	n, m := len(x), len(y)
	if n*m > maxDiffCells {
		// Too large for the quadratic table: every old line out, every
		// new one in, which is still exact.
		var out strings.Builder
		for _, l := range x {
			out.WriteString("- " + l + "\n")
		}
		for _, l := range y {
			out.WriteString("+ " + l + "\n")
		}
		return out.String()
	}
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if x[i] == y[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out strings.Builder
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && x[i] == y[j]:
			out.WriteString("  " + x[i] + "\n")
			i, j = i+1, j+1
		case i < n && (j == m || lcs[i+1][j] >= lcs[i][j+1]):
			out.WriteString("- " + x[i] + "\n")
			i++
		default:
			out.WriteString("+ " + y[j] + "\n")
			j++
		}
	}
	return out.String()
}

func splitLines(s string) []string {
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// RenderTable renders p as the text of a `[workloads.NAME]` table. Every
// string is a TOML basic string and every key that is not a plain bare
// key is quoted, so no value can add a key or a table; Parse then checks
// the workload as it checks flameox.toml.
func RenderTable(p Proposal) (string, error) {
	if len(p.Name) > MaxNameBytes || !nameRE().MatchString(p.Name) {
		return "", fault.New(fault.InvalidArguments, "%q is not a valid workload name (pattern %s, at most %d bytes)", clip(p.Name), nameRE(), MaxNameBytes).With("field", "name")
	}
	var b strings.Builder
	fmt.Fprintf(&b, "[workloads.%s]\n", p.Name)
	if p.Description != "" {
		fmt.Fprintf(&b, "description = %s\n", tomlString(p.Description))
	}
	fmt.Fprintf(&b, "argv = %s\n", tomlStrings(p.Argv))
	if p.Cwd != "" {
		fmt.Fprintf(&b, "cwd = %s\n", tomlString(p.Cwd))
	}
	if p.TimeoutSeconds != 0 {
		fmt.Fprintf(&b, "timeout_seconds = %s\n", strconv.FormatFloat(p.TimeoutSeconds, 'g', -1, 64))
	}
	if len(p.Env) > 0 {
		fmt.Fprintf(&b, "env = %s\n", tomlInline(p.Env))
	}
	if len(p.AllowEnv) > 0 {
		fmt.Fprintf(&b, "allow_env = %s\n", tomlStrings(p.AllowEnv))
	}
	if len(p.Options) > 0 {
		fmt.Fprintf(&b, "options = %s\n", tomlInline(p.Options))
	}
	if p.Oracle != nil {
		fmt.Fprintf(&b, "oracle = { ")
		if p.Oracle.Strength != "" {
			fmt.Fprintf(&b, "strength = %s, ", tomlString(p.Oracle.Strength))
		}
		fmt.Fprintf(&b, "argv = %s }\n", tomlStrings(p.Oracle.Argv))
	}
	names := make([]string, 0, len(p.Parameters))
	for n := range p.Parameters {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		pp := p.Parameters[n]
		var v string
		switch {
		case len(pp.Choices) > 0 && (pp.Min != nil || pp.Max != nil || pp.Default != nil):
			return "", fault.New(fault.InvalidArguments, "parameter %q: give either choices or a range {min, max, default}, not both", clip(n)).With("field", "parameters."+clip(n))
		case len(pp.Choices) > 0:
			parts := make([]string, len(pp.Choices))
			for i, c := range pp.Choices {
				s, err := tomlScalar(c, true)
				if err != nil {
					return "", fault.New(fault.InvalidArguments, "parameter %q choice %d: %v", clip(n), i, err).With("field", "parameters."+clip(n))
				}
				parts[i] = s
			}
			v = "[" + strings.Join(parts, ", ") + "]"
		default:
			var parts []string
			for _, kv := range []struct {
				k string
				v json.RawMessage
			}{{rangeMin, pp.Min}, {rangeMax, pp.Max}, {rangeDefault, pp.Default}} {
				if kv.v == nil {
					continue
				}
				s, err := tomlScalar(kv.v, false)
				if err != nil {
					return "", fault.New(fault.InvalidArguments, "parameter %q %s: %v", clip(n), kv.k, err).With("field", "parameters."+clip(n))
				}
				parts = append(parts, kv.k+" = "+s)
			}
			v = "{ " + strings.Join(parts, ", ") + " }"
		}
		fmt.Fprintf(&b, "parameters.%s = %s\n", tomlKey(n), v)
	}
	return b.String(), nil
}

var (
	bareKeyRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_-]+$`) })
	jsonNumRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$`)
	})
)

// tomlScalar renders a JSON scalar as TOML: a string (only when strings
// are allowed), a number, a boolean.
func tomlScalar(raw json.RawMessage, allowStrings bool) (string, error) {
	t := string(raw)
	switch {
	case t == "true" || t == "false":
		if !allowStrings {
			return "", errors.New("must be a number")
		}
		return t, nil
	case jsonNumRE().MatchString(t):
		return t, nil
	case len(t) > 0 && t[0] == '"' && allowStrings:
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", err
		}
		return tomlString(s), nil
	}
	if allowStrings {
		return "", errors.New("must be a string, a number or a boolean")
	}
	return "", errors.New("must be a number")
}

func tomlKey(k string) string {
	if bareKeyRE().MatchString(k) {
		return k
	}
	return tomlString(k)
}

func tomlInline(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = tomlKey(k) + " = " + tomlString(m[k])
	}
	return "{ " + strings.Join(parts, ", ") + " }"
}

func tomlStrings(list []string) string {
	parts := make([]string, len(list))
	for i, s := range list {
		parts[i] = tomlString(s)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// tomlString is s as a TOML basic string.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
