package capture

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/flameox/flameox/pkg/adapter"
	"github.com/flameox/flameox/pkg/artifact"
	"github.com/flameox/flameox/pkg/broker"
	"github.com/flameox/flameox/pkg/contain"
	"github.com/flameox/flameox/pkg/durable"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/faultpoint"
	"github.com/flameox/flameox/pkg/identity"
	"github.com/flameox/flameox/pkg/lease"
	"github.com/flameox/flameox/pkg/lock"
	"github.com/flameox/flameox/pkg/run"
	"github.com/google/uuid"
)

// Progress is one step of a capture, on one monotonic scale.
type Progress struct {
	Phase   string `json:"phase"` // planning capturing validating registering publishing completed
	Step    int    `json:"step"`
	Total   int    `json:"total"`
	Message string `json:"message"`
}

// Phases of a capture in order (publishing and completed are reported by
// the caller that publishes).
var Phases = []string{"planning", "capturing", "validating", "registering", "publishing", "completed"}

// Result is the outcome of `flameox capture run`.
type Result struct {
	SchemaVersion  int           `json:"schema_version"`
	Plan           *CapturePlan  `json:"plan"`
	Run            *run.Manifest `json:"run"`
	ArtifactIDs    []string      `json:"artifact_ids"`
	CorpusCommitID string        `json:"corpus_commit_id,omitempty"`
	Limitations    []string      `json:"limitations"`
	// Failure says why the workload did not succeed, with the tails of
	// its output; absent when it succeeded.
	Failure *Failure `json:"failure,omitempty"`
}

// Execute plans and runs a capture: the approved workload under its
// adapter's collector through the broker, then the adapter's steps, then
// the oracle (without the collector), then registration of every artifact
// that exists. A failing, timed-out or cancelled workload still produces a
// terminal run with every artifact already captured; the returned error
// is nil unless the run could not be recorded.
func (s *Service) Execute(ctx context.Context, req PlanRequest) (*Result, error) {
	s.progress("planning", "planning the capture")
	pre, err := s.prepare(ctx, req, OutputPlaceholder)
	if err != nil {
		return nil, err
	}
	if pre.approved != nil {
		return nil, pre.approved
	}
	if req.ExpectedDigest != "" && req.ExpectedDigest != pre.plan.Digest {
		return nil, fault.New(fault.InvalidCapturePlan, "the workload, its approval, the executable or the policy changed since the plan was made").
			Fix("Make a new plan, review it, and execute that one.")
	}
	// Identity (git probes, environment) runs while the run is created and
	// the plan re-made; it is joined before the workload starts, so the
	// source state is still the one the workload sees.
	ident := s.collectIdentity(ctx, pre)
	defer ident()
	owner, err := lease.Self()
	if err != nil {
		return nil, err
	}
	now := s.now()
	m := run.Manifest{
		SchemaVersion: run.SchemaVersion,
		// The planned revision names its owner too, so that recovery can
		// tell a capture killed before it started running from a live one.
		Lease: &run.Lease{Owner: owner, HeartbeatAt: now, ExpiresAt: now.Add(time.Hour)},
		RunID: run.NewID(), RunType: run.TypeExecution, CreatedAt: now, UpdatedAt: now,
		ExecutionStatus: run.ExecPlanned, CaptureStatus: run.CapturePending, ValidationStatus: run.ValidationNotRequested,
		Reason: "planned",
		Workload: &run.WorkloadInfo{Name: pre.wl.Name, DefinitionID: pre.wl.DefinitionID(), InstanceID: pre.inst.InstanceID,
			Parameters: pre.inst.Parameters, Adapter: pre.ad.Name(), Collector: pre.plan.Capability.Adapter,
			CollectorVersion: pre.plan.Capability.Version},
		Trial: req.Trial,
	}
	if pre.plan.Oracle != nil || pre.checker() != nil {
		m.ValidationStatus = run.ValidationPending
	}
	runs := &run.Store{Root: s.WS.Root}
	if err := s.locked(ctx, func() error { return runs.Create(m) }); err != nil {
		return nil, err
	}
	if s.OnRun != nil {
		s.OnRun(m.RunID)
	}
	faultpoint.Hit("capture.spawning")
	out, err := artifact.NewStagingDir(s.WS.Root, "capture")
	if err != nil {
		return nil, s.abandon(ctx, runs, &m, err)
	}
	outDir := filepath.Join(out, "out")
	if err := os.Mkdir(outDir, 0o700); err != nil {
		return nil, s.abandon(ctx, runs, &m, err)
	}
	defer os.RemoveAll(out)
	// Re-plan with the real output directory; the binding digest must not
	// have changed since the plan was shown.
	real, err := s.prepare(ctx, req, outDir)
	if err != nil {
		return nil, s.abandon(ctx, runs, &m, err)
	}
	if real.plan.Digest != pre.plan.Digest {
		return nil, s.abandon(ctx, runs, &m, fault.New(fault.InvalidCapturePlan, "the workload, its approval or the executable changed while the capture was being prepared"))
	}
	for _, d := range real.caches {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, s.abandon(ctx, runs, &m, fault.Wrap(fault.WorkspaceInvalid, err, "create the cache %s", d))
		}
	}
	if pr, ok := real.ad.(adapter.Preparer); ok {
		if err := pr.Prepare(outDir); err != nil {
			return nil, s.abandon(ctx, runs, &m, fault.Wrap(fault.InternalError, err, "prepare the %s capture", real.ad.Name()))
		}
	}
	env, src := ident()
	m.Environment, m.SourceState = &env, &src
	m.Command = &run.CommandInfo{Argv: real.plan.Argv, Executable: real.plan.Executable, Cwd: real.plan.Cwd,
		EnvNames: real.plan.Environment.Passed, EnvDropped: real.plan.Environment.Dropped,
		TimeoutNs: real.plan.Limits.TimeoutNs, GraceNs: real.plan.Limits.GraceNs}
	d := real.plan.Containment
	m.Containment = &run.ContainmentInfo{State: d.State, Mechanism: d.Mechanism, Network: d.Network, Reason: d.Reason}
	m.Limitations = append(nonNil(m.Limitations), real.plan.Limitations...)

	started := s.now()
	next := m.Clone()
	next.Revision++
	next.UpdatedAt, next.StartedAt = started, &started
	next.ExecutionStatus, next.CaptureStatus = run.ExecRunning, run.CaptureRunning
	next.Lease = &run.Lease{Owner: owner, HeartbeatAt: started,
		ExpiresAt: started.Add(time.Duration(real.plan.Limits.TimeoutNs+real.plan.Limits.GraceNs) + time.Minute)}
	next.Reason = "running"
	if err := s.locked(ctx, func() error { return runs.Append(&m, next) }); err != nil {
		return nil, s.abandon(ctx, runs, &m, err)
	}
	m = next
	faultpoint.Hit("capture.running")
	stopBeat := s.heartbeat(runs, m.RunID)

	s.progress("capturing", "running "+real.wl.Name+" under "+real.ad.Name())
	child := func(pid int) { recordChild(runs, m.RunID, pid) }
	res, runErr := s.runWorkload(ctx, real, outDir, out, child)
	faultpoint.Hit("capture.ran")
	lim := []string{}
	if runErr == nil {
		lim = append(lim, s.runSteps(ctx, real, outDir, child)...)
	}
	validation, vinfo := s.validate(ctx, real, res, runErr, out, child, func() error {
		// Record that the workload finished and validation started, so a
		// crash during the oracle leaves a truthful run behind.
		mid := m.Clone()
		mid.Revision++
		mid.UpdatedAt = s.now()
		mid.ExecutionStatus, mid.Process, _ = outcome(res, runErr, real)
		mid.ValidationStatus, mid.Reason = run.ValidationRunning, "validating"
		if err := s.locked(ctx, func() error { return runs.Append(&m, mid) }); err != nil {
			return err
		}
		m = mid
		return nil
	})
	stopBeat()

	// Everything below must happen even after a cancellation.
	wctx := context.WithoutCancel(ctx)
	s.progress("registering", "registering artifacts")
	faultpoint.Hit("capture.registering")
	regs, regLim, regErr := s.register(wctx, real, m.RunID, outDir, out)
	lim = append(lim, regLim...)
	finished := s.now()
	final := m.Clone()
	final.Revision++
	final.UpdatedAt, final.FinishedAt = finished, &finished
	final.Lease = nil
	final.Artifacts = regs
	final.Limitations = append(final.Limitations, lim...)
	final.ValidationStatus, final.Validation = validation, vinfo
	final.ExecutionStatus, final.Process, final.Error = outcome(res, runErr, real)
	final.Limitations = append(final.Limitations, usageLimitations(final.Process)...)
	final.CaptureStatus = run.CaptureRegistered
	switch {
	case regErr != nil:
		final.CaptureStatus = run.CaptureFailed
		if final.Error == nil {
			final.Error = fault.As(regErr)
		}
	case ctx.Err() != nil:
		final.CaptureStatus = run.CaptureCancelled
	}
	final.Reason = final.ExecutionStatus
	var fail *Failure
	if failed(&final) {
		fail = s.readFailure(wctx, real, &final, out)
		if final.Error != nil {
			final.Error.With("failure_class", fail.Class).With("failure", fail.Summary).Fix(fail.Remediation...)
		}
	}
	if err := s.locked(wctx, func() error { return runs.Append(&m, final) }); err != nil {
		return nil, err
	}
	m = final
	ids := make([]string, len(regs))
	for i, r := range regs {
		ids[i] = r.ArtifactID
	}
	return &Result{SchemaVersion: 1, Plan: real.plan, Run: &m, ArtifactIDs: ids, Limitations: nonNil(m.Limitations), Failure: fail}, nil
}

// collectIdentity starts collecting the environment and source identity
// for the plan p and returns a function that waits for them (safe to call
// more than once).
func (s *Service) collectIdentity(ctx context.Context, p *prepared) func() (identity.Environment, identity.SourceState) {
	collectors := map[string]string{}
	if v := p.plan.Capability.Version; v != "" {
		collectors[p.ad.Name()] = v
	}
	var env identity.Environment
	var src identity.SourceState
	done := make(chan struct{})
	go func() {
		defer close(done)
		env, src = s.Identity.Collect(ctx, s.WS.ProjectRoot, p.plan.Executable, collectors, Toolchains(p.plan.Executable, p.ad.Name())...)
	}()
	return func() (identity.Environment, identity.SourceState) {
		<-done
		return env, src
	}
}

// runWorkload starts the (possibly contained) collector command.
func (s *Service) runWorkload(ctx context.Context, p *prepared, outDir, stage string, onStart func(int)) (*broker.Result, error) {
	stdout := &lazyFile{path: filepath.Join(stage, "stdout.txt")}
	defer stdout.Close()
	stderr := &lazyFile{path: filepath.Join(stage, "stderr.txt")}
	defer stderr.Close()
	var out io.Writer = stdout
	if liner, ok := p.ad.(adapter.ProgressLiner); ok && s.Output != nil {
		t := newLineTee(stdout, liner.ProgressLines(), s.Output)
		defer t.Close()
		out = t
	}
	var watch []string
	if hidesExit(p) {
		watch = workloadArgv(p)
	}
	return broker.Run(ctx, broker.Spec{
		Argv: p.plan.Wrapped, Dir: p.inst.Cwd, Env: p.env,
		Stdout: out, Stderr: stderr, StdoutLimit: p.plan.Limits.MaxOutputBytes, StderrLimit: p.plan.Limits.MaxOutputBytes,
		Timeout: time.Duration(p.plan.Limits.TimeoutNs), Grace: time.Duration(p.plan.Limits.GraceNs),
		OnStart: onStart, WorkloadDepth: workloadDepth(p), WatchArgv: watch,
	})
}

// recordChild names the process the broker just started in the run's
// directory: if this flameox is killed, recovery kills what is left of it.
func recordChild(runs *run.Store, id string, pid int) {
	if o, err := lease.Of(pid); err == nil {
		runs.RecordChild(id, o)
	}
}

// lazyFile creates its file on the first write: a quiet workload leaves
// no empty output files to create (and then skip at registration).
type lazyFile struct {
	path string
	f    *os.File
}

func (l *lazyFile) Write(b []byte) (int, error) {
	if l.f == nil {
		f, err := os.OpenFile(l.path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return 0, err
		}
		l.f = f
	}
	return l.f.Write(b)
}

func (l *lazyFile) Close() error {
	if l.f == nil {
		return nil
	}
	return l.f.Close()
}

// runSteps runs the adapter's post-capture steps (e.g. perf script).
func (s *Service) runSteps(ctx context.Context, p *prepared, outDir string, onStart func(int)) []string {
	var lim []string
	for _, st := range p.apl.Steps {
		argv := make([]string, len(st.Argv))
		for i, a := range st.Argv {
			argv[i] = strings.ReplaceAll(a, "{out}", outDir)
		}
		spec := broker.Spec{Argv: argv, Dir: outDir, Env: withoutEnv(p.env, ObservationsEnv), Timeout: time.Duration(p.plan.Limits.TimeoutNs),
			Grace: time.Duration(p.plan.Limits.GraceNs), StderrLimit: 1 << 20, StdoutLimit: s.WS.Config.Capture.MaxArtifactBytes,
			OnStart: onStart}
		var f *os.File
		if st.Stdout != "" {
			var err error
			if f, err = os.Create(filepath.Join(outDir, st.Stdout)); err != nil {
				lim = append(lim, "step "+st.Name+" could not create its output: "+err.Error())
				continue
			}
			spec.Stdout = f
		}
		res, err := broker.Run(ctx, spec)
		if f != nil {
			f.Close()
		}
		switch {
		case err != nil:
			lim = append(lim, "step "+st.Name+" failed: "+fault.As(err).Message)
		case res.ExitCode != 0:
			lim = append(lim, fmt.Sprintf("step %s exited with %d", st.Name, res.ExitCode))
		case res.Stdout.Truncated:
			lim = append(lim, "step "+st.Name+" output exceeded the artifact budget and was truncated")
		}
	}
	return lim
}

// StrengthAdapterCheck is the validation strength of a run judged only by
// its adapter's own check of the result (adapter.ResultChecker).
const StrengthAdapterCheck = "adapter_check"

// checker returns the adapter's result check when the plan asks for one.
func (p *prepared) checker() adapter.ResultChecker {
	if c, ok := p.ad.(adapter.ResultChecker); ok && p.apl.Check != "" {
		return c
	}
	return nil
}

// validate runs the oracle (without the collector) after a successful run,
// then the adapter's own check of the result, if it has one: the first
// that rejects the result fails validation.
func (s *Service) validate(ctx context.Context, p *prepared, res *broker.Result, runErr error, stage string, onStart func(int), start func() error) (string, *run.ValidationInfo) {
	check := p.checker()
	if p.plan.Oracle == nil && check == nil {
		return run.ValidationNotRequested, nil
	}
	info := &run.ValidationInfo{Strength: StrengthAdapterCheck}
	if p.plan.Oracle != nil {
		info.Strength = p.plan.Oracle.Strength
	}
	switch {
	case ctx.Err() != nil:
		info.Reason = "the capture was cancelled before validation"
		return run.ValidationCancelled, info
	case runErr != nil || res == nil || res.ExitCode != 0:
		info.Reason = "the workload did not succeed, so its result could not be validated"
		return run.ValidationError, info
	}
	if p.plan.Oracle == nil {
		s.progress("validating", "checking the result: "+p.apl.Check)
	} else {
		s.progress("validating", "running the oracle")
	}
	if err := start(); err != nil {
		info.Reason = "could not record the start of validation: " + fault.As(err).Message
		return run.ValidationError, info
	}
	if p.plan.Oracle == nil {
		return s.checkResult(ctx, p, check, stage, info, "")
	}
	argv := p.plan.Oracle.Argv
	if exe, err := broker.Resolve(argv[0], p.inst.Cwd, p.env); err == nil {
		argv = append([]string{exe}, argv[1:]...)
	}
	argv = contain.Wrap(p.plan.Containment, p.contReq, p.bwrap, argv)
	// The oracle's own observations are not the workload's.
	or, err := broker.Run(ctx, broker.Spec{Argv: argv, Dir: p.inst.Cwd, Env: withoutEnv(p.env, ObservationsEnv),
		Timeout: time.Duration(p.plan.Limits.TimeoutNs), Grace: time.Duration(p.plan.Limits.GraceNs),
		StdoutLimit: 1 << 20, StderrLimit: 1 << 20, OnStart: onStart})
	if or != nil {
		info.ExitCode, info.Signal, info.WallTimeNs = or.ExitCode, or.Signal, int64(or.Wall)
		// The oracle's output is evidence too: registered with the run
		// (roles oracle_stdout/oracle_stderr), never quoted in messages.
		os.WriteFile(filepath.Join(stage, "oracle.stdout.txt"), or.Stdout.Data, 0o600)
		os.WriteFile(filepath.Join(stage, "oracle.stderr.txt"), or.Stderr.Data, 0o600)
	}
	switch {
	case ctx.Err() != nil:
		info.Reason = "cancelled during validation"
		return run.ValidationCancelled, info
	case err != nil:
		info.Reason = fault.As(err).Message
		return run.ValidationError, info
	case or.ExitCode == 0 && check != nil:
		return s.checkResult(ctx, p, check, stage, info, "the oracle accepted the result; ")
	case or.ExitCode == 0:
		info.Reason = "the oracle accepted the result"
		return run.ValidationPassed, info
	}
	info.Reason = fmt.Sprintf("the oracle rejected the result (exit %d)", or.ExitCode)
	return run.ValidationFailed, info
}

// checkResult asks the adapter whether the workload's result holds what
// its plan's Check requires; prefix is what validation found before.
func (s *Service) checkResult(ctx context.Context, p *prepared, check adapter.ResultChecker, stage string, info *run.ValidationInfo, prefix string) (string, *run.ValidationInfo) {
	ok, why := check.CheckResult(ctx, p.apl, filepath.Join(stage, "out"), filepath.Join(stage, "stdout.txt"))
	info.Reason = prefix + why
	switch {
	case ctx.Err() != nil:
		info.Reason = prefix + "cancelled during validation"
		return run.ValidationCancelled, info
	case ok:
		return run.ValidationPassed, info
	}
	return run.ValidationFailed, info
}

// register stores every declared artifact that exists, plus non-empty
// stdout and stderr, and returns their registrations. Missing required
// artifacts become limitations, not silent gaps.
func (s *Service) register(ctx context.Context, p *prepared, runID, outDir, stage string) ([]run.Registration, []string, error) {
	store := &artifact.Store{Root: s.WS.Root, MaxWorkspaceBytes: s.WS.Config.Storage.MaxWorkspaceBytes}
	var regs []run.Registration
	var lim []string
	type file struct {
		path string
		decl adapter.ArtifactDecl
	}
	var files []file
	for _, a := range p.apl.Artifacts {
		files = append(files, file{filepath.Join(outDir, a.RelPath), a})
	}
	for _, st := range p.apl.Steps {
		files = append(files, file{filepath.Join(outDir, st.Produces.RelPath), st.Produces})
	}
	files = append(files, file{filepath.Join(outDir, ObservationsFile), observationsDecl()})
	files = append(files, file{filepath.Join(stage, "stdout.txt"), outputDecl("stdout")}, file{filepath.Join(stage, "stderr.txt"), outputDecl("stderr")},
		file{filepath.Join(stage, "oracle.stdout.txt"), outputDecl("oracle_stdout")}, file{filepath.Join(stage, "oracle.stderr.txt"), outputDecl("oracle_stderr")})
	for _, f := range files {
		fi, err := os.Lstat(f.path)
		if errors.Is(err, fs.ErrNotExist) {
			if f.decl.Required {
				lim = append(lim, "declared artifact "+f.decl.RelPath+" was not produced")
			}
			continue
		}
		if err == nil && fi.Size() == 0 {
			// An empty stream is no output; an empty profile (a
			// collector killed before it wrote one) is no evidence, and
			// registered it would be read as a profile of nothing.
			if f.decl.Kind != "process_output" && f.decl != observationsDecl() {
				lim = append(lim, "artifact "+f.decl.RelPath+" is empty (0 bytes: the workload ended before the collector wrote it) and was not registered")
			}
			continue
		}
		if f.decl == observationsDecl() {
			// The SDKs' file: its extractor checks it, not the adapter.
		} else if err := p.ad.Validate(f.path, f.decl); err != nil {
			lim = append(lim, "artifact "+f.decl.RelPath+" failed validation: "+fault.As(err).Message)
		}
		st, err := store.StageImport(ctx, f.path, s.WS.Config.Capture.MaxArtifactBytes)
		if err != nil {
			lim = append(lim, "artifact "+f.decl.RelPath+" was not stored: "+fault.As(err).Message)
			continue
		}
		var reg run.Registration
		err = s.locked(ctx, func() error {
			c, _, err := store.Place(st, artifact.PayloadExt(f.decl.RelPath))
			if err != nil {
				return err
			}
			sens, _ := artifact.CheckFloor(artifact.Kind(f.decl.Kind), st.Head, artifact.Sensitivity(s.WS.Config.Capture.DefaultSensitivity), false)
			reg = run.Registration{RegistrationID: uuid.NewString(), RunID: runID, ArtifactID: c.ArtifactID,
				DisplayName: filepath.Base(f.decl.RelPath), Kind: f.decl.Kind, MediaType: f.decl.MediaType, Role: f.decl.Role,
				Producer: p.ad.Name(), ProducerVersion: p.plan.Capability.Version, Sensitivity: string(sens),
				ByteLength: c.ByteLength, PayloadPath: artifact.ObjectRel(c.ArtifactID) + "/" + c.PayloadName, RegisteredAt: s.now()}
			return nil
		})
		st.Discard()
		if err != nil {
			return regs, lim, err
		}
		regs = append(regs, reg)
	}
	return regs, lim, nil
}

// outcome maps the broker result to the execution state and process facts.
// Below a collector that hides its workload's exit status (p's adapter is
// an adapter.ExitHider), the workload's status read by the broker decides,
// and a collector that failed fails the execution too.
func outcome(res *broker.Result, err error, p *prepared) (string, *run.ProcessInfo, *fault.Error) {
	if res == nil {
		fe := fault.As(err)
		if fe.Code == fault.ProcessCancelled {
			return run.ExecCancelled, nil, fe
		}
		return run.ExecFailed, nil, fe
	}
	pi := &run.ProcessInfo{Pid: res.Pid, ExitCode: res.ExitCode, Signal: res.Signal, WallTimeNs: int64(res.Wall),
		TimedOut: res.TimedOut, Cancelled: res.Cancelled, CleanupComplete: res.CleanupComplete, Killed: res.Killed,
		StdoutBytes: res.Stdout.Total, StderrBytes: res.Stderr.Total, OutputTruncated: res.Stdout.Truncated || res.Stderr.Truncated,
		Leftover: res.Leftover, RedactedEnv: res.Redacted}
	if !res.Start.IsZero() {
		start := res.Start.UTC()
		pi.StartedAt = &start
	}
	usageOf(pi, res)
	collectorFailed := false
	if hidesExit(p) {
		collectorFailed = res.ExitCode != 0 || res.Signal != ""
		if e := res.WorkloadExit; e != nil {
			pi.ExitCode, pi.Signal, pi.ExitSource = e.Code, e.Signal, e.Source
		} else {
			pi.ExitSource = ExitFromCollector
		}
	}
	switch {
	case res.TimedOut:
		return run.ExecTimedOut, pi, fault.New(fault.ProcessTimeout, "the workload ran out of time after %s", res.Wall.Round(time.Millisecond))
	case res.Cancelled:
		return run.ExecCancelled, pi, fault.New(fault.ProcessCancelled, "the capture was cancelled")
	case collectorFailed && pi.ExitSource == ExitFromCollector:
		return run.ExecFailed, pi, fault.New(fault.ProcessFailed, run.CollectorFailedPrefix+"%s failed with %s; the workload's own exit status could not be read",
			p.ad.Name(), exitText(res.ExitCode, res.Signal))
	case collectorFailed:
		return run.ExecFailed, pi, fault.New(fault.ProcessFailed, run.CollectorFailedPrefix+"%s failed with %s; the workload ended with %s",
			p.ad.Name(), exitText(res.ExitCode, res.Signal), exitText(pi.ExitCode, pi.Signal))
	case pi.ExitCode != 0 || pi.Signal != "":
		return run.ExecFailed, pi, fault.New(fault.ProcessFailed, "the workload failed with %s", exitText(pi.ExitCode, pi.Signal))
	}
	return run.ExecSucceeded, pi, nil
}

// ExitFromCollector is run.ProcessInfo.ExitSource when the workload's own
// exit status could not be read below a collector that hides it.
const ExitFromCollector = "collector"

// hidesExit reports whether p's collector launches the workload and exits
// with a status of its own (adapter.ExitHider).
func hidesExit(p *prepared) bool {
	h, ok := p.ad.(adapter.ExitHider)
	return ok && h.HidesWorkloadExit() && workloadDepth(p) > 0
}

// exitText is "exit status 3" or "signal SIGKILL".
func exitText(code int, signal string) string {
	if signal != "" {
		return "signal " + signal
	}
	return fmt.Sprintf("exit status %d", code)
}

// abandon closes a run that could not start: execution failed (or
// cancelled), capture failed, with the error.
func (s *Service) abandon(ctx context.Context, runs *run.Store, m *run.Manifest, cause error) error {
	fe := fault.As(cause)
	fe.RunID = m.RunID
	at := s.now()
	next := m.Clone()
	next.Revision++
	next.UpdatedAt, next.FinishedAt = at, &at
	next.ExecutionStatus, next.CaptureStatus = run.ExecFailed, run.CaptureFailed
	if ctx.Err() != nil {
		next.ExecutionStatus, next.CaptureStatus = run.ExecCancelled, run.CaptureCancelled
	}
	if next.ValidationStatus == run.ValidationPending || next.ValidationStatus == run.ValidationRunning {
		next.ValidationStatus = run.ValidationCancelled
	}
	next.Lease = nil
	next.Error, next.Reason = fe, string(fe.Code)
	if err := s.locked(context.WithoutCancel(ctx), func() error { return runs.Append(m, next) }); err == nil {
		*m = next
	}
	return &Abandoned{Err: fe, Run: m}
}

// Abandoned is the error of a capture that created its run but could not
// run the workload; the run has a terminal revision and should still be
// published.
type Abandoned struct {
	Err *fault.Error
	Run *run.Manifest
}

func (a *Abandoned) Error() string { return a.Err.Error() }

// Unwrap returns the structured error.
func (a *Abandoned) Unwrap() error { return a.Err }

// locked runs fn under the workspace write lock.
func (s *Service) locked(ctx context.Context, fn func() error) error {
	return s.WS.WithLock(ctx, s.WS.Locks(), lock.Write, fn)
}

// heartbeat refreshes runs/<id>/heartbeat while the workload runs.
func (s *Service) heartbeat(runs *run.Store, id string) func() {
	stop := make(chan struct{})
	done := make(chan struct{})
	path := filepath.Join(runs.Dir(id), "heartbeat")
	go func() {
		defer close(done)
		t := time.NewTicker(5 * time.Second)
		defer t.Stop()
		for {
			// A heartbeat means nothing after a reboot (the boot id in the
			// lease changes), so it is not synced.
			durable.WriteVolatile(path, []byte(s.now().Format(time.RFC3339Nano)+"\n"), 0o600)
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	return func() { close(stop); <-done }
}

func (s *Service) progress(phase, msg string) {
	if s.Progress == nil {
		return
	}
	for i, p := range Phases {
		if p == phase {
			s.Progress(Progress{Phase: phase, Step: i, Total: len(Phases) - 1, Message: msg})
			return
		}
	}
}

// withoutEnv is env without NAME's entry.
func withoutEnv(env []string, name string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if !strings.HasPrefix(kv, name+"=") {
			out = append(out, kv)
		}
	}
	return out
}
