package fleet

import "testing"

func TestRedactCommand(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"./target/mycat2 test.txt", "./target/mycat2 test.txt"},
		{"go  test -bench=.  ./...", "go  test -bench=.  ./..."}, // unchanged, spacing kept
		{"curl --api-token=abc123 x", "curl --api-token=<redacted> x"},
		{"tool --password hunter2 -v", "tool --password <redacted> -v"},
		{"GITHUB_TOKEN=ghp_x make", "GITHUB_TOKEN=<redacted> make"},
		{"wget https://user:pw@example.com/f", "wget https://user:<redacted>@example.com/f"},
		{"fetch https://example.com/f?sig=zzz", "fetch https://example.com/f?sig=<redacted>"},
	} {
		if got := redactCommand(c.in); got != c.want {
			t.Errorf("redactCommand(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
