package workload

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/flameox/flameox/pkg/digest"
)

// Oracle strengths, weakest first.
const (
	StrengthExecution      = "execution_check"
	StrengthContract       = "contract_check"
	StrengthCrossTreatment = "cross_treatment_equivalence"
)

// Workload is one validated `[workloads.NAME]` entry. Argv, Cwd, Env values
// and Oracle.Argv are templates as declared; Render turns them into an
// Instance. Treat a Workload as read-only.
type Workload struct {
	Name string
	// Description says what the workload measures, for people and agents.
	// It is not part of the definition: editing it keeps the approval.
	Description    string
	Argv           []string
	Cwd            string
	TimeoutSeconds float64
	Env            map[string]string
	AllowEnv       []string // sorted
	// Options are adapter capture options (e.g. perf frequency, py-spy
	// native); part of the definition, so changing them revokes approval.
	Options    map[string]string
	Parameters []*Parameter // sorted by name
	Oracle     *Oracle      // nil when none is declared

	file       string
	id         string
	params     map[string]*Parameter
	argv       []template
	cwd        template
	env        map[string]template
	oracleArgv []template
}

// Oracle is the validation command run after a successful capture.
// Tolerance applies to cross_treatment_equivalence: the largest relative
// difference allowed between the numbers two treatments' oracles print
// (0: their outputs must be equal).
type Oracle struct {
	Strength  string   `json:"strength"`
	Argv      []string `json:"argv"`
	Tolerance float64  `json:"tolerance,omitempty"`
}

// Definition is a workload's canonical form: what `flameox workload show
// --json` prints, what approvals store, and what DefinitionID digests.
// Parameters are sorted by name, allow_env is sorted, env is an object; the
// order of choices is kept because the first is the default; a range
// parameter has min, max and default instead of choices.
type Definition struct {
	Name           string            `json:"name"`
	Argv           []string          `json:"argv"`
	Cwd            string            `json:"cwd"`
	TimeoutSeconds float64           `json:"timeout_seconds"`
	Env            map[string]string `json:"env"`
	AllowEnv       []string          `json:"allow_env"`
	Options        map[string]string `json:"options,omitempty"`
	Parameters     []Parameter       `json:"parameters"`
	Oracle         *Oracle           `json:"oracle,omitempty"`
}

var optionNameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`) })

// Canonical returns a copy of the workload's canonical form.
func (w *Workload) Canonical() Definition {
	d := Definition{
		Name: w.Name, Argv: slices.Clone(w.Argv), Cwd: w.Cwd, TimeoutSeconds: w.TimeoutSeconds,
		Env: map[string]string{}, AllowEnv: append([]string{}, w.AllowEnv...), Parameters: []Parameter{},
	}
	for k, v := range w.Env {
		d.Env[k] = v
	}
	if len(w.Options) > 0 {
		d.Options = map[string]string{}
		for k, v := range w.Options {
			d.Options[k] = v
		}
	}
	for _, p := range w.Parameters {
		d.Parameters = append(d.Parameters, Parameter{Name: p.Name, Type: p.Type, Choices: slices.Clone(p.Choices), Min: p.Min, Max: p.Max,
			Default: p.Default, values: slices.Clone(p.values), lo: p.lo, hi: p.hi})
	}
	if w.Oracle != nil {
		d.Oracle = &Oracle{Strength: w.Oracle.Strength, Argv: slices.Clone(w.Oracle.Argv), Tolerance: w.Oracle.Tolerance}
	}
	return d
}

// DefinitionID is digest.Of(Canonical()): what an approval binds.
func (w *Workload) DefinitionID() string { return w.id }

// Parameter returns the named parameter, or nil.
func (w *Workload) Parameter(name string) *Parameter { return w.params[name] }

// ParameterNames returns the declared parameter names, sorted.
func (w *Workload) ParameterNames() []string {
	out := make([]string, 0, len(w.Parameters))
	for _, p := range w.Parameters {
		out = append(out, p.Name)
	}
	return out
}

func buildWorkload(path, name string, raw *rawWorkload) (*Workload, error) {
	key := "workloads." + clip(name)
	if err := checkName(path, key, name, nameRE()); err != nil {
		return nil, err
	}
	if raw == nil {
		raw = &rawWorkload{}
	}
	w := &Workload{Name: name, Env: map[string]string{}, AllowEnv: []string{}, Parameters: []*Parameter{},
		TimeoutSeconds: DefaultTimeoutSeconds, Cwd: ".", file: path, params: map[string]*Parameter{}, env: map[string]template{}}
	if len(raw.Parameters) > MaxParameters {
		return nil, invalid(path, key+".parameters", "declares %d parameters; at most %d are allowed", len(raw.Parameters), MaxParameters)
	}
	for _, pn := range sortedKeys(raw.Parameters) {
		pk := key + ".parameters." + clip(pn)
		if err := checkName(path, pk, pn, paramRE()); err != nil {
			return nil, err
		}
		var v any
		if rp := raw.Parameters[pn]; rp != nil {
			v = rp.value
		}
		p, err := buildParameter(path, pk, pn, v)
		if err != nil {
			return nil, err
		}
		w.Parameters = append(w.Parameters, p)
		w.params[pn] = p
	}
	one := func(field, s string) (template, error) {
		if err := checkText(path, field, s, MaxTemplateBytes); err != nil {
			return nil, err
		}
		t, te := compile(s, func(n string) bool { return w.params[n] != nil })
		if te != nil {
			return nil, invalid(path, field, "template token %q %s", te.token, te.reason).With("workload", name).With("token", te.token)
		}
		return t, nil
	}
	argv := func(field string, list []string) ([]template, error) {
		if len(list) == 0 || len(list) > MaxArgv {
			return nil, invalid(path, field, "must be an array of 1..%d strings (argv[0] is the program)", MaxArgv)
		}
		if list[0] == "" {
			return nil, invalid(path, field+"[0]", "must name the program, not be empty")
		}
		out := make([]template, len(list))
		for i, s := range list {
			t, err := one(fmt.Sprintf("%s[%d]", field, i), s)
			if err != nil {
				return nil, err
			}
			out[i] = t
		}
		return out, nil
	}
	var err error
	if w.argv, err = argv(key+".argv", raw.Argv); err != nil {
		return nil, err
	}
	w.Argv = slices.Clone(raw.Argv)
	if raw.Description != nil {
		if err := checkText(path, key+".description", *raw.Description, MaxDescriptionBytes); err != nil {
			return nil, err
		}
		w.Description = *raw.Description
	}
	if raw.Cwd != nil {
		w.Cwd = *raw.Cwd
	}
	if w.cwd, err = one(key+".cwd", w.Cwd); err != nil {
		return nil, err
	}
	if w.Cwd == "" || filepath.IsAbs(w.Cwd) || strings.HasPrefix(w.Cwd, "/") || slices.Contains(strings.Split(filepath.ToSlash(w.Cwd), "/"), "..") {
		return nil, invalid(path, key+".cwd", "must be a project-relative directory without '..' (\".\" is the project root)")
	}
	if raw.TimeoutSeconds != nil {
		w.TimeoutSeconds = *raw.TimeoutSeconds
	}
	if !(w.TimeoutSeconds > 0 && w.TimeoutSeconds <= MaxTimeoutSeconds) {
		return nil, invalid(path, key+".timeout_seconds", "must be in (0, %d]", MaxTimeoutSeconds)
	}
	if len(raw.Env) > MaxEnv {
		return nil, invalid(path, key+".env", "declares %d variables; at most %d are allowed", len(raw.Env), MaxEnv)
	}
	for _, n := range sortedKeys(raw.Env) {
		ek := key + ".env." + clip(n)
		if len(n) > 256 || !envNameRE().MatchString(n) {
			return nil, invalid(path, ek, "is not a valid environment variable name ([A-Za-z_][A-Za-z0-9_]*)")
		}
		if w.env[n], err = one(ek, raw.Env[n]); err != nil {
			return nil, err
		}
		w.Env[n] = raw.Env[n]
	}
	if len(raw.AllowEnv) > MaxEnv {
		return nil, invalid(path, key+".allow_env", "lists %d names; at most %d are allowed", len(raw.AllowEnv), MaxEnv)
	}
	for i, n := range raw.AllowEnv {
		ak := fmt.Sprintf("%s.allow_env[%d]", key, i)
		if len(n) > 256 || !envNameRE().MatchString(n) {
			return nil, invalid(path, ak, "is not a valid environment variable name ([A-Za-z_][A-Za-z0-9_]*)")
		}
		if slices.Contains(w.AllowEnv, n) {
			return nil, invalid(path, ak, "repeats %s", n)
		}
		w.AllowEnv = append(w.AllowEnv, n)
	}
	slices.Sort(w.AllowEnv)
	if len(raw.Options) > 32 {
		return nil, invalid(path, key+".options", "has %d entries; at most 32 are allowed", len(raw.Options))
	}
	for k, v := range raw.Options {
		ok := fmt.Sprintf("%s.options.%s", key, k)
		if !optionNameRE().MatchString(k) || len(v) > 256 || strings.ContainsRune(v, 0) {
			return nil, invalid(path, ok, "is not a valid option (name [a-z][a-z0-9_]*, value up to 256 bytes)")
		}
		if w.Options == nil {
			w.Options = map[string]string{}
		}
		w.Options[k] = v
	}
	if o := raw.Oracle; o != nil {
		w.Oracle = &Oracle{Strength: StrengthExecution, Argv: slices.Clone(o.Argv)}
		if o.Strength != nil {
			w.Oracle.Strength = *o.Strength
		}
		switch w.Oracle.Strength {
		case StrengthExecution, StrengthContract, StrengthCrossTreatment:
		default:
			return nil, invalid(path, key+".oracle.strength", "must be %s, %s or %s, not %q", StrengthExecution, StrengthContract, StrengthCrossTreatment, clip(w.Oracle.Strength))
		}
		if w.oracleArgv, err = argv(key+".oracle.argv", o.Argv); err != nil {
			return nil, err
		}
		if o.Tolerance != nil {
			if w.Oracle.Strength != StrengthCrossTreatment {
				return nil, invalid(path, key+".oracle.tolerance", "applies only to strength %s", StrengthCrossTreatment)
			}
			if t := *o.Tolerance; !(t >= 0 && t <= 1) {
				return nil, invalid(path, key+".oracle.tolerance", "must be a relative difference in [0, 1]")
			}
			w.Oracle.Tolerance = *o.Tolerance
		}
	}
	if w.id, err = digest.Of(w.Canonical()); err != nil {
		return nil, invalid(path, key, "has no canonical form: %v", err)
	}
	return w, nil
}
