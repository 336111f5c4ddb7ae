package mcpserver

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"reflect"
	"slices"
	"sync"
	"time"

	"github.com/flameox/flameox/pkg/adapter"
	"github.com/flameox/flameox/pkg/capture"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/query"
	"github.com/flameox/flameox/pkg/run"
	"github.com/google/jsonschema-go/jsonschema"
)

// ParamValues are a capture's workload parameter values as JSON gives
// them: a string, a number or a boolean each, as `flameox capture plan
// --parameters '{"count": 25}'` takes them. Numbers stay json.Number, so an
// integer beyond 2^53 is checked against its range exactly, not rounded.
type ParamValues map[string]json.RawMessage

// values decodes the values for workload.Render; a value the input schema
// let through but that is no scalar is passed on for Render to refuse by
// name.
func (pv ParamValues) values() map[string]any {
	out := make(map[string]any, len(pv))
	for k, raw := range pv {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			v = string(raw)
		}
		out[k] = v
	}
	return out
}

// paramSchema types the "parameters" property: an object whose values are
// strings, numbers or booleans (not only strings: agents send 25, not "25").
func paramSchema(sch *jsonschema.Schema) {
	p := sch.Properties["parameters"]
	if p == nil {
		return
	}
	p.Type, p.Types = "object", nil
	p.AdditionalProperties = &jsonschema.Schema{Types: []string{"string", "number", "boolean"}}
	p.Description = "the workload's parameters (get_workload); omitted take defaults"
}

// Redaction: no MCP result carries a command line, an executable path or
// the names of environment variables. The plan token binds all of them
// (through the plan digest), so the agent never needs to see them, and a
// path or variable name of the host is not the agent's business.

// redactedPlanFields names what redactPlan removes, for the plan result.
var redactedPlanFields = []string{"argv", "wrapped_argv", "executable", "capability.executable",
	"environment.passed", "environment.dropped", "environment.overrides", "steps[].argv", "oracle.argv"}

// redactPlan returns a copy of p without argv, executables and env names.
func redactPlan(p *capture.CapturePlan) *capture.CapturePlan {
	if p == nil {
		return nil
	}
	c := *p
	c.Argv, c.Wrapped, c.Executable = []string{}, []string{}, ""
	c.Capability.Executable = ""
	c.Environment = capture.EnvPlan{Passed: []string{}, Dropped: []string{}, Overrides: []string{}}
	c.Steps = make([]adapter.Step, len(p.Steps))
	for i, st := range p.Steps {
		st.Argv = []string{}
		c.Steps[i] = st
	}
	if p.Oracle != nil {
		o := *p.Oracle
		o.Argv = []string{}
		c.Oracle = &o
	}
	return &c
}

// redactManifest returns a copy of m without its command line, executable
// path and environment names.
func redactManifest(m *run.Manifest) *run.Manifest {
	if m == nil {
		return nil
	}
	c := *m
	if m.Command != nil {
		cmd := *m.Command
		cmd.Argv, cmd.Executable, cmd.EnvNames, cmd.EnvDropped = []string{}, "", []string{}, []string{}
		c.Command = &cmd
	}
	if m.SourceState != nil && m.SourceState.ExecutablePath != "" {
		src := *m.SourceState
		src.ExecutablePath = ""
		c.SourceState = &src
	}
	return &c
}

func redactRunDetail(d *query.RunDetail) *query.RunDetail {
	if d == nil {
		return nil
	}
	c := *d
	c.Run = redactManifest(d.Run)
	return &c
}

func redactResult(r *capture.Result) *capture.Result {
	c := *r
	c.Plan = redactPlan(r.Plan)
	c.Run = redactManifest(r.Run)
	return &c
}

// planChanges names what differs between the plan a token was issued for
// and the plan now: what the digest binds.
func planChanges(old, cur *capture.CapturePlan) []string {
	var out []string
	add := func(changed bool, name string) {
		if changed {
			out = append(out, name)
		}
	}
	add(old.Adapter != cur.Adapter, "adapter")
	add(old.Workload.DefinitionID != cur.Workload.DefinitionID, "workload definition")
	add(old.Workload.Approval != cur.Workload.Approval, "workload approval ("+old.Workload.Approval+" → "+cur.Workload.Approval+")")
	add(old.Workload.InstanceID != cur.Workload.InstanceID, "workload instance (parameters)")
	add(old.Executable != cur.Executable, "executable")
	add(!slices.Equal(old.Argv, cur.Argv), "command")
	add(old.Cwd != cur.Cwd, "working directory")
	add(!reflect.DeepEqual(old.Environment, cur.Environment), "environment policy")
	add(old.Limits != cur.Limits, "limits")
	add(old.Containment.State != cur.Containment.State || old.Containment.Network != cur.Containment.Network, "containment")
	add(!reflect.DeepEqual(old.Oracle, cur.Oracle), "oracle")
	if len(out) == 0 {
		out = append(out, "executable content")
	}
	return out
}

// A plan token is what execute_capture_plan takes instead of a command: 256
// random bits naming a plan this server process made. It lives in memory
// only, expires after Options.TokenTTL, runs at most once, and is bound to
// the workspace id, the plan's digest (approval, definition, executable
// identity, argv, cwd, environment policy, adapter, limits, containment)
// and the request (adapter, workload, parameters).
type planToken struct {
	expires     time.Time
	workspaceID string
	req         capture.PlanRequest
	plan        *capture.CapturePlan // unredacted; never leaves the process
	// experiment is set, instead of req and plan, on a token
	// plan_experiment issued; only start_experiment spends it.
	experiment *capture.ExperimentRequest
	used       bool
}

type tokenStore struct {
	mu sync.Mutex
	m  map[string]*planToken
}

func newTokenStore() *tokenStore { return &tokenStore{m: map[string]*planToken{}} }

// issue stores t under a fresh token.
func (ts *tokenStore) issue(now time.Time, t *planToken) (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fault.Wrap(fault.InternalError, err, "generate a plan token")
	}
	tok := "fxplan_" + hex.EncodeToString(b[:])
	ts.mu.Lock()
	defer ts.mu.Unlock()
	for k, v := range ts.m { // forget expired tokens (used ones are kept until then to say "already used")
		if now.After(v.expires) {
			delete(ts.m, k)
		}
	}
	ts.m[tok] = t
	return tok, nil
}

// take consumes a token: whatever happens next, it cannot be used again.
// experiment says which kind the caller spends: a capture plan's token
// (plan_capture) or an experiment plan's (plan_experiment); the other
// kind is refused and stays unspent.
func (ts *tokenStore) take(tok string, now time.Time, experiment bool) (*planToken, error) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	t := ts.m[tok]
	again := fault.New(fault.InvalidCapturePlan, "").Fix("Call plan_capture again and pass its new plan_token to execute_capture_plan within its lifetime.")
	if experiment {
		again.Remediation = []string{}
		again.Fix("Call plan_experiment again and pass its new plan_token to start_experiment within its lifetime.")
	}
	switch {
	case t != nil && (t.experiment != nil) != experiment:
		if experiment {
			again.Message = "this plan token is a capture plan's: pass it to execute_capture_plan or start_capture"
		} else {
			again.Message = "this plan token is an experiment plan's: pass it to start_experiment"
		}
		return nil, again
	case t == nil:
		again.Message = "unknown plan token (tokens exist only in the server process that issued them, and only until they expire)"
		return nil, again
	case t.used:
		again.Message = "this plan token was already used; every plan token runs at most once"
		return nil, again
	case now.After(t.expires):
		delete(ts.m, tok)
		again.Message = "this plan token expired at " + t.expires.UTC().Format(time.RFC3339)
		return nil, again
	}
	t.used = true
	return t, nil
}
