package investigate

import (
	"context"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/inquiry"
	"github.com/flameox/flameox/pkg/publish"
	"github.com/flameox/flameox/pkg/query"
)

// RecordFindingRequest is `flameox findings record` and MCP
// record_finding. Without FindingID it records a new finding (revision
// 1); with it, the next revision, accepted only while ExpectedRevision is
// still the latest. A revision's fields left empty keep the expected
// revision's values, and its evidence adds to the finding's (references
// accumulate across revisions).
type RecordFindingRequest struct {
	FindingID        string                `json:"finding_id,omitempty" jsonschema:"finding to revise (omit for a new one)"`
	ExpectedRevision int32                 `json:"expected_revision,omitempty" jsonschema:"its latest revision, which this one replaces (0: new)"`
	Kind             string                `json:"kind,omitempty" jsonschema:"what the claim is about"`
	Title            string                `json:"title,omitempty" jsonschema:"the finding in a few words"`
	Claim            string                `json:"claim,omitempty" jsonschema:"what the evidence shows"`
	EvidenceLevel    string                `json:"evidence_level,omitempty" jsonschema:"how the claim was reached"`
	Confidence       string                `json:"confidence,omitempty" jsonschema:"default unknown"`
	Assessment       string                `json:"assessment,omitempty" jsonschema:"default unassessed"`
	Lifecycle        string                `json:"lifecycle,omitempty" jsonschema:"default active"`
	Limitations      []string              `json:"limitations,omitempty" jsonschema:"stated limitations"`
	NextExperiments  []string              `json:"next_experiments,omitempty" jsonschema:"suggested next experiments"`
	Evidence         []inquiry.EvidenceRef `json:"evidence,omitempty" jsonschema:"evidence the finding cites; each must exist"`
}

// FindingRecorded is the result of recording a finding revision: the
// revision, every reference the finding now has, and CorpusCommitID, the
// commit at which each reference was found and the rule applied (the
// finding's commit reference); Publication is where it was published.
type FindingRecorded struct {
	SchemaVersion int `json:"schema_version"`
	Publication
	CorpusCommitID string                `json:"corpus_commit_id"`
	Finding        inquiry.Finding       `json:"finding"`
	Evidence       []inquiry.EvidenceRef `json:"evidence"`
	fault.Next
}

// RecordFinding checks and publishes one finding revision: every new
// reference must exist at HEAD (NOT_FOUND naming each one that does not),
// an observed finding must cite its observation, and a finding claimed
// supported must meet SPEC §7's rule (COMPARISON_INVALID, exit 6, whose
// details name each requirement that does not hold and why). The
// revision is a compare-and-swap (REVISION_CONFLICT, exit 7). Nothing is
// published when any check fails.
func RecordFinding(ctx context.Context, pub *publish.Publisher, req RecordFindingRequest) (*FindingRecorded, error) {
	f := inquiry.Finding{FindingID: strings.TrimSpace(req.FindingID), Revision: req.ExpectedRevision + 1, ExpectedRevision: req.ExpectedRevision,
		Kind: req.Kind, Title: strings.TrimSpace(req.Title), Claim: strings.TrimSpace(req.Claim), EvidenceLevel: req.EvidenceLevel,
		Confidence: req.Confidence, Assessment: req.Assessment, Lifecycle: req.Lifecycle,
		Limitations: trimAll(req.Limitations), NextExperiments: trimAll(req.NextExperiments), CreatedAt: now(pub)}
	switch {
	case f.FindingID == "" && req.ExpectedRevision != 0:
		return nil, fault.New(fault.InvalidArguments, "an expected revision names a finding to revise; give its id").With("field", "finding_id")
	case f.FindingID != "" && req.ExpectedRevision == 0:
		return nil, fault.New(fault.InvalidArguments, "revising finding %s needs its latest revision as the expected revision", f.FindingID).
			With("field", "expected_revision").
			FixSteps("Read it with %s.", fault.Step{Command: "flameox findings show " + f.FindingID, Tool: "get_finding", Arguments: map[string]any{"finding_id": f.FindingID}})
	case f.FindingID == "":
		f.FindingID = "fnd-" + uuid.NewString()
	}
	_, fresh, err := inquiry.MergeRefs(nil, req.Evidence)
	if err != nil {
		return nil, err
	}
	lookup := f.FindingID
	if req.ExpectedRevision == 0 {
		// A new finding is checked on its own before the corpus is read.
		lookup = ""
		defaults(&f)
		if err := f.Validate(fresh); err != nil {
			return nil, err
		}
	}
	facts, err := query.GetFindingFacts(ctx, pub.WS, lookup, req.ExpectedRevision, fresh)
	if err != nil {
		return nil, err
	}
	if req.ExpectedRevision > 0 {
		if facts.Current != req.ExpectedRevision {
			// The publisher would refuse it too; say so before anything else.
			return nil, conflict(f.FindingID, facts.Current, req.ExpectedRevision)
		}
		carryFinding(&f, facts.Previous)
	}
	defaults(&f)
	all, fresh, err := inquiry.MergeRefs(facts.Recorded, fresh)
	if err != nil {
		return nil, err
	}
	if len(facts.Missing) > 0 {
		names := make([]string, len(facts.Missing))
		for i, r := range facts.Missing {
			names[i] = r.RefType + ":" + r.RefID
		}
		return nil, fault.New(fault.NotFound, "the finding cites evidence the corpus does not hold at commit %s: %s", facts.CorpusCommitID, strings.Join(names, ", ")).
			With("missing_entity", facts.Missing[0].RefType).With("missing", strings.Join(names, ",")).
			FixSteps("Cite evidence that exists; look each up with %s.", fault.Step{Command: "flameox evidence get TYPE ID", Tool: "get_evidence"})
	}
	if err := f.Validate(all); err != nil {
		return nil, err
	}
	if f.Assessment == inquiry.Supported {
		if g := SupportGaps(&f, all, facts.Comparisons); len(g.Missing()) > 0 {
			return nil, unsupported(&f, g)
		}
	}
	res, err := pub.PublishFinding(ctx, &f, all, fresh, facts.CorpusCommitID)
	if err != nil {
		return nil, err
	}
	out := &FindingRecorded{SchemaVersion: 1, Publication: Publication{res.CommitID, res.GenerationID}, CorpusCommitID: facts.CorpusCommitID,
		Finding: f, Evidence: all, Next: fault.Next{NextSteps: []string{}}}
	out.Then(fault.Step{Command: "flameox findings show " + f.FindingID, Tool: "get_finding", Arguments: map[string]any{"finding_id": f.FindingID}})
	return out, nil
}

// unsupported is the refusal of a supported finding: the message and the
// details name each requirement that does not hold, with why.
func unsupported(f *inquiry.Finding, g Gaps) error {
	missing := g.Missing()
	e := fault.New(fault.ComparisonInvalid, "finding %s cannot be supported: missing %s (details say why)", f.FindingID, strings.Join(missing, ", ")).
		With("finding_id", f.FindingID).With("missing", strings.Join(missing, ","))
	for _, n := range missing {
		e = e.With(n, strings.Join(g[n], "; "))
	}
	return e.Fix("Record it as inconclusive (or unassessed) with its limitations, or run the experiment that would support it: declared estimand and practical threshold, a cross_treatment_equivalence oracle, then record its comparison.")
}

func conflict(id string, cur, expected int32) error {
	return fault.New(fault.RevisionConflict, "finding %s is at revision %d, not the expected revision %d", id, cur, expected).
		With("finding_id", id).With("current_revision", strconv.Itoa(int(cur))).With("expected_revision", strconv.Itoa(int(expected))).
		FixSteps("Read the current revision with %s, then record the change again with its number as the expected revision.",
			fault.Step{Command: "flameox findings show " + id, Tool: "get_finding", Arguments: map[string]any{"finding_id": id}})
}

// carryFinding fills f's empty fields from the revision it replaces.
func carryFinding(f *inquiry.Finding, prev *query.FindingRevision) {
	if prev == nil {
		return
	}
	fill := func(dst *string, src string) {
		if *dst == "" {
			*dst = src
		}
	}
	fill(&f.Kind, prev.Kind)
	fill(&f.Title, prev.Title)
	fill(&f.Claim, prev.Claim)
	fill(&f.EvidenceLevel, prev.EvidenceLevel)
	fill(&f.Confidence, prev.Confidence)
	fill(&f.Assessment, prev.Assessment)
	fill(&f.Lifecycle, prev.Lifecycle)
	if f.Limitations == nil {
		f.Limitations = prev.Limitations
	}
	if f.NextExperiments == nil {
		f.NextExperiments = prev.NextExperiments
	}
}

func defaults(f *inquiry.Finding) {
	if f.Confidence == "" {
		f.Confidence = "unknown"
	}
	if f.Assessment == "" {
		f.Assessment = inquiry.Unassessed
	}
	if f.Lifecycle == "" {
		f.Lifecycle = inquiry.Active
	}
	if f.Limitations == nil {
		f.Limitations = []string{}
	}
	if f.NextExperiments == nil {
		f.NextExperiments = []string{}
	}
}

// trimAll trims each value and drops empty ones; nil stays nil (a
// revision that keeps its predecessor's list).
func trimAll(vs []string) []string {
	if vs == nil {
		return nil
	}
	out := []string{}
	for _, v := range vs {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}
