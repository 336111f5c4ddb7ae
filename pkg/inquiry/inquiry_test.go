package inquiry_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/flameox/flameox/pkg/inquiry"
	"github.com/flameox/flameox/pkg/record"
)

// TestRoundTrip: every kind written by New comes back from Decode equal,
// with its workspace, through the record stream's own reader.
func TestRoundTrip(t *testing.T) {
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	order, v := int32(2), int64(32768)
	bodies := []any{
		&inquiry.Investigation{InvestigationID: "inv-1", Question: "why slow?", ProjectRoot: "/p", Status: "open", CreatedAt: at},
		&inquiry.Hypothesis{HypothesisID: "h-1", InvestigationID: "inv-1", Revision: 2, ExpectedRevision: 1, Claim: "c", Prediction: "p",
			DiscriminatingCondition: "d", Assessment: inquiry.Unassessed, Lifecycle: inquiry.Active, CreatedAt: at},
		&inquiry.Experiment{ExperimentID: "e-1", InvestigationID: "inv-1", Recipe: "scan", RecipeVersion: "1", PrimaryMetric: "m",
			Polarity: "lower_is_better", Estimand: "median_paired_log_ratio", ConfidenceLevel: 0.95, StoppingRuleJSON: "{}", RandomSeed: 7, Role: "primary", CreatedAt: at},
		&inquiry.Variant{VariantID: "v-1", ExperimentID: "e-1", Name: "baseline", EnvironmentRequirementsJSON: "{}", ParametersJSON: `{"impl":"a"}`},
		&inquiry.Trial{TrialID: "t-1", ExperimentID: "e-1", VariantID: "v-1", CombinationID: "c", FactorsJSON: "{}", BlockID: "b1",
			OrderInBlock: &order, ParameterName: "n", ParameterValueInt: &v, Attempt: 1, Outcome: inquiry.TrialFailed,
			ValidationStatus: "not_validated", FailureClass: "process"},
		&inquiry.RunSet{RunSetID: "rs-1", CorpusCommitID: "c1", CreatedAt: at, SelectionJSON: "{}", MembersJSON: "[]", MembershipDigest: "sha256:00"},
	}
	var buf bytes.Buffer
	for _, b := range bodies {
		line, err := json.Marshal(inquiry.New("/w", b))
		if err != nil {
			t.Fatal(err)
		}
		buf.Write(append(line, '\n'))
	}
	r := record.NewReader(&buf, "test")
	i := 0
	for r.Scan() {
		raw, ok := r.Record().(*record.Raw)
		if !ok {
			t.Fatalf("line %d: %v", i+1, r.Record())
		}
		got, ws, err := inquiry.Decode(raw)
		if err != nil || ws != "/w" {
			t.Fatalf("line %d: %v (workspace %q)", i+1, err, ws)
		}
		if raw.Record != inquiry.KindOf(bodies[i]) || !reflect.DeepEqual(got, bodies[i]) {
			t.Fatalf("line %d: got %s %+v, want %+v", i+1, raw.Record, got, bodies[i])
		}
		i++
	}
	if i != len(bodies) {
		t.Fatalf("read %d records, wrote %d", i, len(bodies))
	}
}

// TestDecodeOtherKinds: kinds this package does not define are left alone.
func TestDecodeOtherKinds(t *testing.T) {
	raw := &record.Raw{Header: record.Header{Record: "run", SchemaVersion: 1}, Line: []byte(`{"record":"run","schema_version":1}`)}
	if b, _, err := inquiry.Decode(raw); b != nil || err != nil {
		t.Fatalf("Decode(run) = %v, %v", b, err)
	}
	raw = &record.Raw{Header: record.Header{Record: "trial", SchemaVersion: 9}, Line: []byte(`{"record":"trial","schema_version":9}`)}
	if _, _, err := inquiry.Decode(raw); err == nil {
		t.Fatal("a trial record of schema_version 9 was accepted")
	}
}
