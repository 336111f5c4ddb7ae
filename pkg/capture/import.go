package capture

import (
	"context"
	"path/filepath"
	"strings"
	"time"

	"github.com/flameox/flameox/pkg/adapter"
	"github.com/flameox/flameox/pkg/artifact"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/faultpoint"
	"github.com/flameox/flameox/pkg/lease"
	"github.com/flameox/flameox/pkg/lock"
	"github.com/flameox/flameox/pkg/profile"
	"github.com/flameox/flameox/pkg/run"
	"github.com/flameox/flameox/pkg/workspace"
	"github.com/google/uuid"
)

// ImportRequest asks to import one file as a new run.
type ImportRequest struct {
	Path string `json:"path"`
	// Kind is the artifact kind; empty means: detected from the content
	// (a profile format flameox reads is a sample_profile), else
	// collector_metadata.
	Kind string `json:"kind,omitempty"`
	// Sensitivity is normal, internal or sensitive; empty means the
	// workspace default (capture.default_sensitivity).
	Sensitivity string `json:"sensitivity,omitempty"`
	// MediaType overrides the media type guessed from the content.
	MediaType string `json:"media_type,omitempty"`
	// Producer names the tool that wrote the file, if known.
	Producer        string `json:"producer,omitempty"`
	ProducerVersion string `json:"producer_version,omitempty"`
	// Beneath, when set, is the directory (symlinks resolved) the file
	// opened must be in, checked on the open file (artifact.Store.Beneath).
	Beneath string `json:"-"`
	// RequestedBy is "cli" or "mcp".
	RequestedBy string `json:"-"`
}

// ImportResult is the outcome of one import.
type ImportResult struct {
	Run          *run.Manifest     `json:"run"`
	ArtifactID   string            `json:"artifact_id"`
	Registration *run.Registration `json:"registration"`
	// Deduplicated is true when identical bytes were already stored.
	Deduplicated bool `json:"deduplicated"`
	// CorpusCommitID is the commit that published the run, when the
	// caller published it (flameox import does; fox-capture does not).
	CorpusCommitID string `json:"corpus_commit_id,omitempty"`
	// Analysed is false when no extractor reads the file: it is stored
	// and published, and analyses will not see it. NotAnalysed says why.
	Analysed    bool   `json:"analysed"`
	NotAnalysed string `json:"not_analysed,omitempty"`
}

// NotAnalysedReason is ImportResult.NotAnalysed for a file no extractor
// reads.
const NotAnalysedReason = "not a format flameox extracts; analyses will not see it"

// NotAnalysedLine is the line that leads the text of an import whose file
// is stored without extraction ("stored, not analysed: …"); "" when the
// file is analysed. The CLI and the MCP tool print it first.
func (r *ImportResult) NotAnalysedLine() string {
	if r == nil || r.Analysed {
		return ""
	}
	return "stored, not analysed: " + r.NotAnalysed
}

// Service captures into one workspace.
type Service struct {
	WS  *workspace.Workspace
	Now func() time.Time
	// Identity collects environment and source identity for new runs.
	Identity *IdentityCollector
	// Adapters are the collectors captures may use.
	Adapters *adapter.Registry
	// Environ returns the parent environment (default os.Environ); the
	// broker filters it for children.
	Environ func() []string
	// Progress, when set, hears each phase of a capture.
	Progress func(Progress)
	// Output, when set, hears the lines the adapter derives from the
	// workload's stdout while it runs (adapter.ProgressLiner: gotest's
	// benchmark results), for a person watching; never evidence.
	Output func(line string)
	// OnRun, when set, hears the id of a capture's run as soon as the run
	// is recorded (before the workload starts), so a caller can name the
	// run while the capture is still going (MCP's get_job).
	OnRun func(runID string)

	// afterCopy is a test hook passed to the artifact store.
	afterCopy func(src string)
}

// Import stores the file content-addressed and records a new import run
// with one registration. A failure after the run was created leaves the run
// in capture_status failed with the error (and returns the error carrying
// the run id); nothing is left in staging.
func (s *Service) Import(ctx context.Context, req ImportRequest) (*ImportResult, error) {
	return s.ImportFrom(ctx, s.WS.ProjectRoot, req)
}

// ImportFrom is Import with relative paths resolved against base (the
// caller's working directory for the CLI).
func (s *Service) ImportFrom(ctx context.Context, base string, req ImportRequest) (*ImportResult, error) {
	kind := artifact.Kind("")
	if req.Kind != "" {
		k, err := artifact.ParseKind(req.Kind)
		if err != nil {
			return nil, err
		}
		kind = k
	}
	sens := artifact.Sensitivity(s.WS.Config.Capture.DefaultSensitivity)
	if req.Sensitivity != "" {
		v, err := artifact.ParseSensitivity(req.Sensitivity)
		if err != nil {
			return nil, err
		}
		sens = v
	}
	if strings.ContainsRune(req.Path, 0) || req.Path == "" {
		return nil, fault.New(fault.InvalidArguments, "an import needs a file path")
	}
	path := req.Path
	if !filepath.IsAbs(path) {
		path = filepath.Join(base, path)
	}

	if err := artifact.Precheck(path, s.WS.Config.Capture.MaxArtifactBytes); err != nil {
		return nil, err
	}
	now := s.now()
	owner, err := lease.Self()
	if err != nil {
		return nil, err
	}
	m := run.Manifest{
		SchemaVersion: run.SchemaVersion,
		Lease:         &run.Lease{Owner: owner, HeartbeatAt: now, ExpiresAt: now.Add(time.Hour)},
		RunID:         run.NewID(), RunType: run.TypeImport, CreatedAt: now, UpdatedAt: now,
		ExecutionStatus: run.ExecNotApplicable, CaptureStatus: run.CapturePending, ValidationStatus: run.ValidationNotRequested,
		Import: &run.ImportInfo{SourceName: filepath.Base(path), RequestedBy: requestedBy(req.RequestedBy)},
		Reason: "import started",
	}
	m.Limitations = append(m.Limitations, "Imported artifact: flameox did not observe how it was produced; the source state is the project's at import time.")
	runs := &run.Store{Root: s.WS.Root}
	// Under the write lock, like every write of a revision: recovery,
	// holding it, can then tell a run directory without a revision from
	// one being created.
	if err := s.locked(ctx, func() error { return runs.Create(m) }); err != nil {
		return nil, err
	}
	faultpoint.Hit("import.run_created")

	// Identity (git, toolchain versions) is collected while the bytes are
	// copied and hashed; both are needed only when the run is registered.
	idDone := make(chan struct{})
	go func() {
		defer close(idDone)
		env, src := s.Identity.Collect(ctx, s.WS.ProjectRoot, "", nil)
		m.Environment, m.SourceState = &env, &src
	}()
	stage := func() (*artifact.Staged, error) {
		defer func() { <-idDone }()
		return (&artifact.Store{Root: s.WS.Root, AfterCopy: s.afterCopy, Beneath: req.Beneath}).StageImport(ctx, path, s.WS.Config.Capture.MaxArtifactBytes)
	}

	store := &artifact.Store{Root: s.WS.Root, MaxWorkspaceBytes: s.WS.Config.Storage.MaxWorkspaceBytes}
	staged, err := stage()
	if err != nil {
		return nil, s.fail(ctx, runs, &m, err)
	}
	defer staged.Discard()
	if kind == "" {
		kind = artifact.KindMetadata
		if profile.Detect(staged.Head) != profile.FormatUnknown {
			kind = artifact.KindSampleProfile
		} else if k := s.extractedKind(staged); k != "" {
			kind = k
		}
	}
	producer := orDefault(req.Producer, "flameox.import")
	analysed, unread := s.analysable(kind, producer, staged)
	finalSens, err := artifact.CheckFloor(kind, staged.Head, sens, req.Sensitivity != "")
	if err != nil {
		return nil, s.fail(ctx, runs, &m, err)
	}
	mediaType := req.MediaType
	if mediaType == "" {
		mediaType = artifact.GuessMediaType(path, staged.Head)
	}
	faultpoint.Hit("import.staged")

	ls := s.WS.Locks()
	var res *ImportResult
	err = s.WS.WithLock(ctx, ls, lock.Write, func() error {
		content, existed, err := store.Place(staged, artifact.PayloadExt(path))
		if err != nil {
			return err
		}
		faultpoint.Hit("import.placed")
		at := s.now()
		reg := run.Registration{
			RegistrationID: uuid.NewString(), RunID: m.RunID, ArtifactID: content.ArtifactID,
			DisplayName: filepath.Base(path), Kind: string(kind), MediaType: mediaType, Role: "primary",
			Producer: producer, ProducerVersion: req.ProducerVersion,
			Sensitivity: string(finalSens), ByteLength: content.ByteLength,
			PayloadPath: artifact.ObjectRel(content.ArtifactID) + "/" + content.PayloadName, RegisteredAt: at,
		}
		next := m.Clone()
		next.Revision++
		next.UpdatedAt = at
		next.FinishedAt = &at
		next.CaptureStatus = run.CaptureRegistered
		next.Lease = nil
		next.Artifacts = append(next.Artifacts, reg)
		if !analysed {
			next.Limitations = append(next.Limitations, "Stored, not analysed: "+reg.DisplayName+" is "+unread+".")
		}
		next.Reason = "registered"
		if err := runs.Append(&m, next); err != nil {
			return err
		}
		m = next
		res = &ImportResult{Run: &m, ArtifactID: content.ArtifactID, Registration: &reg, Deduplicated: existed, Analysed: analysed}
		if !analysed {
			res.NotAnalysed = unread
		}
		return nil
	})
	if err != nil {
		return nil, s.fail(ctx, runs, &m, err)
	}
	return res, nil
}

// analysable reports whether publication will extract the staged file:
// whether one of the extractors accepts it, by the content checks
// publication makes. Without a registry it asks the profile detector
// alone. A file registered as a profile kind that no extractor accepts
// is not stored quietly: publication refuses it (ARTIFACT_PARSE_FAILED).
func (s *Service) analysable(kind artifact.Kind, producer string, st *artifact.Staged) (bool, string) {
	if s.Adapters == nil {
		return profile.Detect(st.Head) != profile.FormatUnknown, NotAnalysedReason
	}
	in := adapter.ExtractInput{Kind: string(kind), Producer: producer, Path: st.Path, Head: st.Head,
		Limits: s.WS.Config.Limits}
	for _, e := range s.Adapters.Extractors() {
		if e.Accepts(in) {
			if u, ok := e.(adapter.Unread); ok {
				return false, u.UnreadReason()
			}
			return true, ""
		}
	}
	return false, NotAnalysedReason
}

// extractedKind is the kind of the first kinded extractor (a benchmark
// format's) that accepts the staged file, or "".
func (s *Service) extractedKind(st *artifact.Staged) artifact.Kind {
	if s.Adapters == nil {
		return ""
	}
	in := adapter.ExtractInput{Path: st.Path, Head: st.Head, Limits: s.WS.Config.Limits}
	for _, e := range s.Adapters.Extractors() {
		if k, ok := e.(adapter.Kinded); ok && e.Accepts(in) {
			if kind, err := artifact.ParseKind(k.ArtifactKind()); err == nil {
				return kind
			}
		}
	}
	return ""
}

// fail appends a terminal failed (or cancelled) revision and returns cause
// tagged with the run id.
func (s *Service) fail(ctx context.Context, runs *run.Store, m *run.Manifest, cause error) error {
	fe := fault.As(cause)
	status := run.CaptureFailed
	if ctx.Err() != nil {
		status = run.CaptureCancelled
		if fe.Code == fault.InternalError {
			fe = fault.Wrap(fault.ProcessCancelled, cause, "import cancelled")
		}
	}
	fe.RunID = m.RunID
	at := s.now()
	next := m.Clone()
	next.Revision++
	next.UpdatedAt = at
	next.FinishedAt = &at
	next.CaptureStatus = status
	next.Lease = nil
	next.Error = fe
	next.Reason = string(fe.Code)
	// Record the failure even if the caller's context is done.
	wctx := context.WithoutCancel(ctx)
	werr := s.WS.WithLock(wctx, s.WS.Locks(), lock.Write, func() error { return runs.Append(m, next) })
	if werr == nil {
		*m = next
	}
	return fe
}

func (s *Service) now() time.Time {
	if s.Now != nil {
		return s.Now().UTC()
	}
	return time.Now().UTC()
}

func requestedBy(s string) string {
	if s == "" {
		return "cli"
	}
	return s
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}
