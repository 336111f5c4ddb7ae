//go:build unix

package identity

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flameox/flameox/pkg/digest"
	"github.com/flameox/flameox/pkg/fault"
)

var envKeys = []string{
	"os", "os_release", "kernel", "arch", "cpu_model", "cpu_logical", "cpu_available",
	"memory_total_bytes", "flameox_go", "go_toolchain", "python",
}

// checkEnvStructure asserts the invariants of any Environment, whatever
// machine it was collected on.
func checkEnvStructure(t *testing.T, e Environment, keys []string) {
	t.Helper()
	if e.MissingFields == nil || !slices.IsSorted(e.MissingFields) {
		t.Errorf("MissingFields must be sorted and non-nil: %#v", e.MissingFields)
	}
	for _, k := range keys {
		_, present := e.Fields[k]
		absent := slices.Contains(e.MissingFields, k)
		if present == absent {
			t.Errorf("field %q: present=%v missing=%v (want exactly one)", k, present, absent)
		}
	}
	for k, v := range e.Fields {
		if v == "" || !(slices.Contains(keys, k) || strings.HasPrefix(k, "collector.")) {
			t.Errorf("unexpected field %q=%q", k, v)
		}
	}
	want := QualityExact
	if len(e.MissingFields) > 0 {
		want = QualityPartial
	}
	if e.IdentityQuality != want {
		t.Errorf("quality %q with missing %v", e.IdentityQuality, e.MissingFields)
	}
	id, err := digest.Of(map[string]any{
		"identity_quality": e.IdentityQuality, "fields": e.Fields, "missing_fields": e.MissingFields,
	})
	if err != nil || id != e.EnvironmentID {
		t.Errorf("EnvironmentID %s, recomputed %s (%v)", e.EnvironmentID, id, err)
	}
	if err := e.Verify(); err != nil {
		t.Errorf("Verify: %v", err)
	}
	if e.ObservedAt.IsZero() {
		t.Error("ObservedAt is zero")
	}
}

func TestCollectEnvironmentStructure(t *testing.T) {
	ctx := context.Background()
	e := CollectEnvironment(ctx, execRunner{}, map[string]string{"perf": "perf version 6.1\n", "empty": ""}, "go", "python")
	checkEnvStructure(t, e, append(envKeys, "collector.perf", "collector.empty"))
	for _, k := range []string{"os", "arch", "flameox_go", "cpu_available"} {
		if e.Fields[k] == "" {
			t.Errorf("%s must always be known", k)
		}
	}
	if e.Fields["collector.perf"] != "perf version 6.1" || !slices.Contains(e.MissingFields, "collector.empty") {
		t.Errorf("collectors: fields %v missing %v", e.Fields, e.MissingFields)
	}

	// The same machine observed again has the same id, at a later time.
	time.Sleep(2 * time.Millisecond)
	again := CollectEnvironment(ctx, execRunner{}, map[string]string{"perf": "perf version 6.1", "empty": ""}, "go", "python")
	if again.EnvironmentID != e.EnvironmentID || !again.ObservedAt.After(e.ObservedAt) {
		t.Errorf("ids %s vs %s, times %v vs %v", e.EnvironmentID, again.EnvironmentID, e.ObservedAt, again.ObservedAt)
	}
	// A different collector version is a different environment.
	other := CollectEnvironment(ctx, execRunner{}, map[string]string{"perf": "perf version 6.2", "empty": ""}, "go", "python")
	if other.EnvironmentID == e.EnvironmentID {
		t.Error("collector version change did not change the id")
	}
}

// TestUnknownIsNotEqual: without a runner the toolchains are unknown, and
// the record must neither claim exactness nor share an id with a record in
// which they were observed.
func TestUnknownIsNotEqual(t *testing.T) {
	ctx := context.Background()
	rec := &recordingRunner{}
	failing := CollectEnvironment(ctx, rec, nil, "go", "python")
	none := CollectEnvironment(ctx, nil, nil, "go", "python")
	checkEnvStructure(t, failing, envKeys)
	for _, e := range []Environment{failing, none} {
		if e.IdentityQuality != QualityPartial ||
			!slices.Contains(e.MissingFields, "go_toolchain") || !slices.Contains(e.MissingFields, "python") {
			t.Errorf("quality %s missing %v", e.IdentityQuality, e.MissingFields)
		}
	}
	if failing.EnvironmentID != none.EnvironmentID {
		t.Error("a failing runner and no runner observe the same (nothing)")
	}
	if full := CollectEnvironment(ctx, execRunner{}, nil, "go", "python"); full.Fields["go_toolchain"] != "" && full.EnvironmentID == none.EnvironmentID {
		t.Error("known go_toolchain shares an id with unknown go_toolchain")
	}
	// Tools run from / with the fixed tool environment and nothing else.
	for _, c := range rec.calls {
		if c.dir != "/" || !slices.Equal(c.env, toolEnv()) {
			t.Errorf("%v ran in %q with env %v", c.argv, c.dir, c.env)
		}
	}
}

func TestEnvironmentNeverLeaks(t *testing.T) {
	secrets := sensitiveEnv(t)
	rec := &recordingRunner{next: execRunner{}}
	e := CollectEnvironment(context.Background(), rec, map[string]string{"perf": "6.1"}, "go", "python")
	checkEnvStructure(t, e, append(envKeys, "collector.perf"))
	assertNoLeak(t, e, rec, secrets)
	b, _ := json.Marshal(e)
	for _, s := range []string{"/home/", "secret", "TOKEN"} {
		if strings.Contains(string(b), s) {
			t.Errorf("record contains %q: %s", s, b)
		}
	}
	if len(rec.calls) == 0 {
		t.Fatal("no tool was run")
	}
}

func TestEnvironmentVerifyDetectsTampering(t *testing.T) {
	e := CollectEnvironment(context.Background(), nil, nil, "go", "python")
	b, _ := json.Marshal(e)
	var back Environment
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if err := back.Verify(); err != nil {
		t.Fatalf("round trip: %v", err)
	}
	back.ObservedAt = back.ObservedAt.Add(time.Hour)
	if err := back.Verify(); err != nil {
		t.Fatalf("observed_at is not part of the id: %v", err)
	}
	back.Fields["arch"] = "other"
	if err := back.Verify(); !fault.Is(err, fault.ArtifactIntegrityFailed) {
		t.Fatalf("tampered record: %v", err)
	}
	back.EnvironmentID = "sha256:nope"
	if err := back.Verify(); !fault.Is(err, fault.ArtifactIntegrityFailed) {
		t.Fatalf("malformed id: %v", err)
	}
}

func TestOneLine(t *testing.T) {
	cases := map[string]string{
		"Python 3.11.7\n":         "Python 3.11.7",
		"\n  go1.26.8 \r\nmore\n": "go1.26.8",
		"a\x1b[31mb\x00c":         "a[31mbc",
		"\xff":                    "\uFFFD",
		strings.Repeat("é", 150):  strings.Repeat("é", 100),
		"":                        "",
	}
	for in, want := range cases {
		if got := oneLine([]byte(in)); got != want {
			t.Errorf("oneLine(%q) = %q, want %q", in, got, want)
		}
	}
}

// cannedRunner answers every command with the same output.
type cannedRunner string

func (c cannedRunner) Output(context.Context, []string, string, []string, int64, time.Duration) ([]byte, error) {
	return []byte(c), nil
}

// A version line that quotes a URL with a credential (a tool naming its
// package index or proxy) is recorded without the credential.
func TestEnvironmentRedactsURLCredentials(t *testing.T) {
	e := CollectEnvironment(context.Background(), cannedRunner("tool 1.2 (index https://user:IDSECRET@pkgs.example.com)\n"),
		map[string]string{"perf": "perf 6.1 https://tok3nIDSECRET@h"}, "go", "python")
	b, _ := json.Marshal(e)
	if strings.Contains(string(b), "IDSECRET") {
		t.Fatalf("the record holds the credential: %s", b)
	}
	if got, want := e.Fields["go_toolchain"], "tool 1.2 (index https://user:<redacted>@pkgs.example.com)"; got != want {
		t.Errorf("go_toolchain = %q, want %q", got, want)
	}
	if got, want := e.Fields["collector.perf"], "perf 6.1 https://<redacted>@h"; got != want {
		t.Errorf("collector.perf = %q, want %q", got, want)
	}
}
