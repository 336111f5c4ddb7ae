package broker

import (
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
)

var parentEnv = []string{
	"PATH=/usr/bin:/bin",
	"HOME=/home/u",
	"API_TOKEN=tok-123",
	"LD_PRELOAD=/tmp/evil.so",
	"PYTHONPATH=/tmp/py",
	"AWS_SECRET_ACCESS_KEY=aws-456",
	"LC_ALL=C",
	"LC_TIME=C",
	"ld_library_path=/x",
	"DYLD_INSERT_LIBRARIES=/y",
	"NOEQUALS",
	"PATH=/second/wins/not",
}

func TestChildEnvAllowlist(t *testing.T) {
	allow := []string{"PATH", "LC_*", "API_TOKEN", "LD_PRELOAD", "PYTHONPATH", "ld_library_path", "DYLD_INSERT_LIBRARIES"}
	env, dropped := ChildEnv(parentEnv, allow, nil, nil)
	// Being on the allowlist is not enough for a sensitive name.
	wantEnv := []string{"LC_ALL=C", "LC_TIME=C", "PATH=/usr/bin:/bin"}
	wantDropped := []string{"API_TOKEN", "AWS_SECRET_ACCESS_KEY", "DYLD_INSERT_LIBRARIES", "HOME", "LD_PRELOAD", "PYTHONPATH", "ld_library_path"}
	if !reflect.DeepEqual(env, wantEnv) {
		t.Errorf("env = %q, want %q", env, wantEnv)
	}
	if !reflect.DeepEqual(dropped, wantDropped) {
		t.Errorf("dropped = %q, want %q", dropped, wantDropped)
	}
	for _, d := range dropped {
		if strings.Contains(d, "=") || strings.Contains(d, "tok-") || strings.Contains(d, "aws-") {
			t.Errorf("dropped leaks a value: %q", d)
		}
	}
}

func TestChildEnvExplicitAndOverrides(t *testing.T) {
	overrides := map[string]string{
		"MODE":          "fast",
		"GITHUB_TOKEN":  "gh-789",   // sensitive, not allowed: refused
		"SESSION_KEY":   "k",        // sensitive but explicitly allowed
		"PATH":          "/opt/bin", // replaces the parent's
		"BAD=NAME":      "x",
		"NUL_IN_VALUE":  "a\x00b",
		"LD_AUDIT":      "/a.so",
		"CookieJarPath": "/c", // case-insensitive match on COOKIE
	}
	env, dropped := ChildEnv(parentEnv, []string{"PATH"}, []string{"API_TOKEN", "SESSION_KEY"}, overrides)
	wantEnv := []string{"API_TOKEN=tok-123", "MODE=fast", "PATH=/opt/bin", "SESSION_KEY=k"}
	if !reflect.DeepEqual(env, wantEnv) {
		t.Errorf("env = %q, want %q", env, wantEnv)
	}
	for _, name := range []string{"GITHUB_TOKEN", "BAD=NAME", "NUL_IN_VALUE", "LD_AUDIT", "CookieJarPath", "AWS_SECRET_ACCESS_KEY", "LD_PRELOAD"} {
		if !contains(dropped, name) {
			t.Errorf("dropped %q lacks %s", dropped, name)
		}
	}
	if contains(dropped, "API_TOKEN") || contains(dropped, "PATH") {
		t.Errorf("dropped %q lists a passed name", dropped)
	}
}

func TestSensitive(t *testing.T) {
	for name, want := range map[string]bool{
		"PATH": false, "HOME": false, "CUDA_VISIBLE_DEVICES": false, "LANG": false,
		"api_token": true, "MY_PASSWD": true, "XAUTHORITY": true, "SSH_AUTH_SOCK": true,
		"DYLD_LIBRARY_PATH": true, "PYTHONSTARTUP": true, "Credentials_File": true, "LD_BIND_NOW": false,
	} {
		if got := Sensitive(name); got != want {
			t.Errorf("Sensitive(%q) = %v, want %v", name, got, want)
		}
	}
}

// TestChildEnvReachesChild runs env with a filtered environment: what
// ChildEnv dropped must not reach a real process, and what it passed does.
// The child writes its environment to a file: its captured stdout has the
// allowed secret replaced (TestRunRedactsOutput).
func TestChildEnvReachesChild(t *testing.T) {
	env, dropped := ChildEnv(parentEnv, []string{"PATH", "HOME"}, []string{"API_TOKEN"}, nil)
	file := tempFile(t, "env")
	res := run(t, Spec{Argv: []string{"/bin/sh", "-c", `/usr/bin/env > "$1"; /usr/bin/env`, "sh", file}, Env: env})
	data, _ := os.ReadFile(file)
	got := slices.DeleteFunc(strings.Split(strings.TrimSpace(string(data)), "\n"), func(kv string) bool {
		return strings.HasPrefix(kv, "PWD=") // sh's own
	})
	slices.Sort(got)
	want := []string{"API_TOKEN=tok-123", "HOME=/home/u", "PATH=/usr/bin:/bin"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("child env = %q, want %q", got, want)
	}
	if out := string(res.Stdout.Data); !strings.Contains(out, "API_TOKEN=<redacted>\n") || strings.Contains(out, "tok-123") {
		t.Errorf("stdout = %q, want the token redacted", out)
	}
	for _, secret := range []string{"LD_PRELOAD", "PYTHONPATH", "AWS_SECRET_ACCESS_KEY"} {
		if strings.Contains(string(data), secret) {
			t.Errorf("%s reached the child", secret)
		}
		if !contains(dropped, secret) {
			t.Errorf("%s not reported as dropped: %q", secret, dropped)
		}
	}
}

// TestEmptyEnv: a nil Spec.Env is an empty environment, not the parent's.
func TestEmptyEnv(t *testing.T) {
	t.Setenv("FLAMEOX_BROKER_PARENT_ONLY", "1")
	res, err := Run(t.Context(), Spec{Argv: []string{"/usr/bin/env"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Stdout.Data) != 0 {
		t.Errorf("child saw environment %q", res.Stdout.Data)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
