package workload

import (
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/flameox/flameox/pkg/config"
	"github.com/flameox/flameox/pkg/digest"
	"github.com/flameox/flameox/pkg/fault"
)

// Instance is a workload bound to parameter values: the exact command the
// broker runs. Every string in it is literal; nothing is expanded later.
type Instance struct {
	Workload     string `json:"workload"`
	DefinitionID string `json:"definition_id"`
	// Parameters holds every declared parameter (defaults filled in) as
	// canonical text.
	Parameters map[string]string `json:"parameters"`
	Argv       []string          `json:"argv"`
	// Cwd is absolute and inside the project; RelCwd is the same directory
	// relative to the project root, slash-separated.
	Cwd    string            `json:"cwd"`
	RelCwd string            `json:"rel_cwd"`
	Env    map[string]string `json:"env"`
	// AllowEnv names inherited variables the broker may pass although
	// they look like secrets.
	AllowEnv []string `json:"allow_env"`
	// Options are the adapter options (not templated).
	Options        map[string]string `json:"options"`
	Timeout        time.Duration     `json:"timeout_ns"`
	OracleStrength string            `json:"oracle_strength"` // "" without an oracle
	OracleArgv     []string          `json:"oracle_argv"`
	// InstanceID digests the definition id, the rendered command and the
	// parameters; it does not depend on where the project is checked out.
	InstanceID string `json:"instance_id"`
}

// Render binds params (as decoded from JSON: string, float64, bool,
// json.Number; Go callers may also pass int and int64) to the workload.
// An unknown parameter name, or a value that is not a declared choice or
// lies outside a declared range, is INVALID_ARGUMENTS naming the parameter,
// the value and the domain; absent parameters take their default.
// Rendering runs nothing and touches no file.
func (w *Workload) Render(projectRoot string, params map[string]any) (*Instance, error) {
	chosen := make(map[string]string, len(w.Parameters))
	for _, n := range sortedKeys(params) {
		if w.params[n] == nil {
			return nil, fault.New(fault.InvalidArguments, "workload %q has no parameter %q", w.Name, clip(n)).
				With("workload", w.Name).With("parameter", clip(n)).With("declared", strings.Join(w.ParameterNames(), ",")).
				FixSteps("Pass only declared parameters; see %s.",
					fault.Step{Command: "flameox workload show " + w.Name, Tool: "get_workload", Arguments: map[string]any{"name": w.Name}})
		}
	}
	for _, p := range w.Parameters {
		v, ok := params[p.Name]
		if !ok {
			chosen[p.Name] = p.Default
			continue
		}
		if s, isStr := v.(string); isStr && strings.IndexByte(s, 0) >= 0 {
			return nil, fault.New(fault.InvalidArguments, "parameter %q of workload %q contains a NUL byte", p.Name, w.Name).
				With("workload", w.Name).With("parameter", p.Name)
		}
		text, why := p.resolve(v)
		if why != "" {
			e := fault.New(fault.InvalidArguments, "parameter %q of workload %q: %s %s", p.Name, w.Name, describe(v), why).
				With("workload", w.Name).With("parameter", p.Name).With("value", describe(v))
			if p.IsRange() {
				return nil, e.With("min", p.Min).With("max", p.Max).
					Fix("Use a " + p.Type + " in [" + p.Min + ", " + p.Max + "]; changing the range means editing " + FileName + " and approving again.")
			}
			return nil, e.With("choices", clip(strings.Join(p.Choices, ","))).
				Fix("Use one of the declared choices; changing them means editing " + FileName + " and approving again.")
		}
		chosen[p.Name] = text
	}
	root, err := filepath.Abs(projectRoot)
	if err != nil {
		return nil, fault.Wrap(fault.InvalidArguments, err, "resolve project root")
	}
	inst := &Instance{
		Workload: w.Name, DefinitionID: w.id, Parameters: chosen,
		Argv: renderAll(w.argv, chosen), Env: map[string]string{}, AllowEnv: slices.Clone(w.AllowEnv), Options: map[string]string{},
		Timeout:    time.Duration(w.TimeoutSeconds * float64(time.Second)),
		OracleArgv: renderAll(w.oracleArgv, chosen),
	}
	if inst.Argv[0] == "" {
		return nil, config.Invalid(w.file, "%s: workloads.%s.argv[0] renders empty for these parameters", w.file, w.Name).
			With("keys", "workloads."+w.Name+".argv").With("workload", w.Name)
	}
	rel := filepath.Clean(filepath.FromSlash(w.cwd.render(chosen)))
	if filepath.IsAbs(rel) || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return nil, config.Invalid(w.file, "%s: workloads.%s.cwd renders %q, outside the project", w.file, w.Name, clip(rel)).
			With("keys", "workloads."+w.Name+".cwd").With("workload", w.Name).
			Fix("Keep cwd and the parameter choices it uses inside the project root.")
	}
	inst.Cwd, inst.RelCwd = filepath.Join(root, rel), filepath.ToSlash(rel)
	for n, t := range w.env {
		inst.Env[n] = t.render(chosen)
	}
	if w.Oracle != nil {
		inst.OracleStrength = w.Oracle.Strength
	}
	for k, v := range w.Options {
		inst.Options[k] = v
	}
	inst.InstanceID, err = digest.Of(map[string]any{
		"definition_id": inst.DefinitionID,
		"command": map[string]any{
			"argv": inst.Argv, "cwd": inst.RelCwd, "env": inst.Env, "allow_env": inst.AllowEnv,
			"timeout_ns": int64(inst.Timeout), "oracle_argv": inst.OracleArgv,
		},
		"parameters": inst.Parameters,
	})
	if err != nil {
		return nil, err
	}
	return inst, nil
}

func renderAll(ts []template, values map[string]string) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.render(values)
	}
	return out
}
