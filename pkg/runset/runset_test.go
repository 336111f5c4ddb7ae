package runset_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/flameox/flameox/pkg/broker"
	"github.com/flameox/flameox/pkg/capture"
	"github.com/flameox/flameox/pkg/corpus"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/inquiry"
	"github.com/flameox/flameox/pkg/publish"
	"github.com/flameox/flameox/pkg/runset"
	"github.com/flameox/flameox/pkg/workspace"
)

// published creates a workspace with n imported, published runs.
func published(t *testing.T, n int) (root, firstCommit string, runs []string) {
	t.Helper()
	ctx := context.Background()
	res, err := workspace.Init(ctx, t.TempDir(), time.Now(), publish.FirstCommit)
	if err != nil {
		t.Fatal(err)
	}
	ws := res.Workspace
	firstCommit, _ = corpus.HeadID(ws.Root)
	svc := &capture.Service{WS: ws, Identity: &capture.IdentityCollector{Runner: broker.Default}}
	var refs []publish.RunRef
	for i := range n {
		p := filepath.Join(t.TempDir(), "a.txt")
		os.WriteFile(p, []byte("evidence "+strconv.Itoa(i)), 0o644)
		imp, err := svc.Import(ctx, capture.ImportRequest{Path: p, Kind: "benchmark_samples"})
		if err != nil {
			t.Fatal(err)
		}
		refs = append(refs, publish.RunRef{RunID: imp.Run.RunID, Revision: imp.Run.Revision})
		runs = append(runs, imp.Run.RunID)
	}
	if _, err := (&publish.Publisher{WS: ws}).PublishRuns(ctx, refs); err != nil {
		t.Fatal(err)
	}
	return ws.Root, firstCommit, runs
}

// TestDigestCanonical: the membership digest is the SHA-256 of the sorted
// member list's canonical JSON, computed here independently.
func TestDigestCanonical(t *testing.T) {
	got, err := runset.Digest([]inquiry.Member{{RunID: "b", TrialID: "t"}, {RunID: "a"}, {RunID: "a"}})
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(`[{"run_id":"a"},{"run_id":"b","trial_id":"t"}]`))
	if want := "sha256:" + hex.EncodeToString(sum[:]); got != want {
		t.Fatalf("digest %s, want %s", got, want)
	}
}

func TestFreeze(t *testing.T) {
	root, first, runs := published(t, 3)
	ctx := context.Background()
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	sel := runset.Selection{Method: runset.MethodExplicit, Label: "pair"}
	a, err := runset.Freeze(ctx, root, runset.Request{Selection: sel, CreatedAt: at,
		Members: []inquiry.Member{{RunID: runs[2]}, {RunID: runs[0]}}})
	if err != nil {
		t.Fatal(err)
	}
	head, _ := corpus.HeadID(root)
	members, _ := inquiry.DecodeMembers(a.MembersJSON)
	d, _ := runset.Digest(members)
	if a.CorpusCommitID != head || a.MemberCount != 2 || members[0].RunID > members[1].RunID || a.MembershipDigest != d ||
		a.SelectionJSON != `{"label":"pair","method":"explicit"}` || !a.CreatedAt.Equal(at) {
		t.Fatalf("run set %+v", a)
	}
	if err := inquiry.Validate(a); err != nil {
		t.Fatal(err)
	}
	// The same members in another order: the same set; another label or
	// another member: another set.
	b, _ := runset.Freeze(ctx, root, runset.Request{Selection: sel, Members: []inquiry.Member{{RunID: runs[0]}, {RunID: runs[2]}}})
	c, _ := runset.Freeze(ctx, root, runset.Request{Selection: runset.Selection{Method: runset.MethodExplicit, Label: "other"},
		Members: []inquiry.Member{{RunID: runs[0]}, {RunID: runs[2]}}})
	d2, _ := runset.Freeze(ctx, root, runset.Request{Selection: sel, Members: []inquiry.Member{{RunID: runs[0]}, {RunID: runs[1]}}})
	if b.RunSetID != a.RunSetID || c.RunSetID == a.RunSetID || d2.RunSetID == a.RunSetID || d2.MembershipDigest == a.MembershipDigest {
		t.Fatalf("ids %s %s %s %s", a.RunSetID, b.RunSetID, c.RunSetID, d2.RunSetID)
	}

	missing := "00000000-0000-4000-8000-000000000000"
	cases := []struct {
		name string
		req  runset.Request
		code fault.Code
		run  string
	}{
		{"unpublished run", runset.Request{Selection: sel, Members: []inquiry.Member{{RunID: runs[0]}, {RunID: missing}}}, fault.NotFound, missing},
		{"run not at the pinned commit", runset.Request{Selection: sel, CommitID: first, Members: []inquiry.Member{{RunID: runs[0]}}}, fault.NotFound, runs[0]},
		{"one run, two trials", runset.Request{Selection: sel, Members: []inquiry.Member{{RunID: runs[0], TrialID: "t1"}, {RunID: runs[0], TrialID: "t2"}}}, fault.InvalidArguments, runs[0]},
		{"no method", runset.Request{Members: []inquiry.Member{{RunID: runs[0]}}}, fault.InvalidArguments, ""},
		{"bad run id", runset.Request{Selection: sel, Members: []inquiry.Member{{RunID: "../x"}}}, fault.InvalidArguments, "../x"},
		{"unknown commit", runset.Request{Selection: sel, CommitID: "c0ffee", Members: []inquiry.Member{{RunID: runs[0]}}}, fault.NotFound, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := runset.Freeze(ctx, root, tc.req)
			if err == nil {
				t.Fatalf("froze, want %s", tc.code)
			}
			if fe := fault.As(err); fe.Code != tc.code || fe.Details["run_id"] != tc.run {
				t.Fatalf("got %v (details %v), want %s naming %q", err, fe.Details, tc.code, tc.run)
			}
		})
	}
	// fox-capture freezes runs fox-publish has not published yet.
	if _, err := runset.Freeze(ctx, root, runset.Request{Selection: sel, Unpublished: true, Members: []inquiry.Member{{RunID: missing}}}); err != nil {
		t.Fatal(err)
	}
}

func TestIsID(t *testing.T) {
	id, err := runset.ID(runset.Selection{}, []inquiry.Member{{RunID: "r1"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		s    string
		want bool
	}{
		{id, true},
		{"rs-0123456789abcdef0123456789abcdef", true},
		{"rs-0123456789ABCDEF0123456789abcdef", false}, // ID spells lower case
		{"rs-0123456789abcdef0123456789abcde", false},
		{"rs-0123456789abcdef0123456789abcdef0", false},
		{"rs-0123456789abcdef0123456789abcdeg", false},
		{"tr-0123456789abcdef0123456789abcdef", false},
		{"0b5e8c1e-3f1a-4a52-9d2b-6c6f7d8e9f00", false}, // a run id
		{"", false},
	} {
		if got := runset.IsID(tc.s); got != tc.want {
			t.Errorf("IsID(%q) = %v, want %v", tc.s, got, tc.want)
		}
	}
}
