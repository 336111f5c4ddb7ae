package inquiry

import (
	"encoding/json"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/flameox/flameox/pkg/digest"
	"github.com/flameox/flameox/pkg/fault"
)

// Investigation statuses.
const (
	StatusOpen   = "open"
	StatusClosed = "closed"
)

// Experiment polarities.
const (
	LowerIsBetter  = "lower_is_better"
	HigherIsBetter = "higher_is_better"
	// Neutral: no direction is better (a categorical outcome, or a
	// metric only watched); flameox.toml's default.
	Neutral = "neutral"
)

// Assessments lists the hypothesis assessments; Lifecycles its lifecycles.
func Assessments() []string { return []string{Unassessed, Supported, Contradicted, Inconclusive} }

// Lifecycles lists the hypothesis lifecycles.
func Lifecycles() []string { return []string{Active, Retired} }

// MaxTextBytes bounds a free-text field (question, claim, ...).
const MaxTextBytes = 16 << 10

var idPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$`) })

// ValidID reports whether id can name a record: 1 to 128 letters, digits,
// '.', '_', ':' or '-', starting with a letter or digit. Ids appear in
// resource URIs and file-free tables, never in paths, but the same rule
// everywhere keeps them printable and bounded.
func ValidID(id string) bool { return idPattern().MatchString(id) }

// Member is one run of a run set, with the trial that produced it when an
// experiment froze the set.
type Member struct {
	RunID   string `json:"run_id"`
	TrialID string `json:"trial_id,omitempty"`
}

// SortMembers sorts members by run id then trial id and drops exact
// duplicates: the canonical member list.
func SortMembers(ms []Member) []Member {
	out := append([]Member(nil), ms...)
	sort.Slice(out, func(i, j int) bool {
		if out[i].RunID != out[j].RunID {
			return out[i].RunID < out[j].RunID
		}
		return out[i].TrialID < out[j].TrialID
	})
	return slices.Compact(out)
}

// MembershipDigest is the digest (pkg/digest, RFC 8785 canonical JSON) of
// the canonical member list; a run set's membership_digest.
func MembershipDigest(ms []Member) (string, error) {
	return digest.Of(SortMembers(ms))
}

// DecodeMembers reads a members_json list.
func DecodeMembers(membersJSON string) ([]Member, error) {
	var ms []Member
	if err := json.Unmarshal([]byte(membersJSON), &ms); err != nil {
		return nil, err
	}
	return ms, nil
}

func invalid(kind, field, format string, args ...any) *fault.Error {
	return fault.New(fault.InvalidArguments, kind+" record: "+field+": "+format, args...).With("record", kind).With("field", field)
}

type checker struct {
	kind string
	err  *fault.Error
}

func (c *checker) id(field, v string) {
	if c.err == nil && !ValidID(v) {
		if v == "" {
			c.err = invalid(c.kind, field, "required")
		} else {
			c.err = invalid(c.kind, field, "%q is not a valid id (1 to 128 letters, digits, '.', '_', ':' or '-')", clip(v))
		}
	}
}

func (c *checker) optID(field, v string) {
	if v != "" {
		c.id(field, v)
	}
}

func (c *checker) text(field, v string, required bool) {
	switch {
	case c.err != nil:
	case required && strings.TrimSpace(v) == "":
		c.err = invalid(c.kind, field, "required")
	case len(v) > MaxTextBytes:
		c.err = invalid(c.kind, field, "longer than %d bytes", MaxTextBytes)
	}
}

func (c *checker) oneOf(field, v string, allowed []string) {
	if c.err == nil && !slices.Contains(allowed, v) {
		c.err = invalid(c.kind, field, "%q is not one of %s", clip(v), strings.Join(allowed, ", ")).With("allowed", strings.Join(allowed, ","))
	}
}

func (c *checker) json(field, v string, required bool) {
	switch {
	case c.err != nil:
	case v == "" && !required:
	case !json.Valid([]byte(v)):
		c.err = invalid(c.kind, field, "not valid JSON")
	case len(v) > MaxTextBytes:
		c.err = invalid(c.kind, field, "longer than %d bytes", MaxTextBytes)
	}
}

func (c *checker) fail(field, format string, args ...any) {
	if c.err == nil {
		c.err = invalid(c.kind, field, format, args...)
	}
}

func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

// Validate checks one record body (a pointer to, or value of, one of this
// package's types) on its own: required fields, ids, enumerations, JSON
// fields, a run set's member count and digest. What depends on the corpus
// (a revision's predecessor, an id that must be new, a commit that must
// exist) the publisher checks under its write lock. Errors are
// INVALID_ARGUMENTS naming the record kind and field in their details.
func Validate(body any) error {
	c := &checker{kind: KindOf(body)}
	switch b := body.(type) {
	case *Investigation:
		c.id("investigation_id", b.InvestigationID)
		c.text("question", b.Question, true)
		c.text("symptom", b.Symptom, false)
		c.text("project_root", b.ProjectRoot, true)
		c.oneOf("status", b.Status, []string{StatusOpen, StatusClosed})
		c.optID("parent_investigation_id", b.ParentInvestigationID)
		if b.ParentInvestigationID == b.InvestigationID {
			c.fail("parent_investigation_id", "an investigation cannot be its own parent")
		}
		if b.CreatedAt.IsZero() {
			c.fail("created_at", "required")
		}
	case *Hypothesis:
		c.id("hypothesis_id", b.HypothesisID)
		c.id("investigation_id", b.InvestigationID)
		if b.ExpectedRevision < 0 {
			c.fail("expected_revision", "must be 0 (a new hypothesis) or the revision being replaced")
		}
		if b.Revision != b.ExpectedRevision+1 {
			c.fail("revision", "revision %d does not follow expected_revision %d", b.Revision, b.ExpectedRevision)
		}
		c.text("claim", b.Claim, true)
		c.text("prediction", b.Prediction, true)
		c.text("discriminating_condition", b.DiscriminatingCondition, true)
		c.oneOf("assessment", b.Assessment, Assessments())
		c.oneOf("lifecycle", b.Lifecycle, Lifecycles())
		if b.CreatedAt.IsZero() {
			c.fail("created_at", "required")
		}
	case *Experiment:
		c.id("experiment_id", b.ExperimentID)
		c.optID("investigation_id", b.InvestigationID)
		c.optID("hypothesis_id", b.HypothesisID)
		c.text("recipe", b.Recipe, true)
		c.text("primary_metric", b.PrimaryMetric, true)
		c.oneOf("polarity", b.Polarity, []string{LowerIsBetter, HigherIsBetter, Neutral})
		c.json("stopping_rule_json", b.StoppingRuleJSON, false)
		if b.ConfidenceLevel < 0 || b.ConfidenceLevel >= 1 {
			c.fail("confidence_level", "%v is outside [0, 1)", b.ConfidenceLevel)
		}
		if b.PracticalThreshold < 0 {
			c.fail("practical_threshold", "must not be negative")
		}
		if b.CreatedAt.IsZero() {
			c.fail("created_at", "required")
		}
	case *Variant:
		c.id("variant_id", b.VariantID)
		c.id("experiment_id", b.ExperimentID)
		c.text("name", b.Name, true)
		c.json("environment_requirements_json", b.EnvironmentRequirementsJSON, false)
		c.json("parameters_json", b.ParametersJSON, false)
	case *Trial:
		c.id("trial_id", b.TrialID)
		c.id("experiment_id", b.ExperimentID)
		c.id("variant_id", b.VariantID)
		c.json("factors_json", b.FactorsJSON, false)
		c.oneOf("outcome", b.Outcome, append(TerminalOutcomes(), TrialPending))
		if b.Attempt < 0 {
			c.fail("attempt", "must not be negative")
		}
		if b.Outcome == TrialUnattempted && b.ExclusionReason == "" {
			c.fail("exclusion_reason", "an unattempted trial says why")
		}
	case *RunSet:
		c.id("run_set_id", b.RunSetID)
		c.id("corpus_commit_id", b.CorpusCommitID)
		if b.CreatedAt.IsZero() {
			c.fail("created_at", "required")
		}
		c.json("selection_json", b.SelectionJSON, true)
		if c.err != nil {
			break
		}
		ms, err := DecodeMembers(b.MembersJSON)
		if err != nil {
			c.fail("members_json", "not a list of {run_id, trial_id}: %v", err)
			break
		}
		for _, m := range ms {
			c.id("members_json.run_id", m.RunID)
			c.optID("members_json.trial_id", m.TrialID)
		}
		if c.err != nil {
			break
		}
		if len(SortMembers(ms)) != len(ms) {
			c.fail("members_json", "lists a member twice")
		} else if uint64(len(ms)) != b.MemberCount {
			c.fail("member_count", "%d, but members_json lists %d", b.MemberCount, len(ms))
		} else if d, err := MembershipDigest(ms); err != nil || d != b.MembershipDigest {
			c.fail("membership_digest", "does not match members_json (it is %s)", d)
		}
	default:
		return fault.New(fault.InvalidArguments, "%T is not an inquiry record", body)
	}
	if c.err != nil {
		return c.err
	}
	return nil
}

// Pointer returns body as a pointer to its type (New and Decode take
// either), or nil for a value of another type.
func Pointer(body any) any {
	switch b := body.(type) {
	case Investigation:
		return &b
	case Hypothesis:
		return &b
	case Experiment:
		return &b
	case Variant:
		return &b
	case Trial:
		return &b
	case RunSet:
		return &b
	case *Investigation, *Hypothesis, *Experiment, *Variant, *Trial, *RunSet:
		return b
	}
	return nil
}
