package runset

import (
	"context"
	"strings"
	"time"

	"github.com/flameox/flameox/pkg/corpus"
	"github.com/flameox/flameox/pkg/digest"
	"github.com/flameox/flameox/pkg/evidence/schema"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/inquiry"
	"github.com/flameox/flameox/pkg/lock"
)

// MaxMembers bounds one run set.
const MaxMembers = 10000

// lockWait bounds the wait for the retention lock (held exclusively only
// while retention removes files).
const lockWait = 30 * time.Second

// Selection methods (Selection.Method).
const (
	MethodExplicit   = "explicit"   // runs named one by one (flameox run-sets freeze --runs)
	MethodExperiment = "experiment" // one variant's trials of an experiment
)

// Selection records how a set's members were chosen; it is the set's
// selection_json.
type Selection struct {
	Method       string `json:"method"`
	Label        string `json:"label,omitempty"`
	ExperimentID string `json:"experiment_id,omitempty"`
	VariantID    string `json:"variant_id,omitempty"`
	// Filters holds any other criteria, canonical text.
	Filters map[string]string `json:"filters,omitempty"`
}

// Request is one set to freeze.
type Request struct {
	// CommitID is the commit to pin; "" pins HEAD at the time of Freeze.
	CommitID  string
	Selection Selection
	Members   []inquiry.Member
	// Unpublished: the members need not be at the commit yet. fox-capture
	// freezes the runs it has just captured, which fox-publish publishes
	// in the same stream; the commit is then the HEAD the runs were
	// captured against. Everyone else leaves it false, and every member
	// must be a run at the commit.
	Unpublished bool
	CreatedAt   time.Time
}

// Digest is the membership digest of a member list: the digest of its
// canonical form (sorted by run id then trial id, duplicates dropped).
func Digest(members []inquiry.Member) (string, error) { return inquiry.MembershipDigest(members) }

// ID is a set's id: "rs-" and 32 hex digits of the digest of its
// selection and canonical members. Freezing the same runs the same way
// again gives the same id, so a second freeze finds the set already
// frozen (pinned at the commit of the first) rather than a near copy;
// any difference (one run, the label, the experiment) is a new set. The
// commit is not part of the id: freezing publishes, so HEAD always moves
// between two freezes.
func ID(sel Selection, members []inquiry.Member) (string, error) {
	d, err := digest.Of(struct {
		Selection Selection        `json:"selection"`
		Members   []inquiry.Member `json:"members"`
	}{sel, inquiry.SortMembers(members)})
	if err != nil {
		return "", err
	}
	h, err := digest.Hex(d)
	if err != nil {
		return "", err
	}
	return "rs-" + h[:32], nil
}

// IsID reports whether s is spelled as ID spells a set's id, so a
// command can tell a run set from a run by its argument.
func IsID(s string) bool {
	if len(s) != len("rs-")+32 || !strings.HasPrefix(s, "rs-") {
		return false
	}
	for _, c := range s[len("rs-"):] {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// Freeze builds the run set of req without publishing it. Every member
// must be a run of the pinned commit (NOT_FOUND naming the first one that
// is not), unless req.Unpublished.
func Freeze(ctx context.Context, root string, req Request) (*inquiry.RunSet, error) {
	if len(req.Members) > MaxMembers {
		return nil, fault.New(fault.InvalidArguments, "%d runs; a run set holds at most %d", len(req.Members), MaxMembers)
	}
	if req.Selection.Method == "" {
		return nil, fault.New(fault.InvalidArguments, "the selection has no method").With("field", "selection.method")
	}
	members := inquiry.SortMembers(req.Members)
	for i := 1; i < len(members); i++ {
		if members[i].RunID == members[i-1].RunID { // one run, two trials
			return nil, fault.New(fault.InvalidArguments, "run %s is listed twice", members[i].RunID).With("run_id", members[i].RunID)
		}
	}
	for _, m := range members {
		if !inquiry.ValidID(m.RunID) || (m.TrialID != "" && !inquiry.ValidID(m.TrialID)) {
			return nil, fault.New(fault.InvalidArguments, "%q is not a run id", clip(m.RunID)).With("run_id", clip(m.RunID))
		}
	}
	// Readers hold the retention lock shared while they read files.
	release, err := lock.NewSet(root, lockWait).Lock(ctx, lock.Retention, true)
	if err != nil {
		return nil, err
	}
	defer release()
	snap, err := pin(root, req.CommitID)
	if err != nil {
		return nil, err
	}
	if !req.Unpublished {
		if err := checkRuns(ctx, snap, members); err != nil {
			return nil, err
		}
	}
	commit := snap.Commit.CommitID
	id, err := ID(req.Selection, members)
	if err != nil {
		return nil, err
	}
	sel, err := digest.Canonical(req.Selection)
	if err != nil {
		return nil, err
	}
	mj, err := digest.Canonical(members)
	if err != nil {
		return nil, err
	}
	d, err := Digest(members)
	if err != nil {
		return nil, err
	}
	at := req.CreatedAt
	if at.IsZero() {
		at = time.Now()
	}
	rs := &inquiry.RunSet{RunSetID: id, CorpusCommitID: commit, CreatedAt: at.UTC().Truncate(time.Microsecond),
		SelectionJSON: string(sel), MembersJSON: string(mj), MemberCount: uint64(len(members)), MembershipDigest: d}
	if err := inquiry.Validate(rs); err != nil {
		return nil, err
	}
	return rs, nil
}

func pin(root, commitID string) (*corpus.Snapshot, error) {
	if commitID == "" {
		return corpus.Pin(root)
	}
	snap, err := corpus.PinCommit(root, commitID)
	if err != nil {
		return nil, fault.Wrap(fault.NotFound, err, "commit %s", clip(commitID)).With("commit_id", clip(commitID))
	}
	return snap, nil
}

// checkRuns fails with NOT_FOUND for the first member that is not a run
// of snap.
func checkRuns(ctx context.Context, snap *corpus.Snapshot, members []inquiry.Member) error {
	want := map[string]bool{}
	for _, m := range members {
		want[m.RunID] = false
	}
	for _, f := range snap.Files[schema.Runs.Name] {
		err := schema.Scan(ctx, schema.Runs, f, []string{"run_id"}, func(row []any) error {
			if id, ok := row[0].(string); ok {
				if _, named := want[id]; named {
					want[id] = true
				}
			}
			return nil
		})
		if err != nil {
			return fault.Wrap(fault.ArtifactIntegrityFailed, err, "read the runs of commit %s", snap.Commit.CommitID)
		}
	}
	for _, m := range members {
		if !want[m.RunID] {
			return fault.New(fault.NotFound, "run %s is not in commit %s", m.RunID, corpus.Short(snap.Commit.CommitID)).
				With("run_id", m.RunID).With("commit_id", snap.Commit.CommitID).
				FixSteps("List the published runs with %s; a run is in the corpus once it is published.", fault.Step{Command: "flameox runs list", Tool: "list_runs"})
		}
	}
	return nil
}

func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return strings.ToValidUTF8(s, "?")
}

// Repin makes rs name a commit that holds every member: unchanged when its
// own commit does; pinned at HEAD when that holds them instead (a set
// fox-capture froze against the HEAD its runs were captured on, which
// fox-publish has just published); NOT_FOUND when neither does. The id
// and membership digest do not depend on the commit and stay as they
// are. It reports whether the commit changed.
func Repin(ctx context.Context, root string, rs *inquiry.RunSet) (bool, error) {
	members, err := inquiry.DecodeMembers(rs.MembersJSON)
	if err != nil {
		return false, err
	}
	release, err := lock.NewSet(root, lockWait).Lock(ctx, lock.Retention, true)
	if err != nil {
		return false, err
	}
	defer release()
	own, err := pin(root, rs.CorpusCommitID)
	if err != nil {
		return false, err
	}
	if checkRuns(ctx, own, members) == nil {
		return false, nil
	}
	head, err := corpus.Pin(root)
	if err != nil {
		return false, err
	}
	if err := checkRuns(ctx, head, members); err != nil {
		return false, err
	}
	rs.CorpusCommitID = head.Commit.CommitID
	return true, nil
}
