package inquiry_test

import (
	"strings"
	"testing"
	"time"

	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/inquiry"
)

func TestParseRef(t *testing.T) {
	for _, tc := range []struct {
		in, want, err string
	}{
		{"comparison:cmp-1", "comparison:cmp-1:supports", ""},
		{"comparison:cmp-1:context", "comparison:cmp-1:context", ""},
		{" run:r-1:contradicts ", "run:r-1:contradicts", ""},
		{"artifact:sha256:abc", "artifact:sha256:abc:supports", ""},
		{"artifact:sha256:abc:validates", "artifact:sha256:abc:validates", ""},
		{"observation:sha256:ab:cd", "observation:sha256:ab:cd:supports", ""},
		{"comparison", "", "TYPE:ID"},
		{"comparison:", "", "TYPE:ID"},
		{"commit:sha256:ab", "", "ref_type"},
		{"run:a/b", "", "ref_id"},
		{"run::supports", "", "ref_id"},
	} {
		r, err := inquiry.ParseRef(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) || fault.As(err).Code != fault.InvalidArguments {
				t.Errorf("ParseRef(%q) = %v, %v; want an INVALID_ARGUMENTS error naming %s", tc.in, r, err, tc.err)
			}
			continue
		}
		if err != nil || r.String() != tc.want {
			t.Errorf("ParseRef(%q) = %v, %v; want %s", tc.in, r, err, tc.want)
		}
	}
}

func finding() *inquiry.Finding {
	return &inquiry.Finding{FindingID: "fnd-1", Revision: 1, Kind: inquiry.FindingPerformance, Title: "t", Claim: "c",
		EvidenceLevel: inquiry.LevelDerived, Confidence: "medium", Assessment: inquiry.Supported, Lifecycle: inquiry.Active,
		Limitations: []string{}, NextExperiments: []string{}, CreatedAt: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)}
}

func TestFindingValidate(t *testing.T) {
	cmp := []inquiry.EvidenceRef{{RefType: "comparison", RefID: "cmp-1", Relation: "supports"}}
	obs := []inquiry.EvidenceRef{{RefType: "observation", RefID: "sha256:ab", Relation: "supports"}}
	for _, tc := range []struct {
		name  string
		edit  func(*inquiry.Finding)
		refs  []inquiry.EvidenceRef
		field string // "" = valid
	}{
		{"valid", func(*inquiry.Finding) {}, cmp, ""},
		{"revision follows", func(f *inquiry.Finding) { f.Revision = 3; f.ExpectedRevision = 1 }, cmp, "revision"},
		{"kind", func(f *inquiry.Finding) { f.Kind = "speed" }, cmp, "kind"},
		{"title", func(f *inquiry.Finding) { f.Title = " " }, cmp, "title"},
		{"long title", func(f *inquiry.Finding) { f.Title = strings.Repeat("x", inquiry.MaxTitleBytes+1) }, cmp, "title"},
		{"level", func(f *inquiry.Finding) { f.EvidenceLevel = "seen" }, cmp, "evidence_level"},
		{"confidence", func(f *inquiry.Finding) { f.Confidence = "sure" }, cmp, "confidence"},
		{"assessment", func(f *inquiry.Finding) { f.Assessment = "contradicted" }, cmp, "assessment"},
		{"lifecycle", func(f *inquiry.Finding) { f.Lifecycle = "retired" }, cmp, "lifecycle"},
		{"empty limitation", func(f *inquiry.Finding) { f.Limitations = []string{""} }, cmp, "limitations"},
		{"no evidence", func(*inquiry.Finding) {}, nil, "evidence"},
		{"observed on an observation", func(f *inquiry.Finding) { f.EvidenceLevel = inquiry.LevelObserved }, obs, ""},
		{"observed without one", func(f *inquiry.Finding) { f.EvidenceLevel = inquiry.LevelObserved },
			[]inquiry.EvidenceRef{{RefType: "run", RefID: "r-1", Relation: "supports"}}, "evidence"},
		{"observed on a comparison", func(f *inquiry.Finding) { f.EvidenceLevel = inquiry.LevelObserved }, append(obs, cmp...), "evidence"},
		{"observed, observation as context only", func(f *inquiry.Finding) { f.EvidenceLevel = inquiry.LevelObserved },
			[]inquiry.EvidenceRef{{RefType: "observation", RefID: "o", Relation: "context"}}, "evidence"},
		{"bad relation", func(*inquiry.Finding) {}, []inquiry.EvidenceRef{{RefType: "run", RefID: "r", Relation: "proves"}}, "evidence.relation"},
	} {
		f := finding()
		tc.edit(f)
		err := f.Validate(tc.refs)
		if tc.field == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
			continue
		}
		if fe := fault.As(err); err == nil || fe.Code != fault.InvalidArguments || fe.Details["field"] != tc.field {
			t.Errorf("%s: %v, want INVALID_ARGUMENTS on field %s", tc.name, err, tc.field)
		}
	}
}

func TestMergeRefs(t *testing.T) {
	old := []inquiry.EvidenceRef{{RefType: "run", RefID: "r-1", Relation: "supports"}}
	all, fresh, err := inquiry.MergeRefs(old, []inquiry.EvidenceRef{{RefType: "run", RefID: "r-1"}, {RefType: "run", RefID: "r-2"}, {RefType: "run", RefID: "r-2"}})
	if err != nil || len(all) != 2 || len(fresh) != 1 || fresh[0].RefID != "r-2" || fresh[0].Relation != "supports" {
		t.Fatalf("MergeRefs = %v, %v, %v", all, fresh, err)
	}
}

// FuzzParseRef: any --evidence value parses to a checked reference that
// prints back to itself, or is refused with INVALID_ARGUMENTS.
func FuzzParseRef(f *testing.F) {
	for _, s := range []string{"comparison:cmp-1", "artifact:sha256:ab:context", "run::", ":", "observation:a:b:c:supports", "trial:\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := inquiry.ParseRef(s)
		if err != nil {
			if fault.As(err).Code != fault.InvalidArguments {
				t.Fatalf("ParseRef(%q): %v", s, err)
			}
			return
		}
		again, err := inquiry.ParseRef(r.String())
		if err != nil || again != r {
			t.Fatalf("ParseRef(%q) = %v; reparsed %v, %v", s, r, again, err)
		}
	})
}
