package config

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/flameox/flameox/pkg/fault"
)

func TestDefaultTOMLMatchesDefault(t *testing.T) {
	cfg, err := Parse(DefaultTOML, "config.toml")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(cfg, Default()) {
		t.Fatalf("DefaultTOML decodes to %+v, want %+v", cfg, Default())
	}
}

func TestParseRejects(t *testing.T) {
	tests := []struct {
		name, src, want string
	}{
		{"unknown key", "schema_version = 1\n[capture]\nmax_artifact_byte = 3\n", "capture.max_artifact_byte"},
		{"unknown table", "schema_version = 1\n[captur]\n", "captur"},
		{"case differs", "schema_version = 1\n[capture]\nMax_Artifact_Bytes = 3\n", "capture.Max_Artifact_Bytes"},
		{"case differs table", "schema_version = 1\n[Capture]\nmax_artifact_bytes = 3\n", "Capture"},
		{"wrong type", "schema_version = 1\n[capture]\nmax_artifact_bytes = \"big\"\n", "max_artifact_bytes"},
		{"syntax", "schema_version = = 1\n", "line 1"},
		{"missing version", "[capture]\n", "schema_version"},
		{"future version", "schema_version = 2\n", "not supported"},
		{"bad enum", "schema_version = 1\n[capture]\ndefault_sensitivity = \"secret\"\n", "default_sensitivity"},
		{"bad range", "schema_version = 1\n[storage]\nlock_timeout_seconds = 0\n", "lock_timeout_seconds"},
		{"zero limit", "schema_version = 1\n[limits]\nmax_strings = 0\n", "limits.max_strings"},
		{"unknown limit", "schema_version = 1\n[limits]\nmax_string = 5\n", "limits.max_string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(tt.src, "config.toml")
			if err == nil {
				t.Fatal("accepted")
			}
			fe := fault.As(err)
			if fe.Code != fault.WorkspaceInvalid || fe.ExitCode() != fault.ExitUsage {
				t.Fatalf("got %v (exit %d), want WORKSPACE_INVALID exit 2", fe, fe.ExitCode())
			}
			if !strings.Contains(fe.Message, tt.want) {
				t.Fatalf("message %q does not name %q", fe.Message, tt.want)
			}
			if fe.Details["file"] != "config.toml" {
				t.Fatalf("file not named: %v", fe.Details)
			}
		})
	}
}

func TestPartialConfigKeepsDefaults(t *testing.T) {
	cfg, err := Parse("schema_version = 1\n[capture]\nmax_artifact_bytes = 10\n", "c")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Capture.MaxArtifactBytes != 10 || cfg.Capture.DefaultSensitivity != "internal" || cfg.Storage.LockTimeoutSeconds != 30 {
		t.Fatalf("got %+v", cfg)
	}
}

// TestLimitsKeys: every [limits] key decodes into its own field (the
// parser's Limits carries the TOML names) and keeps the others' defaults.
func TestLimitsKeys(t *testing.T) {
	for _, l := range DefaultLimits().Each() {
		cfg, err := Parse(fmt.Sprintf("schema_version = 1\n[limits]\n%s = 7\n", l.Name), "c")
		if err != nil {
			t.Fatalf("%s: %v", l.Name, err)
		}
		for _, got := range cfg.Limits.Each() {
			want := DefaultLimits().Each()
			var def int64
			for _, w := range want {
				if w.Name == got.Name {
					def = w.Value
				}
			}
			if got.Name == l.Name && got.Value != 7 || got.Name != l.Name && got.Value != def {
				t.Fatalf("[limits] %s = 7 decoded as %s = %d", l.Name, got.Name, got.Value)
			}
		}
	}
}

type nested struct {
	Items map[string]item   `toml:"items"`
	Env   map[string]string `toml:"env"`
}
type item struct {
	Argv   []string          `toml:"argv"`
	Params map[string]choice `toml:"params"`
}
type choice struct {
	Values []string `toml:"values"`
}

func TestDecodeStrictMapsOfTables(t *testing.T) {
	ok := "[env]\nANY_KEY = \"x\"\n[items.scan]\nargv = [\"a\"]\n[items.scan.params.n]\nvalues = [\"1\"]\n"
	var v nested
	if _, err := DecodeStrict(ok, &v, "f"); err != nil {
		t.Fatalf("valid nested config rejected: %v", err)
	}
	for _, bad := range []string{
		"[items.scan]\nargx = [\"a\"]\n",
		"[items.scan.params.n]\nvalue = [\"1\"]\n",
		"[items.scan]\nArgv = [\"a\"]\n",
	} {
		var v nested
		if _, err := DecodeStrict(bad, &v, "f"); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add(DefaultTOML)
	f.Add("schema_version = 1\n[capture]\nmax_artifact_byte = 3\n")
	f.Add("schema_version = 1\n[Capture]\n")
	f.Add("a = [1, {b = 2}]\n[[x]]\ny = 1\n")
	f.Fuzz(func(t *testing.T, src string) {
		cfg, err := Parse(src, "config.toml")
		if err != nil {
			fe := fault.As(err)
			if fe.Code != fault.WorkspaceInvalid || fe.ExitCode() != fault.ExitUsage {
				t.Fatalf("unexpected error class %v", fe)
			}
			return
		}
		if err := cfg.Validate("config.toml"); err != nil {
			t.Fatalf("accepted config fails validation: %v", err)
		}
	})
}

// TestOutputTailBytes: capture.output_tail_bytes defaults to 2048 and is
// bounded.
func TestOutputTailBytes(t *testing.T) {
	c, err := Parse(DefaultTOML, "config.toml")
	if err != nil || c.Capture.OutputTailBytes != 2048 || Default().Capture.OutputTailBytes != 2048 {
		t.Fatalf("default %d, %v", c.Capture.OutputTailBytes, err)
	}
	for v, ok := range map[string]bool{"0": true, "65536": true, "65537": false, "-1": false} {
		_, err := Parse("schema_version = 1\n[capture]\noutput_tail_bytes = "+v+"\n", "config.toml")
		if (err == nil) != ok {
			t.Errorf("output_tail_bytes = %s: %v", v, err)
		}
	}
}
