package capture

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/flameox/flameox/pkg/adapter"
	"github.com/flameox/flameox/pkg/broker"
	"github.com/flameox/flameox/pkg/contain"
	"github.com/flameox/flameox/pkg/digest"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/run"
	"github.com/flameox/flameox/pkg/workload"
)

// PlanRequest asks to capture one declared workload with one adapter.
type PlanRequest struct {
	Adapter  string `json:"adapter"`
	Workload string `json:"workload"`
	// Parameters choose among the workload's declared values.
	Parameters map[string]any `json:"parameters"`
	// ForMCP marks a capture requested by an agent (containment policy
	// required_for_mcp applies).
	ForMCP bool `json:"-"`
	// Trial, when set, places the run in an experiment (run.Manifest.Trial).
	Trial *run.TrialInfo `json:"-"`
	// ExpectedDigest, when set, is the digest of a plan shown earlier:
	// Execute refuses (INVALID_CAPTURE_PLAN) if the plan it is about to run
	// binds anything else.
	ExpectedDigest string `json:"-"`
}

// CapturePlan is the side-effect-free plan `flameox capture plan` prints:
// the exact command and everything that binds it.
type CapturePlan struct {
	SchemaVersion int                `json:"schema_version"`
	Adapter       string             `json:"adapter"`
	Capability    adapter.Capability `json:"capability"`
	Workload      WorkloadPlan       `json:"workload"`
	// Argv is the collector and workload command; Wrapped is what the
	// broker actually starts (the same unless contained).
	Argv        []string               `json:"argv"`
	Wrapped     []string               `json:"wrapped_argv"`
	Executable  string                 `json:"executable"`
	Cwd         string                 `json:"cwd"`
	Environment EnvPlan                `json:"environment"`
	Artifacts   []adapter.ArtifactDecl `json:"artifacts"`
	Steps       []adapter.Step         `json:"steps"`
	Limits      Limits                 `json:"limits"`
	Containment contain.Decision       `json:"containment"`
	Oracle      *OraclePlan            `json:"oracle,omitempty"`
	// Check is what the adapter itself requires of the result (it decides
	// validation_status beside the oracle); empty when it checks nothing.
	Check       string   `json:"check,omitempty"`
	Overhead    string   `json:"overhead"`
	Permissions []string `json:"permissions"`
	Limitations []string `json:"limitations"`
	Warnings    []string `json:"warnings"`
	// Digest binds the plan: adapter, workload approval, executable
	// identity, argv, cwd, environment policy, limits and containment.
	Digest string `json:"digest"`
}

// WorkloadPlan identifies the workload instance and its approval.
type WorkloadPlan struct {
	Name         string            `json:"name"`
	DefinitionID string            `json:"definition_id"`
	InstanceID   string            `json:"instance_id"`
	Parameters   map[string]string `json:"parameters"`
	Approval     string            `json:"approval"` // approved | unapproved | changed
}

// EnvPlan names the child environment: which variables pass, which are
// dropped, which the workload sets. Values are never shown.
type EnvPlan struct {
	Passed    []string `json:"passed"`
	Dropped   []string `json:"dropped"`
	Overrides []string `json:"overrides"`
}

// Limits of a capture.
type Limits struct {
	TimeoutNs        int64 `json:"timeout_ns"`
	GraceNs          int64 `json:"grace_ns"`
	MaxOutputBytes   int64 `json:"max_output_bytes"`
	MaxArtifactBytes int64 `json:"max_artifact_bytes"`
}

// OraclePlan is the validation command run after the workload.
type OraclePlan struct {
	Strength string   `json:"strength"`
	Argv     []string `json:"argv"`
}

// OutputPlaceholder stands for the capture's output directory in plans
// shown before it exists.
const OutputPlaceholder = "$FLAMEOX_OUTPUT"

// prepared is a plan with everything Execute needs.
type prepared struct {
	plan     *CapturePlan
	wl       *workload.Workload
	inst     *workload.Instance
	ad       adapter.Adapter
	apl      *adapter.Plan
	env      []string
	bwrap    string
	contReq  contain.Request
	caches   []string // cache directories bound read-write into the sandbox
	approved error
}

// Plan returns the capture plan without side effects.
func (s *Service) Plan(ctx context.Context, req PlanRequest) (*CapturePlan, error) {
	p, err := s.prepare(ctx, req, OutputPlaceholder)
	if err != nil {
		return nil, err
	}
	return p.plan, nil
}

func (s *Service) prepare(ctx context.Context, req PlanRequest, outDir string) (*prepared, error) {
	if s.Adapters == nil {
		return nil, fault.New(fault.InternalError, "capture service without adapters")
	}
	ad, err := s.Adapters.Get(req.Adapter)
	if err != nil {
		return nil, err
	}
	file, err := workload.Load(s.WS.ProjectRoot)
	if err != nil {
		return nil, err
	}
	wl, err := file.Workload(req.Workload)
	if err != nil {
		return nil, err
	}
	inst, err := wl.Render(s.WS.ProjectRoot, req.Parameters)
	if err != nil {
		return nil, err
	}
	approvals, err := workload.LoadApprovals(s.WS.Root)
	if err != nil {
		return nil, err
	}
	cfg := s.WS.Config.Execution
	env, dropped := broker.ChildEnv(s.environ(), cfg.ChildEnvironmentAllowlist, inst.AllowEnv, inst.Env)
	exe, err := broker.Resolve(inst.Argv[0], inst.Cwd, env)
	if err != nil {
		return nil, err
	}
	argv := append([]string{exe}, inst.Argv[1:]...)
	var capab adapter.Capability
	if wp, ok := ad.(adapter.WorkloadProber); ok {
		capab = wp.ProbeWorkload(ctx, argv)
	} else {
		capab = ad.Probe(ctx)
	}
	apl, err := ad.Plan(adapter.PlanRequest{ProjectRoot: s.WS.ProjectRoot, OutputDir: outDir, Argv: argv, Options: inst.Options})
	if err != nil {
		return nil, err
	}
	env = append(env, apl.Env...)
	// Every capture offers the workload the SDKs' observations file
	// (contrib/python/flameox_observe.py, contrib/go/observe): it is
	// registered when the workload wrote one.
	env = setEnv(env, ObservationsEnv+"="+filepath.Join(outDir, ObservationsFile))
	if capab.Status != adapter.Available && capab.Status != adapter.Degraded {
		return nil, fault.New(fault.CapabilityUnavailable, "adapter %s is %s", ad.Name(), capab.Status).
			With("adapter", ad.Name()).With("status", string(capab.Status)).Fix(capab.Remediation...)
	}
	bwrap := contain.Bwrap()
	creq := contain.Request{Policy: cfg.Containment, ForMCP: req.ForMCP, DenyNet: cfg.Network == "deny_when_contained",
		Workspace: s.WS.Root, Project: s.WS.ProjectRoot, Output: outDir, Cwd: inst.Cwd}
	decision, err := contain.Decide(creq, bwrap)
	if err != nil {
		return nil, err
	}
	var caches []string
	if cu, ok := ad.(adapter.CacheUser); ok && decision.State != contain.Uncontained {
		env, caches = containedCaches(cu, env, s.WS.Path(CacheDir))
		creq.Writable = append(creq.Writable, caches...)
		decision.Writable = append(decision.Writable, caches...)
	}
	grace := time.Duration(cfg.GraceSeconds * float64(time.Second))
	plan := &CapturePlan{
		SchemaVersion: 1, Adapter: ad.Name(), Capability: capab,
		Workload: WorkloadPlan{Name: wl.Name, DefinitionID: wl.DefinitionID(), InstanceID: inst.InstanceID,
			Parameters: inst.Parameters, Approval: approvals.Status(wl)},
		Argv: apl.Argv, Wrapped: contain.Wrap(decision, creq, bwrap, apl.Argv), Executable: exe, Cwd: inst.RelCwd,
		Environment: EnvPlan{Passed: names(env), Dropped: nonNil(dropped), Overrides: sortedKeys(inst.Env)},
		Artifacts:   append(apl.Artifacts, observationsDecl(), outputDecl("stdout"), outputDecl("stderr")),
		Steps:       apl.Steps,
		Limits: Limits{TimeoutNs: int64(inst.Timeout), GraceNs: int64(grace), MaxOutputBytes: cfg.MaxOutputBytes,
			MaxArtifactBytes: s.WS.Config.Capture.MaxArtifactBytes},
		Containment: decision, Check: apl.Check, Overhead: apl.Overhead, Permissions: nonNil(apl.Permissions),
		Limitations: nonNil(apl.Limitations), Warnings: []string{},
	}
	if inst.OracleStrength != "" {
		plan.Oracle = &OraclePlan{Strength: inst.OracleStrength, Argv: inst.OracleArgv}
	}
	approved := approvals.Check(wl)
	if approved != nil {
		plan.Warnings = append(plan.Warnings, "the workload is not approved at its current definition; `flameox workload approve "+wl.Name+"` (CLI only) before capture run")
	}
	if decision.State == contain.Uncontained && decision.Reason != "" {
		plan.Warnings = append(plan.Warnings, "uncontained: "+decision.Reason)
	}
	if capab.Status == adapter.Degraded {
		plan.Warnings = append(plan.Warnings, "adapter "+ad.Name()+" is degraded: "+strings.Join(capab.Limitations, "; "))
	}
	if plan.Digest, err = planDigest(plan, exe, outDir); err != nil {
		return nil, err
	}
	return &prepared{plan: plan, wl: wl, inst: inst, ad: ad, apl: apl, env: env, bwrap: bwrap, contReq: creq, caches: caches, approved: approved}, nil
}

// CacheDir is the workspace directory (.diagnostics/cache) holding the
// persistent, writable caches of contained captures (adapter.CacheUser),
// one directory per cache: go-build and gomod for gotest.
const CacheDir = "cache"

// containedCaches points a contained collector at its caches under root:
// it returns env with each cache's variable set to its directory, and the
// adapter's further variables, and the directories (to create and bind
// read-write into the sandbox).
func containedCaches(cu adapter.CacheUser, env []string, root string) ([]string, []string) {
	dirs := map[string]string{}
	var paths []string
	for _, c := range cu.Caches() {
		d := filepath.Join(root, c.Name)
		dirs[c.Name] = d
		paths = append(paths, d)
	}
	extra := cu.ContainedEnv(env, dirs)
	for _, c := range cu.Caches() {
		extra = append(extra, c.Env+"="+dirs[c.Name])
	}
	for _, kv := range extra {
		env = setEnv(env, kv)
	}
	return env, paths
}

// setEnv replaces NAME's entry in env by kv (NAME=value), or appends it.
func setEnv(env []string, kv string) []string {
	name, _, _ := strings.Cut(kv, "=")
	out := make([]string, 0, len(env)+1)
	for _, e := range env {
		if k, _, _ := strings.Cut(e, "="); k != name {
			out = append(out, e)
		}
	}
	return append(out, kv)
}

// planDigest binds what must not change between a plan and its execution.
// The output directory is not part of it (it is created at execution).
func planDigest(p *CapturePlan, exe, outDir string) (string, error) {
	exeDigest := ""
	if b, err := os.ReadFile(exe); err == nil {
		exeDigest = digest.Bytes(b)
	}
	argv := make([]string, len(p.Argv))
	for i, a := range p.Argv {
		argv[i] = strings.ReplaceAll(a, outDir, OutputPlaceholder)
	}
	return digest.Of(map[string]any{
		"adapter": p.Adapter, "workload": p.Workload, "argv": argv, "cwd": p.Cwd, "environment": p.Environment,
		"limits": p.Limits, "containment": p.Containment.State, "network": p.Containment.Network, "oracle": p.Oracle,
		"executable": exe, "executable_digest": exeDigest,
	})
}

// ObservationsFile is the file of SDK observations a capture's output
// directory may hold, and ObservationsEnv the variable that names it to
// the workload (pkg/adapter/observe reads it).
const (
	ObservationsFile = "flameox-observations.jsonl"
	ObservationsEnv  = "FLAMEOX_OBSERVATIONS"
)

// observationsDecl declares the SDK observations file: optional, read by
// its own extractor rather than validated by the capture's adapter.
func observationsDecl() adapter.ArtifactDecl {
	return adapter.ArtifactDecl{RelPath: ObservationsFile, Kind: "semantic_observations", Role: "observations", MediaType: "application/x-ndjson"}
}

func outputDecl(role string) adapter.ArtifactDecl {
	return adapter.ArtifactDecl{RelPath: role + ".txt", Kind: "process_output", Role: role, MediaType: "text/plain"}
}

func names(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if i := strings.IndexByte(kv, '='); i > 0 {
			out = append(out, kv[:i])
		}
	}
	sort.Strings(out)
	return out
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func (s *Service) environ() []string {
	if s.Environ != nil {
		return s.Environ()
	}
	return os.Environ()
}
