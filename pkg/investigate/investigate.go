package investigate

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/inquiry"
	"github.com/flameox/flameox/pkg/publish"
	"github.com/flameox/flameox/pkg/query"
	"github.com/flameox/flameox/pkg/runset"
)

// Publication names the commit a write landed in.
type Publication struct {
	CommitID     string `json:"commit_id"`
	GenerationID string `json:"generation_id"`
}

// CreateInvestigationRequest is `flameox investigations create` and MCP
// create_investigation.
type CreateInvestigationRequest struct {
	Question              string `json:"question" jsonschema:"the question under investigation"`
	Symptom               string `json:"symptom,omitempty" jsonschema:"the observed symptom"`
	ParentInvestigationID string `json:"parent_investigation_id,omitempty" jsonschema:"investigation this one is split from"`
}

// InvestigationCreated is the result of creating an investigation.
type InvestigationCreated struct {
	SchemaVersion int `json:"schema_version"`
	Publication
	Investigation inquiry.Investigation `json:"investigation"`
}

// CreateInvestigation publishes a new, open investigation with a fresh id.
func CreateInvestigation(ctx context.Context, pub *publish.Publisher, req CreateInvestigationRequest) (*InvestigationCreated, error) {
	inv := inquiry.Investigation{InvestigationID: "inv-" + uuid.NewString(), Question: strings.TrimSpace(req.Question),
		Symptom: strings.TrimSpace(req.Symptom), ProjectRoot: pub.WS.ProjectRoot, Status: inquiry.StatusOpen,
		ParentInvestigationID: req.ParentInvestigationID, CreatedAt: now(pub)}
	res, err := pub.PublishInquiry(ctx, []any{&inv})
	if err != nil {
		return nil, err
	}
	return &InvestigationCreated{SchemaVersion: 1, Publication: Publication{res.CommitID, res.GenerationID}, Investigation: inv}, nil
}

// RecordHypothesisRequest is `flameox hypotheses record` and MCP
// record_hypothesis. Without HypothesisID it records a new hypothesis
// (revision 1); with it, the next revision of that hypothesis, which the
// publisher accepts only while ExpectedRevision is still its latest. A
// revision's text fields left empty keep the expected revision's values.
type RecordHypothesisRequest struct {
	InvestigationID         string `json:"investigation_id,omitempty" jsonschema:"investigation of a new hypothesis (a revision keeps its own)"`
	HypothesisID            string `json:"hypothesis_id,omitempty" jsonschema:"hypothesis to revise (omit for a new one)"`
	ExpectedRevision        int32  `json:"expected_revision,omitempty" jsonschema:"its latest revision, which this one replaces (0: new)"`
	Claim                   string `json:"claim,omitempty" jsonschema:"the claim"`
	Prediction              string `json:"prediction,omitempty" jsonschema:"what should be observed if the claim holds"`
	DiscriminatingCondition string `json:"discriminating_condition,omitempty" jsonschema:"what tells it apart from the alternatives"`
	Assessment              string `json:"assessment,omitempty" jsonschema:"unassessed (default), supported, contradicted or inconclusive"`
	Lifecycle               string `json:"lifecycle,omitempty" jsonschema:"active (default) or retired"`
}

// HypothesisRecorded is the result of recording a hypothesis revision.
type HypothesisRecorded struct {
	SchemaVersion int `json:"schema_version"`
	Publication
	Hypothesis inquiry.Hypothesis `json:"hypothesis"`
}

// RecordHypothesis publishes one hypothesis revision (compare-and-swap
// on ExpectedRevision: REVISION_CONFLICT names the current revision).
func RecordHypothesis(ctx context.Context, pub *publish.Publisher, req RecordHypothesisRequest) (*HypothesisRecorded, error) {
	h := inquiry.Hypothesis{HypothesisID: req.HypothesisID, InvestigationID: req.InvestigationID,
		Revision: req.ExpectedRevision + 1, ExpectedRevision: req.ExpectedRevision,
		Claim: strings.TrimSpace(req.Claim), Prediction: strings.TrimSpace(req.Prediction),
		DiscriminatingCondition: strings.TrimSpace(req.DiscriminatingCondition),
		Assessment:              req.Assessment, Lifecycle: req.Lifecycle, CreatedAt: now(pub)}
	switch {
	case h.HypothesisID == "" && req.ExpectedRevision != 0:
		return nil, fault.New(fault.InvalidArguments, "an expected revision names a hypothesis to revise; give its id").With("field", "hypothesis_id")
	case h.HypothesisID == "":
		h.HypothesisID = "hyp-" + uuid.NewString()
	case req.ExpectedRevision > 0:
		if err := carryOver(ctx, pub, &h); err != nil {
			return nil, err
		}
	}
	if h.Assessment == "" {
		h.Assessment = inquiry.Unassessed
	}
	if h.Lifecycle == "" {
		h.Lifecycle = inquiry.Active
	}
	res, err := pub.PublishInquiry(ctx, []any{&h})
	if err != nil {
		return nil, err
	}
	return &HypothesisRecorded{SchemaVersion: 1, Publication: Publication{res.CommitID, res.GenerationID}, Hypothesis: h}, nil
}

// carryOver fills h's empty fields from the revision it replaces, when
// that revision is published; the publisher still decides whether it is
// the latest.
func carryOver(ctx context.Context, pub *publish.Publisher, h *inquiry.Hypothesis) error {
	if h.Claim != "" && h.Prediction != "" && h.DiscriminatingCondition != "" && h.Assessment != "" && h.Lifecycle != "" && h.InvestigationID != "" {
		return nil
	}
	d, err := query.GetHypothesis(ctx, pub.WS, query.GetHypothesisRequest{HypothesisID: h.HypothesisID, Limit: query.MaxLimit})
	if err != nil {
		if fault.Is(err, fault.NotFound) && h.InvestigationID == "" {
			return fault.New(fault.NotFound, "no hypothesis %s in the published corpus", h.HypothesisID).With("hypothesis_id", h.HypothesisID).
				Fix("Record a new hypothesis with its investigation and expected revision 0.")
		}
		if fault.Is(err, fault.NotFound) {
			return nil // the publisher names the conflict (current revision 0)
		}
		return err
	}
	if h.InvestigationID == "" {
		h.InvestigationID = d.InvestigationID
	}
	for _, r := range d.Revisions {
		if r.Revision != h.ExpectedRevision {
			continue
		}
		fill := func(dst *string, src string) {
			if *dst == "" {
				*dst = src
			}
		}
		fill(&h.Claim, r.Claim)
		fill(&h.Prediction, r.Prediction)
		fill(&h.DiscriminatingCondition, r.DiscriminatingCondition)
		fill(&h.Assessment, r.Assessment)
		fill(&h.Lifecycle, r.Lifecycle)
	}
	return nil
}

// FreezeRequest is `flameox run-sets freeze` and MCP freeze_run_set.
type FreezeRequest struct {
	Runs  []string `json:"runs" jsonschema:"run ids of the set, each published at the current HEAD"`
	Label string   `json:"label,omitempty" jsonschema:"what the set is, in a few words"`
}

// RunSetFrozen is the result of freezing a run set. AlreadyFrozen: the
// same runs were frozen with the same label at the same commit before,
// and this is that set (nothing was published).
type RunSetFrozen struct {
	SchemaVersion int `json:"schema_version"`
	Publication
	AlreadyFrozen bool                `json:"already_frozen"`
	RunSet        query.RunSetSummary `json:"run_set"`
}

// Freeze freezes the named runs at HEAD and publishes the set. Freezing
// the same runs with the same label at the same commit again returns the
// set already frozen.
func Freeze(ctx context.Context, pub *publish.Publisher, req FreezeRequest) (*RunSetFrozen, error) {
	if len(req.Runs) == 0 {
		return nil, fault.New(fault.InvalidArguments, "a run set needs at least one run").With("field", "runs")
	}
	if len(req.Label) > 200 {
		return nil, fault.New(fault.InvalidArguments, "the label is longer than 200 bytes").With("field", "label")
	}
	members := make([]inquiry.Member, 0, len(req.Runs))
	for _, id := range req.Runs {
		members = append(members, inquiry.Member{RunID: strings.TrimSpace(id)})
	}
	rs, err := runset.Freeze(ctx, pub.WS.Root, runset.Request{
		Selection: runset.Selection{Method: runset.MethodExplicit, Label: strings.TrimSpace(req.Label)},
		Members:   members, CreatedAt: now(pub)})
	if err != nil {
		return nil, err
	}
	out := &RunSetFrozen{SchemaVersion: 1, RunSet: summary(rs)}
	res, err := pub.PublishInquiry(ctx, []any{rs})
	if fe := fault.As(err); err != nil && fe.Code == fault.RevisionConflict && fe.Details["run_set_id"] == rs.RunSetID {
		got, gerr := query.GetRunSet(ctx, pub.WS, query.GetRunSetRequest{RunSetID: rs.RunSetID, Limit: 1})
		if gerr != nil {
			return nil, gerr
		}
		out.AlreadyFrozen, out.RunSet, out.CommitID = true, got.RunSet, got.CorpusCommitID
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	out.Publication = Publication{res.CommitID, res.GenerationID}
	return out, nil
}

func summary(rs *inquiry.RunSet) query.RunSetSummary {
	return query.RunSetSummary{RunSetID: rs.RunSetID, CorpusCommitID: rs.CorpusCommitID, CreatedAt: rs.CreatedAt,
		Selection: json.RawMessage(rs.SelectionJSON), MemberCount: rs.MemberCount, MembershipDigest: rs.MembershipDigest}
}

// now is the publisher's clock, to the microsecond the tables keep.
func now(pub *publish.Publisher) time.Time {
	t := time.Now()
	if pub.Now != nil {
		t = pub.Now()
	}
	return t.UTC().Truncate(time.Microsecond)
}
