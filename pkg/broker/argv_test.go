package broker

import (
	"slices"
	"testing"
)

func TestRedactArgv(t *testing.T) {
	for _, tt := range []struct{ in, want []string }{
		{[]string{"go", "test", "-bench={b}", "./..."}, []string{"go", "test", "-bench={b}", "./..."}},
		{[]string{"curl", "--api-token=abc", "AWS_SECRET_KEY=x"}, []string{"curl", "--api-token=" + Redacted, "AWS_SECRET_KEY=" + Redacted}},
		{[]string{"login", "--password", "hunter2", "next"}, []string{"login", "--password", Redacted, "next"}},
		{[]string{"--password", "first-is-the-program"}, []string{"--password", "first-is-the-program"}},
		{[]string{"git", "clone", "https://user:secret@example.com/r"}, []string{"git", "clone", RedactCredentials("https://user:secret@example.com/r")}},
	} {
		if got := RedactArgv(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("RedactArgv(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if RedactCredentials("https://user:secret@example.com/r") == "https://user:secret@example.com/r" {
		t.Fatal("RedactCredentials left a URL credential")
	}
}
