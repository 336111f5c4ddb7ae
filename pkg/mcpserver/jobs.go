package mcpserver

// Detached work: jobs. A capture can take longer than a host lets one
// request live (the TypeScript SDK's and Codex's 60 s defaults), so
// start_capture {plan_token} — the token plan_capture returns, the same
// one execute_capture_plan takes — spends the token, starts the capture in
// the background and returns at once with a Job; get_job {job_id,
// wait_seconds?} returns the Job, waiting up to wait_seconds (0..50) for
// it to end; cancel_job {job_id} cancels it (the workload's process tree
// is killed, the run recorded as cancelled and published) and returns the
// Job once it is terminal. A Job is {schema_version, job_id, kind
// ("capture"), status (queued, running, succeeded, failed, cancelled),
// terminal, phase, step, total, message (the latest progress), created_at,
// started_at, finished_at, elapsed_ms, run_id (as soon as the run is
// recorded), capture (when done: the capture.Result execute_capture_plan
// returns, with plan null and without the run's environment and
// source_state: plan_capture and get_run show them), error (a *fault.Error
// when failed or cancelled, with its run_id), next_steps, next_tools:
// get_job and cancel_job while it runs, then analyze_hotspots and
// get_run}. Jobs live in the server process: they outlive the request that
// started them, not the server (when it ends, running jobs are cancelled
// and their runs recorded so). At most Options.MaxRunningJobs run at once;
// finished ones are kept for Options.JobRetention, the newest
// Options.MaxFinishedJobs. start_experiment's jobs are of kind
// "experiment", with one step per trial and the bounded experiment result
// in experiment (pkg/mcpserver/experiment.go).

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/flameox/flameox/pkg/capture"
	"github.com/flameox/flameox/pkg/compare"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Job states.
const (
	JobQueued    = "queued"
	JobRunning   = "running"
	JobSucceeded = "succeeded"
	JobFailed    = "failed"
	JobCancelled = "cancelled"
)

// Job kinds: start_capture and start_experiment.
const (
	JobCapture    = "capture"
	JobExperiment = "experiment"
)

// Job is the state of one detached job, as get_job returns it.
type Job struct {
	SchemaVersion int    `json:"schema_version"`
	JobID         string `json:"job_id"`
	Kind          string `json:"kind" jsonschema:"what the job does: capture or experiment"`
	Status        string `json:"status" jsonschema:"queued, running, succeeded, failed or cancelled"`
	Terminal      bool   `json:"terminal" jsonschema:"true once the job has ended (succeeded, failed, cancelled)"`
	// Phase, Step and Total are the latest progress (for a capture:
	// planning capturing validating registering publishing completed, on
	// 0..5); Message says what it is doing.
	Phase      string                    `json:"phase"`
	Step       int                       `json:"step"`
	Total      int                       `json:"total"`
	Message    string                    `json:"message"`
	CreatedAt  time.Time                 `json:"created_at"`
	StartedAt  *time.Time                `json:"started_at,omitempty"`
	FinishedAt *time.Time                `json:"finished_at,omitempty"`
	ElapsedMs  int64                     `json:"elapsed_ms" jsonschema:"time since the job started, to its end once terminal"`
	RunID      string                    `json:"run_id,omitempty" jsonschema:"the run the job records, as soon as it exists"`
	Capture    *capture.Result           `json:"capture,omitempty" jsonschema:"the capture result as execute_capture_plan returns it (without the plan, and the run without environment and source_state: get_run has them), once a capture job is terminal"`
	Experiment *capture.ExperimentResult `json:"experiment,omitempty" jsonschema:"once an experiment job is terminal: its outcomes, first trials (trials_total counts all) and one run set per variant, without the plan"`
	// Comparisons are a completed experiment's declared comparisons:
	// each variant against the first, as compare_run_sets makes them.
	Comparisons []compare.VariantComparison `json:"comparisons,omitempty" jsonschema:"once an experiment job completes: each variant against the first on the declared primary metric, threshold and confidence (compare_run_sets' result); the first 4 (comparisons_total counts all)"`
	// ComparisonsTotal counts them when Comparisons lists only the first.
	ComparisonsTotal int          `json:"comparisons_total,omitempty"`
	Error            *fault.Error `json:"error,omitempty" jsonschema:"why a failed or cancelled job did not succeed"`
	fault.Next
}

// job is a Job and what runs it; jobStore.mu guards every field.
type job struct {
	view      Job
	began     time.Time
	cancel    context.CancelFunc
	cancelled bool          // by cancel_job or the server's end
	done      chan struct{} // closed when terminal
}

// jobStore holds the jobs of one server.
type jobStore struct {
	now         func() time.Time
	maxRunning  int
	maxFinished int
	retention   time.Duration

	base    context.Context // ends when the server does
	end     context.CancelFunc
	mu      sync.Mutex
	jobs    map[string]*job
	running sync.WaitGroup
}

func newJobStore(opts Options) *jobStore {
	st := &jobStore{now: opts.Now, maxRunning: opts.MaxRunningJobs, maxFinished: opts.MaxFinishedJobs,
		retention: opts.JobRetention, jobs: map[string]*job{}}
	if st.maxRunning <= 0 {
		st.maxRunning = 2
	}
	if st.maxFinished <= 0 {
		st.maxFinished = 32
	}
	if st.retention <= 0 {
		st.retention = time.Hour
	}
	st.base, st.end = context.WithCancel(context.Background())
	return st
}

// jobWork is a job's work: it reports progress through the job's update
// and returns what to fill in the Job when it ends.
type jobWork func(ctx context.Context, j *job) (fill func(*Job), err error)

// reserve makes a queued job of kind, or refuses when too many run.
func (st *jobStore) reserve(kind string) (*job, error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.evict()
	n := 0
	for _, j := range st.jobs {
		if !j.view.Terminal {
			n++
		}
	}
	if n >= st.maxRunning {
		return nil, fault.New(fault.ExecutionRefused, "%d jobs are already running, the most this server runs at once", n).
			With("running", itoa(n)).With("limit", itoa(st.maxRunning)).Retry().
			Fix("Wait for a running job to end (get_job with wait_seconds) or stop one with cancel_job, then call start_capture again; the plan_token was not spent.")
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	now := st.now()
	j := &job{view: Job{SchemaVersion: 1, JobID: "job_" + hex.EncodeToString(b[:]), Kind: kind, Status: JobQueued,
		Total: len(capture.Phases) - 1, Message: "queued", CreatedAt: now}, done: make(chan struct{})}
	st.jobs[j.view.JobID] = j
	return j, nil
}

// drop forgets a reserved job that never started.
func (st *jobStore) drop(j *job) {
	st.mu.Lock()
	defer st.mu.Unlock()
	delete(st.jobs, j.view.JobID)
}

// start runs work for a reserved job in the background.
func (st *jobStore) start(j *job, work jobWork) {
	ctx, cancel := context.WithCancel(st.base)
	st.mu.Lock()
	j.cancel = cancel
	st.mu.Unlock()
	st.running.Add(1)
	go func() {
		defer st.running.Done()
		defer cancel()
		st.update(j, func(v *Job) {
			now := st.now()
			j.began = now
			v.Status, v.StartedAt, v.Message = JobRunning, &now, "started"
		})
		fill, err := work(ctx, j)
		st.finish(j, ctx, fill, err)
	}()
}

// update changes a job's view under the lock.
func (st *jobStore) update(j *job, f func(*Job)) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if !j.view.Terminal {
		f(&j.view)
	}
}

// progress records a capture's phase.
func (st *jobStore) progress(j *job, p capture.Progress) {
	st.update(j, func(v *Job) {
		if p.Step >= v.Step {
			v.Phase, v.Step, v.Message = p.Phase, p.Step, p.Message
		}
	})
}

func (st *jobStore) finish(j *job, ctx context.Context, fill func(*Job), err error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	v := &j.view
	if fill != nil {
		fill(v)
	}
	now := st.now()
	v.FinishedAt, v.Terminal = &now, true
	switch {
	case j.cancelled && err != nil: // a cancel that came after the work ended changes nothing
		v.Status = JobCancelled
	case err != nil:
		v.Status = JobFailed
	default:
		v.Status = JobSucceeded
	}
	if err != nil {
		v.Error = structured(ctx, err)
		if v.Error.RunID == "" {
			v.Error.RunID = v.RunID
		}
		if v.RunID == "" {
			v.RunID = v.Error.RunID
		}
	}
	v.Message = v.Status
	close(j.done)
}

// get returns a snapshot of a job, or NOT_FOUND.
func (st *jobStore) get(id string) (*job, Job, error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.evict()
	j := st.jobs[id]
	if j == nil {
		return nil, Job{}, fault.New(fault.NotFound, "no job %q in this server", id).With("job_id", id).
			Fix("Jobs live as long as the server process, and finished ones for " + st.retention.String() +
				" (the newest " + itoa(st.maxFinished) + "); find the run with list_runs, or start a new job with plan_capture and start_capture.")
	}
	return j, st.snapshot(j), nil
}

// snapshot copies the view with its elapsed time; the caller holds mu.
func (st *jobStore) snapshot(j *job) Job {
	v := j.view
	switch {
	case v.FinishedAt != nil && v.StartedAt != nil:
		v.ElapsedMs = v.FinishedAt.Sub(*v.StartedAt).Milliseconds()
	case v.StartedAt != nil:
		v.ElapsedMs = st.now().Sub(*v.StartedAt).Milliseconds()
	}
	// The next steps are made afresh for each answer (the envelope
	// rewrites them in place into their MCP form). Jobs exist over MCP
	// only, so the job steps have no command.
	v.Next = fault.Next{}
	switch {
	case !v.Terminal:
		v.Then(fault.Step{Tool: "get_job", Arguments: map[string]any{"job_id": v.JobID, "wait_seconds": 20}},
			fault.Step{Tool: "cancel_job", Arguments: map[string]any{"job_id": v.JobID}})
	case v.Experiment != nil:
		// Every trial, not the job's first few; then the runs of one arm.
		id := v.Experiment.Experiment.ExperimentID
		v.Then(fault.Step{Command: "flameox experiment show " + id, Tool: "get_experiment", Arguments: map[string]any{"experiment_id": id}})
		if len(v.Experiment.RunSets) > 0 {
			rs := v.Experiment.RunSets[0].RunSetID
			v.Then(fault.Step{Command: "flameox run-sets show " + rs, Tool: "get_run_set", Arguments: map[string]any{"run_set_id": rs}})
		}
	case v.RunID != "" && v.Status == JobSucceeded:
		v.Then(fault.Step{Command: "flameox analyze hotspots " + v.RunID, Tool: "analyze_hotspots", Arguments: map[string]any{"input": v.RunID}},
			fault.Step{Command: "flameox runs show " + v.RunID, Tool: "get_run", Arguments: map[string]any{"run_id": v.RunID}})
	case v.RunID != "":
		v.Then(fault.Step{Command: "flameox runs show " + v.RunID, Tool: "get_run", Arguments: map[string]any{"run_id": v.RunID}})
	}
	if v.NextSteps == nil {
		v.NextSteps = []string{}
	}
	return v
}

// wait waits until the job is terminal, d has passed or ctx is done.
func (st *jobStore) wait(ctx context.Context, j *job, d time.Duration) Job {
	if d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-j.done:
		case <-t.C:
		case <-ctx.Done():
		}
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.snapshot(j)
}

// cancelJob cancels a job that is not terminal.
func (st *jobStore) cancelJob(j *job) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if j.view.Terminal {
		return
	}
	j.cancelled = true
	j.view.Message = "cancelling"
	if j.cancel != nil {
		j.cancel()
	}
}

// evict forgets finished jobs past the retention, and the oldest beyond
// maxFinished; the caller holds mu.
func (st *jobStore) evict() {
	now := st.now()
	var done []*job
	for id, j := range st.jobs {
		if !j.view.Terminal {
			continue
		}
		if now.Sub(*j.view.FinishedAt) > st.retention {
			delete(st.jobs, id)
			continue
		}
		done = append(done, j)
	}
	if len(done) <= st.maxFinished {
		return
	}
	sort.Slice(done, func(a, b int) bool { return done[a].view.FinishedAt.After(*done[b].view.FinishedAt) })
	for _, j := range done[st.maxFinished:] {
		delete(st.jobs, j.view.JobID)
	}
}

// close cancels every running job and waits (boundedly) until they have
// recorded their runs.
func (st *jobStore) close() {
	st.mu.Lock()
	for _, j := range st.jobs {
		if !j.view.Terminal {
			j.cancelled = true
		}
	}
	st.mu.Unlock()
	st.end()
	done := make(chan struct{})
	go func() { st.running.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Minute):
	}
}

type jobInput struct {
	JobID string `json:"job_id" jsonschema:"the job_id start_capture returned"`
}

type getJobInput struct {
	JobID       string `json:"job_id" jsonschema:"the job_id start_capture returned"`
	WaitSeconds int    `json:"wait_seconds,omitempty" jsonschema:"seconds (0..50) to wait for the job to end"`
}

func (s *server) addJobTools() {
	s.jobs = newJobStore(s.opts)
	addTool(s, &mcp.Tool{Name: "start_capture",
		Description: "Run the capture a plan_token names as a background job, returning its job_id at once (for captures that may outlast the host's timeout); poll get_job.",
		Annotations: &mcp.ToolAnnotations{Title: "Start capture job", DestructiveHint: ptr(true), OpenWorldHint: ptr(true)},
	}, s.startCapture)
	addTool(s, &mcp.Tool{Name: "get_job",
		Description: "A background job's status, progress, run_id and, when done, result; wait_seconds long-polls until it ends.",
		Annotations: readOnly("Get job")}, s.getJob, func(sch *jsonschema.Schema) {
		if p := sch.Properties["wait_seconds"]; p != nil {
			p.Minimum, p.Maximum = jsonschema.Ptr(0.0), jsonschema.Ptr(50.0)
		}
	})
	addTool(s, &mcp.Tool{Name: "cancel_job",
		Description: "Cancel a background job (kills its process tree, records the run cancelled) and return it once terminal.",
		Annotations: &mcp.ToolAnnotations{Title: "Cancel job", IdempotentHint: true, DestructiveHint: ptr(true), OpenWorldHint: ptr(false)},
	}, s.cancelJob)
}

func (s *server) startCapture(ctx context.Context, _ *mcp.CallToolRequest, in executeInput) (*Job, string, error) {
	// The slot is taken before the token, so that a refusal leaves the
	// token unspent.
	j, err := s.jobs.reserve(JobCapture)
	if err != nil {
		return nil, "", err
	}
	tok, ws, err := s.takePlan(in.PlanToken)
	if err != nil {
		s.jobs.drop(j)
		return nil, "", err
	}
	s.jobs.start(j, func(ctx context.Context, j *job) (func(*Job), error) {
		onRun := func(id string) { s.jobs.update(j, func(v *Job) { v.RunID = id }) }
		res, _, err := s.runPlan(ctx, ws, tok, func(p capture.Progress) { s.jobs.progress(j, p) }, onRun)
		return func(v *Job) {
			if res != nil {
				// Without the plan, which plan_capture showed, and the
				// run's environment and source identity, so that a
				// finished job stays a small result; get_run has the
				// whole run.
				c := *res
				c.Plan = nil
				if res.Run != nil {
					m := *res.Run
					m.Environment, m.SourceState = nil, nil
					c.Run = &m
				}
				v.Capture = &c
				if res.Run != nil {
					v.RunID = res.Run.RunID
				}
			}
		}, err
	})
	_, v, err := s.jobs.get(j.view.JobID)
	if err != nil {
		return nil, "", err
	}
	return &v, fmt.Sprintf("job %s started: capture of %s under %s; poll get_job", v.JobID, tok.req.Workload, tok.req.Adapter), nil
}

func (s *server) getJob(ctx context.Context, _ *mcp.CallToolRequest, in getJobInput) (*Job, string, error) {
	j, _, err := s.jobs.get(in.JobID)
	if err != nil {
		return nil, "", err
	}
	v := s.jobs.wait(ctx, j, time.Duration(min(max(in.WaitSeconds, 0), 50))*time.Second)
	return &v, jobSummary(&v), nil
}

func (s *server) cancelJob(ctx context.Context, _ *mcp.CallToolRequest, in jobInput) (*Job, string, error) {
	j, _, err := s.jobs.get(in.JobID)
	if err != nil {
		return nil, "", err
	}
	s.jobs.cancelJob(j)
	// The broker kills the process tree within the workload's grace; the
	// run is then recorded and published.
	v := s.jobs.wait(ctx, j, 50*time.Second)
	return &v, jobSummary(&v), nil
}

func jobSummary(v *Job) string {
	sum := fmt.Sprintf("job %s (%s): %s", v.JobID, v.Kind, v.Status)
	if !v.Terminal {
		sum += fmt.Sprintf(", %s: %s", v.Phase, v.Message)
	}
	if v.RunID != "" {
		sum += ", run " + v.RunID
	}
	if v.Error != nil {
		sum += ", " + string(v.Error.Code) + ": " + v.Error.Message
	}
	return sum + fmt.Sprintf(", %s elapsed", capture.Elapsed(time.Duration(v.ElapsedMs)*time.Millisecond))
}
