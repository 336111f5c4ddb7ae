package workload

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/flameox/flameox/pkg/fault"
)

func TestParseParameterArgs(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want map[string]any // nil: refused
		why  string         // what the refusal says
	}{
		{"none", nil, map[string]any{}, ""},
		{"empty JSON object", []string{"{}"}, map[string]any{}, ""},
		{"empty argument", []string{""}, map[string]any{}, ""},
		{"JSON", []string{`{"mode":"candidate","count":25,"ratio":0.5,"fast":true}`},
			map[string]any{"mode": "candidate", "count": json.Number("25"), "ratio": json.Number("0.5"), "fast": true}, ""},
		{"JSON with spaces", []string{` { "mode" : "a" } `}, map[string]any{"mode": "a"}, ""},
		{"one pair", []string{"mode=candidate"}, map[string]any{"mode": "candidate"}, ""},
		{"comma-separated", []string{"mode=candidate,count=25"}, map[string]any{"mode": "candidate", "count": "25"}, ""},
		{"repeated", []string{"mode=candidate", "count=25"}, map[string]any{"mode": "candidate", "count": "25"}, ""},
		{"repeated and separated", []string{"mode=a,count=2", "ratio=0.5"}, map[string]any{"mode": "a", "count": "2", "ratio": "0.5"}, ""},
		{"JSON and pairs", []string{`{"mode":"a"}`, "count=2"}, map[string]any{"mode": "a", "count": "2"}, ""},
		{"value with =", []string{"expr=a=b"}, map[string]any{"expr": "a=b"}, ""},
		{"empty value", []string{"mode="}, map[string]any{"mode": ""}, ""},
		{"value kept as written", []string{"v= a b "}, map[string]any{"v": " a b"}, ""},
		{"space after comma", []string{"a=1, b=2"}, map[string]any{"a": "1", "b": "2"}, ""},
		{"value with braces", []string{"v={x}"}, map[string]any{"v": "{x}"}, ""},
		// Refused.
		{"duplicate pair", []string{"mode=a,mode=b"}, nil, `--parameters gives "mode" more than once`},
		{"duplicate across flags", []string{"mode=a", "mode=a"}, nil, `gives "mode" more than once`},
		{"duplicate JSON member", []string{`{"mode":"a","mode":"b"}`}, nil, `gives "mode" more than once`},
		{"duplicate JSON and pair", []string{`{"count":1}`, "count=1"}, nil, `gives "count" more than once`},
		{"no =", []string{"mode"}, nil, `"mode" is not KEY=VALUE`},
		{"empty key", []string{"=a"}, nil, `"=a" is not KEY=VALUE`},
		{"trailing comma", []string{"a=1,"}, nil, `"" is not KEY=VALUE`},
		{"comma in value", []string{"tags=a,b"}, nil, `"b" is not KEY=VALUE`},
		{"JSON array", []string{`[1]`}, nil, "is not KEY=VALUE"},
		{"JSON null", []string{`null`}, nil, "is not KEY=VALUE"},
		{"JSON unclosed", []string{`{"a":1`}, nil, "is not a JSON object"},
		{"JSON bad member", []string{`{"a":}`}, nil, "is not a JSON object"},
		{"JSON trailing data", []string{`{"a":1}{"b":2}`}, nil, "has data after the JSON object"},
		{"JSON trailing text", []string{`{"a":1} b=2`}, nil, "has data after the JSON object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseParameterArgs(tt.args)
			if tt.want != nil {
				if err != nil || !reflect.DeepEqual(got, tt.want) {
					t.Fatalf("got %#v %v, want %#v", got, err, tt.want)
				}
				return
			}
			fe := fault.As(err)
			if fe == nil || fe.Code != fault.InvalidArguments || fe.ExitCode() != fault.ExitUsage || fe.Details["flag"] != "parameters" ||
				!strings.Contains(fe.Message, tt.why) || len(fe.Remediation) != 1 || !strings.Contains(fe.Remediation[0], "KEY=VALUE") {
				t.Fatalf("got %#v %v, want INVALID_ARGUMENTS saying %q", got, fe, tt.why)
			}
		})
	}
}

// TestParameterFormsRenderAlike: the pair form and the JSON form select the
// same values of every parameter kind.
func TestParameterFormsRenderAlike(t *testing.T) {
	w := mustParse(t, ranged).Workloads["r"]
	pairs, err := ParseParameterArgs([]string{"count=25,ratio=0.25", "mode=b"})
	if err != nil {
		t.Fatal(err)
	}
	obj, err := ParseParameterArgs([]string{`{"count": 25, "ratio": 0.25, "mode": "b"}`})
	if err != nil {
		t.Fatal(err)
	}
	a, err := w.Render("/p", pairs)
	if err != nil {
		t.Fatal(err)
	}
	b, err := w.Render("/p", obj)
	if err != nil || a.InstanceID != b.InstanceID || a.Argv[1] != "--count=25" || a.Argv[2] != "0.25" || a.Argv[3] != "b" {
		t.Fatalf("pairs %q, JSON %v %v", a.Argv, b, err)
	}
}

// FuzzParseParameterArgs: the parser never panics; a refusal is
// INVALID_ARGUMENTS; accepted values, written back as one JSON object, parse
// to the same map.
func FuzzParseParameterArgs(f *testing.F) {
	for _, s := range []string{"", "{}", "a=1", "a=1,b=2", "a==", "=", ",", "a=1,a=2", `{"a":1,"a":2}`, `{"a":[1,{"b":null}]}`, `{"a":1}x`, ` {"a":"\u0000"} `, "a={", "{a=1}"} {
		f.Add(s, "b=2")
	}
	f.Fuzz(func(t *testing.T, one, two string) {
		got, err := ParseParameterArgs([]string{one, two})
		if err != nil {
			if !fault.Is(err, fault.InvalidArguments) {
				t.Fatalf("error is not INVALID_ARGUMENTS: %v", err)
			}
			return
		}
		if !utf8.ValidString(one) || !utf8.ValidString(two) {
			return // JSON would write invalid UTF-8 as U+FFFD
		}
		b, err := json.Marshal(got)
		if err != nil {
			t.Fatal(err)
		}
		again, err := ParseParameterArgs([]string{string(b)})
		if err != nil {
			t.Fatalf("%s does not parse again: %v", b, err)
		}
		want, _ := json.Marshal(again)
		if string(want) != string(b) {
			t.Fatalf("round trip %s → %s", b, want)
		}
	})
}
