package securitytest

import (
	"strings"
	"testing"
)

// TestAttribute checks the strace attribution on made-up logs, so that the
// no-socket check can fail: a socket call by flameox, by one of its
// threads, or by a forked child before it execs is flameox's; one after
// the child's execve, or by the workload's own children, is not.
func TestAttribute(t *testing.T) {
	const head = `100 execve("/tmp/go-build/securitytest.test", ["securitytest.test", "capture"], 0x7ff /* 30 vars */) = 0
100 clone(child_stack=0xc000, flags=CLONE_VM|CLONE_FS|CLONE_FILES|CLONE_SIGHAND|CLONE_THREAD) = 101
100 clone(child_stack=NULL, flags=CLONE_VM|CLONE_VFORK|SIGCHLD <unfinished ...>
102 execve("/bin/sh", ["/bin/sh", "-c", "x"], 0x11 /* 6 vars */ <unfinished ...>
100 <... clone resumed>)           = 102
102 <... execve resumed>) = 0
102 clone(child_stack=NULL, flags=CLONE_CHILD_CLEARTID|SIGCHLD) = 103
103 execve("/usr/bin/curl", ["curl"], 0x1 /* 6 vars */) = 0
`
	tests := []struct {
		name string
		log  string
		want map[string]int
	}{
		{"quiet", head, map[string]int{}},
		{"flameox itself", head + `100 socket(AF_INET, SOCK_STREAM|SOCK_CLOEXEC|SOCK_NONBLOCK, IPPROTO_IP) = 3
`, map[string]int{"securitytest.test": 1}},
		{"a flameox thread", head + `101 connect(3, {sa_family=AF_INET, sin_port=htons(443)}, 16) = -1 EINPROGRESS (Operation now in progress)
`, map[string]int{"securitytest.test": 1}},
		{"the workload and its child", head + `102 socket(AF_UNIX, SOCK_STREAM, 0) = 3
103 connect(3, {sa_family=AF_INET}, 16 <unfinished ...>
103 <... connect resumed>) = 0
`, map[string]int{"sh": 1, "curl": 1}},
		{"a fork before its execve", head + `100 clone(child_stack=NULL, flags=SIGCHLD) = 104
104 socket(AF_NETLINK, SOCK_RAW, 0) = 3
104 execve("/bin/true", ["true"], 0x1 /* 1 var */) = 0
104 socket(AF_INET, SOCK_DGRAM, 0) = 3
`, map[string]int{"securitytest.test": 1, "true": 1}},
		{"a process never introduced", `555 socket(AF_INET, SOCK_STREAM, 0) = 3
`, map[string]int{"?": 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := attribute(strings.NewReader(tt.log))
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
			for prog, n := range tt.want {
				if len(got[prog]) != n {
					t.Errorf("%s: %d call(s) %v, want %d", prog, len(got[prog]), got[prog], n)
				}
			}
		})
	}
}
