package inquiry_test

import (
	"bytes"
	"testing"

	"github.com/flameox/flameox/pkg/inquiry"
	"github.com/flameox/flameox/pkg/record"
)

// FuzzDecode: any line decodes to a record of its kind or an error, and
// Validate answers without panicking on whatever Decode produced.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		`{"record":"hypothesis","schema_version":1,"workspace":"/w","hypothesis_id":"h","investigation_id":"i","revision":1,"claim":"c","prediction":"p","discriminating_condition":"d","assessment":"unassessed","lifecycle":"active","created_at":"2026-12-01T10:00:00Z"}`,
		`{"record":"run_set","schema_version":1,"run_set_id":"rs","corpus_commit_id":"c","created_at":"2026-12-01T10:00:00Z","selection_json":"{}","members_json":"[{\"run_id\":\"a\"}]","member_count":1,"membership_digest":"sha256:00"}`,
		`{"record":"trial","schema_version":1,"trial_id":"t","order_in_block":-1,"parameter_value_float":1e308}`,
		`{"record":"investigation","schema_version":1,"investigation_id":7}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		r := record.NewReader(bytes.NewReader(append(line, '\n')), "fuzz")
		for r.Scan() {
			raw, ok := r.Record().(*record.Raw)
			if !ok {
				continue
			}
			body, _, err := inquiry.Decode(raw)
			if err != nil || body == nil {
				continue
			}
			if inquiry.KindOf(body) != raw.Record {
				t.Fatalf("decoded %T for kind %s", body, raw.Record)
			}
			_ = inquiry.Validate(body)
		}
	})
}
