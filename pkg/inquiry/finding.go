package inquiry

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// A finding is the conclusion of an investigation: a claim, how it was
// reached (evidence level), how sure it is, and its assessment, tied to
// the evidence it rests on (EvidenceRef, the evidence_refs table, owner
// type "finding"). Like a hypothesis it revises by compare-and-swap on
// ExpectedRevision; unlike the other records it is not a line of
// fox-publish's stream: whether it may be `supported` depends on the
// comparisons it cites (pkg/investigate), which fox-publish cannot read.

// Finding kinds. A performance finding is a claim about a metric's change
// between treatments: `supported` only under SPEC §7's rule.
const (
	FindingPerformance = "performance"
	FindingScaling     = "scaling"
	FindingCorrectness = "correctness"
	FindingBehavior    = "behavior"
	FindingOther       = "other"
)

// FindingKinds lists the finding kinds.
func FindingKinds() []string {
	return []string{FindingPerformance, FindingScaling, FindingCorrectness, FindingBehavior, FindingOther}
}

// Evidence levels: observed (read directly from an artifact or run),
// derived (computed from observations by a recorded analysis or
// comparison), inferred (reasoned beyond what was measured).
const (
	LevelObserved = "observed"
	LevelDerived  = "derived"
	LevelInferred = "inferred"
)

// EvidenceLevels lists the evidence levels.
func EvidenceLevels() []string { return []string{LevelObserved, LevelDerived, LevelInferred} }

// Confidences lists a finding's confidence values.
func Confidences() []string { return []string{"high", "medium", "low", "unknown"} }

// Finding assessments (a finding is refuted where a hypothesis is
// contradicted: the finding states what the evidence says).
const Refuted = "refuted"

// FindingAssessments lists the finding assessments.
func FindingAssessments() []string { return []string{Unassessed, Supported, Refuted, Inconclusive} }

// Finding lifecycles.
const (
	Superseded = "superseded"
	Retracted  = "retracted"
)

// FindingLifecycles lists the finding lifecycles.
func FindingLifecycles() []string { return []string{Active, Superseded, Retracted} }

// Evidence reference types a finding may cite, and relations.
var (
	refTypes  = []string{"analysis", "artifact", "comparison", "generation", "observation", "run", "run_set", "trial"}
	relations = []string{"supports", "contradicts", "context", "validates"}
)

// RefTypes lists the evidence types a finding may cite.
func RefTypes() []string { return slices.Clone(refTypes) }

// Relations lists how a cited piece of evidence bears on a finding.
func Relations() []string { return slices.Clone(relations) }

// Bounds of a finding.
const (
	MaxFindingRefs        = 100 // evidence references per revision
	MaxFindingLimitations = 50
	MaxNextExperiments    = 20
	MaxTitleBytes         = 500
)

// Finding is one revision of a finding: one findings row. Revision and
// ExpectedRevision follow Hypothesis's rule.
type Finding struct {
	FindingID        string    `json:"finding_id"`
	Revision         int32     `json:"revision"`
	ExpectedRevision int32     `json:"expected_revision"`
	Kind             string    `json:"kind"`
	Title            string    `json:"title"`
	Claim            string    `json:"claim"`
	EvidenceLevel    string    `json:"evidence_level"`
	Confidence       string    `json:"confidence"`
	Assessment       string    `json:"assessment"`
	Lifecycle        string    `json:"lifecycle"`
	Limitations      []string  `json:"limitations"`
	NextExperiments  []string  `json:"next_experiments"`
	CreatedAt        time.Time `json:"created_at"`
}

// EvidenceRef is one piece of evidence a finding cites, and how it bears
// on the claim.
type EvidenceRef struct {
	RefType  string `json:"ref_type" jsonschema:"evidence type"`
	RefID    string `json:"ref_id" jsonschema:"its id"`
	Relation string `json:"relation,omitempty" jsonschema:"default supports"`
}

// String is the ref as `flameox findings record --evidence` takes it.
func (r EvidenceRef) String() string { return r.RefType + ":" + r.RefID + ":" + r.Relation }

// ParseRef reads one --evidence value, TYPE:ID or TYPE:ID:RELATION
// (relation supports when left out). An id may itself hold ':' (an
// artifact's sha256:…), so the relation is taken from the end only when it
// is one of Relations. The ref is checked with CheckRef.
func ParseRef(s string) (EvidenceRef, error) {
	typ, rest, ok := strings.Cut(strings.TrimSpace(s), ":")
	if !ok || rest == "" {
		return EvidenceRef{}, invalid("finding", "evidence", "%q is not TYPE:ID[:RELATION]", clip(s))
	}
	r := EvidenceRef{RefType: typ, RefID: rest, Relation: "supports"}
	if i := strings.LastIndexByte(rest, ':'); i >= 0 && slices.Contains(relations, rest[i+1:]) {
		r.RefID, r.Relation = rest[:i], rest[i+1:]
	}
	return r, CheckRef(&r)
}

// CheckRef checks one reference on its own (type, id, relation; an empty
// relation becomes supports).
func CheckRef(r *EvidenceRef) error {
	if r.Relation == "" {
		r.Relation = "supports"
	}
	c := &checker{kind: "finding"}
	c.oneOf("evidence.ref_type", r.RefType, refTypes)
	c.oneOf("evidence.relation", r.Relation, relations)
	// An artifact id is sha256:HEX, a generation's or a run's an id.
	id := r.RefID
	if r.RefType == "artifact" {
		id = strings.TrimPrefix(id, "sha256:")
	}
	c.id("evidence.ref_id", id)
	if c.err != nil {
		return c.err
	}
	return nil
}

// Validate checks one finding revision and its references on their own:
// ids, enumerations, bounded text and lists, the revision rule, and that
// an observed finding rests on an observation and cites no analysis or
// comparison (those are derived). What depends on the corpus (the
// revision's predecessor, that each reference exists, SPEC §7's rule for
// `supported`) is checked by the writer. refs are the references of the
// finding after this revision: the earlier revisions' and its own.
func (f *Finding) Validate(refs []EvidenceRef) error {
	c := &checker{kind: "finding"}
	c.id("finding_id", f.FindingID)
	if f.ExpectedRevision < 0 {
		c.fail("expected_revision", "must be 0 (a new finding) or the revision being replaced")
	}
	if f.Revision != f.ExpectedRevision+1 {
		c.fail("revision", "revision %d does not follow expected_revision %d", f.Revision, f.ExpectedRevision)
	}
	c.oneOf("kind", f.Kind, FindingKinds())
	c.text("title", f.Title, true)
	if c.err == nil && len(f.Title) > MaxTitleBytes {
		c.fail("title", "longer than %d bytes", MaxTitleBytes)
	}
	c.text("claim", f.Claim, true)
	c.oneOf("evidence_level", f.EvidenceLevel, EvidenceLevels())
	c.oneOf("confidence", f.Confidence, Confidences())
	c.oneOf("assessment", f.Assessment, FindingAssessments())
	c.oneOf("lifecycle", f.Lifecycle, FindingLifecycles())
	list := func(field string, vs []string, max int) {
		if len(vs) > max {
			c.fail(field, "more than %d entries", max)
		}
		for _, v := range vs {
			c.text(field, v, true)
		}
	}
	list("limitations", f.Limitations, MaxFindingLimitations)
	list("next_experiments", f.NextExperiments, MaxNextExperiments)
	if f.CreatedAt.IsZero() {
		c.fail("created_at", "required")
	}
	if c.err != nil {
		return c.err
	}
	if len(refs) == 0 {
		return invalid("finding", "evidence", "a finding cites the evidence it rests on; none given").
			Fix("Cite it with --evidence TYPE:ID[:RELATION], e.g. --evidence comparison:cmp-…")
	}
	if len(refs) > 10*MaxFindingRefs {
		return invalid("finding", "evidence", "more than %d references", 10*MaxFindingRefs)
	}
	observation := false
	for i := range refs {
		r := refs[i]
		if err := CheckRef(&r); err != nil {
			return err
		}
		if f.EvidenceLevel == LevelObserved && (r.RefType == "analysis" || r.RefType == "comparison") {
			return invalid("finding", "evidence", "an observed finding cites what was observed; %s %s is derived evidence (evidence level derived)", r.RefType, r.RefID).
				With("ref_type", r.RefType).With("ref_id", r.RefID)
		}
		if r.RefType == "observation" && r.Relation == "supports" {
			observation = true
		}
	}
	if f.EvidenceLevel == LevelObserved && !observation {
		return invalid("finding", "evidence", "an observed finding cites the observation it rests on (--evidence observation:ID)").
			With("missing", "observation")
	}
	return nil
}

// MergeRefs returns the references of old followed by those of add not
// already in it, each checked and with its relation defaulted; a
// reference given twice is kept once.
func MergeRefs(old, add []EvidenceRef) ([]EvidenceRef, []EvidenceRef, error) {
	seen := map[EvidenceRef]bool{}
	all := make([]EvidenceRef, 0, len(old)+len(add))
	for _, r := range old {
		if !seen[r] {
			seen[r] = true
			all = append(all, r)
		}
	}
	fresh := []EvidenceRef{}
	for _, r := range add {
		if err := CheckRef(&r); err != nil {
			return nil, nil, err
		}
		if !seen[r] {
			seen[r] = true
			all = append(all, r)
			fresh = append(fresh, r)
		}
	}
	if len(fresh) > MaxFindingRefs {
		return nil, nil, invalid("finding", "evidence", "more than %d references in one revision", MaxFindingRefs)
	}
	return all, fresh, nil
}

// Describe names a reference for a message.
func (r EvidenceRef) Describe() string { return fmt.Sprintf("%s %s", r.RefType, r.RefID) }
