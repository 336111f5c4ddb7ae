package catalog

import (
	"context"
	"strings"
	"testing"
)

// TestValidateFreshWorkspace: a workspace that never built its catalog has
// nothing wrong with it (issue 14: validate_catalog said "1 problem").
func TestValidateFreshWorkspace(t *testing.T) {
	f := newFixture(t)
	res, err := Validate(context.Background(), f.root)
	must(t, err)
	if !res.Valid || len(res.Problems) != 0 || res.Status.Exists || !strings.Contains(res.Note, "does not exist") {
		t.Fatalf("validate on a fresh workspace = %+v", res)
	}
}
