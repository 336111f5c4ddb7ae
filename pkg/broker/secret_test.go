package broker

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

func TestURLCredentials(t *testing.T) {
	for _, tc := range []struct {
		value, redacted string
	}{
		{"https://proxy.golang.org,direct", "https://proxy.golang.org,direct"},
		{"https://user:SECRET@host/path", "https://user:<redacted>@host/path"},
		{"https://token123@github.com", "https://<redacted>@github.com"},
		{"https://a:S1x@h1,https://b:S2y@h2|direct", "https://a:<redacted>@h1,https://b:<redacted>@h2|direct"},
		{"http://u:p%40ss@proxy:3128", "http://u:<redacted>@proxy:3128"},
		{"https://h/x?access_token=abc&x=1&sig=zz#frag", "https://h/x?access_token=<redacted>&x=1&sig=<redacted>#frag"},
		{"https://h/x?api_key=k1;other", "https://h/x?api_key=<redacted>;other"},
		{"https://host/a@b", "https://host/a@b"}, // @ in the path is no user info
		{"https://user:@host", "https://user:@host"},
		{"mailto:someone@example.com", "mailto:someone@example.com"},
		{"://x@y", "://x@y"},
		{"/usr/bin:/bin", "/usr/bin:/bin"},
		{"see socks5://me:pw@10.0.0.1:1080 now", "see socks5://me:<redacted>@10.0.0.1:1080 now"},
	} {
		if got := RedactCredentials(tc.value); got != tc.redacted {
			t.Errorf("RedactCredentials(%q) = %q, want %q", tc.value, got, tc.redacted)
		}
		if got, want := HasCredential(tc.value), tc.value != tc.redacted; got != want {
			t.Errorf("HasCredential(%q) = %v, want %v", tc.value, got, want)
		}
	}
}

// A credential inside an allow-listed variable keeps the variable from the
// child unless the workload names it; the name is dropped, never the value.
func TestChildEnvDropsURLCredentials(t *testing.T) {
	parent := []string{"PATH=/bin", "GOPROXY=https://user:SECRET@host", "HTTPS_PROXY=http://tok3n@proxy:3128",
		"GOFLAGS=-mod=mod", "GOPATH=/go"}
	allow := []string{"PATH", "GOPROXY", "HTTPS_PROXY", "GOFLAGS", "GOPATH"}
	for name, tc := range map[string]struct {
		explicit          []string
		wantEnv, wantDrop []string
	}{
		"default": {nil, []string{"GOFLAGS=-mod=mod", "GOPATH=/go", "PATH=/bin"}, []string{"GOPROXY", "HTTPS_PROXY"}},
		"allow_env": {[]string{"GOPROXY"}, []string{"GOFLAGS=-mod=mod", "GOPATH=/go", "GOPROXY=https://user:SECRET@host", "PATH=/bin"},
			[]string{"HTTPS_PROXY"}},
	} {
		env, dropped := ChildEnv(parent, allow, tc.explicit, nil)
		if !slices.Equal(env, tc.wantEnv) || !slices.Equal(dropped, tc.wantDrop) {
			t.Errorf("%s: env %q dropped %q; want %q, %q", name, env, dropped, tc.wantEnv, tc.wantDrop)
		}
	}
}

func TestSecrets(t *testing.T) {
	// From the parent, only URL credentials: its secret-looking names did
	// not reach the child.
	got := secrets([]string{"GOPROXY=https://user:p%40ssword@h,https://tok3nvalue@h2", "API_TOKEN=abcdefgh",
		"SESSION_KEY=short", "PLAIN=https://h/x", "AUTH_X=abcdefgh"},
		[]string{"SSH_AUTH_SOCK=/run/user/1000/ssh", "HTTPS_PROXY=http://u:pr0xypass@p"})
	var values []string
	for _, s := range got {
		values = append(values, s.value+"="+strings.Join(s.names, "+"))
	}
	want := []string{"p%40ssword=GOPROXY", "tok3nvalue=GOPROXY", "pr0xypass=HTTPS_PROXY", "p@ssword=GOPROXY", "abcdefgh=API_TOKEN+AUTH_X"}
	if !slices.Equal(values, want) {
		t.Errorf("secrets = %q, want %q", values, want)
	}
}

// redactAll is the reference: every secret replaced, longest first, in
// one pass over the whole stream.
func redactAll(s string, secrets []string) string {
	sorted := slices.Clone(secrets)
	slices.SortStableFunc(sorted, func(a, b string) int { return len(b) - len(a) })
	var pairs []string
	for _, v := range sorted {
		pairs = append(pairs, v, Redacted)
	}
	return strings.NewReplacer(pairs...).Replace(s)
}

func redactChunks(secrets []string, chunks ...string) (string, int) {
	var ss []secret
	for _, v := range secrets {
		ss = append(ss, secret{value: v})
	}
	slices.SortStableFunc(ss, func(a, b secret) int { return len(b.value) - len(a.value) })
	r := newRedactor(ss)
	var out []byte
	for _, c := range chunks {
		out = r.push([]byte(c), out)
	}
	out = r.flush(out)
	n := 0
	for _, h := range r.hits {
		n += h
	}
	return string(out), n
}

// A secret split across any two writes is still replaced, and what is not
// a secret comes through unchanged.
func TestRedactorSplits(t *testing.T) {
	secrets := []string{"SECRET42", "CRET42xyz", "tok3nvalue"}
	for _, stream := range []string{
		"go: GET https://user:SECRET42@host: 401\n",
		"SECRET4 SECRET42SECRET42 tok3nvaluE tok3nvalue",
		"xSECRET42xyz and SECCRET42xyz",
		"no secret at all, but a prefix at the end: tok3nval",
	} {
		want := redactAll(stream, secrets)
		for i := 0; i <= len(stream); i++ {
			for j := i; j <= len(stream); j++ {
				if got, _ := redactChunks(secrets, stream[:i], stream[i:j], stream[j:]); got != want {
					t.Fatalf("split %d,%d of %q: %q, want %q", i, j, stream, got, want)
				}
			}
		}
	}
	if got, n := redactChunks(secrets, "a SECRET42 b tok3nvalue"); got != "a <redacted> b <redacted>" || n != 2 {
		t.Errorf("got %q with %d replacements", got, n)
	}
	// Only a tail that could still become a secret is held back.
	r := newRedactor([]secret{{value: "SECRET42"}})
	if out := r.push([]byte(strings.Repeat("x", 1<<16)+"SECR"), nil); len(out) != 1<<16 || string(r.pending) != "SECR" {
		t.Errorf("pushed %d bytes, %d held back (%q)", len(out), len(r.pending), r.pending)
	}
}

// FuzzRedactor checks, for any stream cut anywhere, that no secret is left
// in the output when the secret cannot overlap the marker, and that the
// result does not depend on where the stream was cut.
func FuzzRedactor(f *testing.F) {
	f.Add("https://user:SECRET@host and SECRET", "SECRET", "ECRETS", uint8(3))
	f.Add("aaaaaaab", "aaab", "aab", uint8(5))
	f.Fuzz(func(t *testing.T, stream, s1, s2 string, cut uint8) {
		var secrets []string
		for _, s := range []string{s1, s2} {
			if s != "" && !strings.Contains(Redacted, s) && !slices.Contains(secrets, s) {
				secrets = append(secrets, s)
			}
		}
		if len(secrets) == 0 || len(stream) > 4096 {
			return
		}
		whole, _ := redactChunks(secrets, stream)
		i := int(cut) % (len(stream) + 1)
		if split, _ := redactChunks(secrets, stream[:i], stream[i:]); split != whole {
			t.Fatalf("cut at %d: %q, whole: %q", i, split, whole)
		}
		for _, s := range secrets {
			if strings.Contains(whole, s) && !strings.ContainsAny(s, "<>redacted") {
				t.Fatalf("secret %q left in %q", s, whole)
			}
		}
	})
}

// FuzzURLCredentials: the credentials found are in bounds, in order and
// do not overlap, and redacting them removes them.
func FuzzURLCredentials(f *testing.F) {
	for _, s := range []string{"https://user:SECRET@host", "https://tok@h,https://a:b@c|direct", "http://h/?token=x&sig=y#z", "://@", "a://b@"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		last := 0
		for _, c := range urlCredentials(s) {
			if c.start < last || c.end <= c.start || c.end > len(s) {
				t.Fatalf("credential [%d,%d) after %d in %q", c.start, c.end, last, s)
			}
			last = c.end
		}
		if HasCredential(s) && RedactCredentials(s) == s {
			t.Fatalf("nothing redacted in %q", s)
		}
	})
}

// Run keeps secrets out of the captured output, in memory and streamed to
// a writer, even when the child writes one in pieces: those of its own
// environment (a URL credential, a Sensitive name the workload allowed) and
// those of flameox's environment that the child found elsewhere.
func TestRunRedactsOutput(t *testing.T) {
	t.Setenv("FX_TEST_PARENT_URL", "https://parent-tok3n@example.com")
	env := append(slices.Clone(testEnv), "GOPROXY=https://user:SECRET1234@host,direct", "API_TOKEN=tok-567890")
	script := `echo "$GOPROXY"; printf 'SECR'; sleep 0.05; printf 'ET1234\n'; echo "$API_TOKEN" >&2; echo parent-tok3n; echo SECRET12`
	var w bytes.Buffer
	for name, spec := range map[string]Spec{
		"memory": {Argv: []string{"/bin/sh", "-c", script}, Env: env},
		"writer": {Argv: []string{"/bin/sh", "-c", script}, Env: env, Stdout: &w},
	} {
		res := run(t, spec)
		out := string(res.Stdout.Data)
		if spec.Stdout != nil {
			out = w.String()
		}
		wantOut := "https://user:<redacted>@host,direct\n<redacted>\n<redacted>\nSECRET12\n"
		if out != wantOut || string(res.Stderr.Data) != "<redacted>\n" {
			t.Errorf("%s: stdout %q, stderr %q; want %q, %q", name, out, res.Stderr.Data, wantOut, "<redacted>\n")
		}
		if res.Stdout.Redactions != 3 || res.Stderr.Redactions != 1 || res.Stdout.Truncated {
			t.Errorf("%s: stdout %+v, stderr %+v", name, res.Stdout, res.Stderr)
		}
		if want := []string{"API_TOKEN", "FX_TEST_PARENT_URL", "GOPROXY"}; !slices.Equal(res.Redacted, want) {
			t.Errorf("%s: redacted %q, want %q", name, res.Redacted, want)
		}
	}
}

// BenchmarkRedactor measures the redactor over output with few secret
// first bytes (typical text) in pipe-sized pieces.
func BenchmarkRedactor(b *testing.B) {
	chunk := bytes.Repeat([]byte("goroutine 1 [running]: main.work(0xc000012345) /src/main.go:42 +0x1d\n"), 1000)
	r := newRedactor([]secret{{value: "SECRET1234567"}, {value: "tok3nvalue"}, {value: "p@ssword"}})
	var out []byte
	b.SetBytes(int64(len(chunk)))
	for b.Loop() {
		out = r.push(chunk, out[:0])
	}
}
