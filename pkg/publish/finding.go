package publish

import (
	"context"
	"fmt"
	"strconv"

	"github.com/flameox/flameox/pkg/corpus"
	"github.com/flameox/flameox/pkg/digest"
	"github.com/flameox/flameox/pkg/evidence/schema"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/inquiry"
	"github.com/flameox/flameox/pkg/lock"
	"github.com/flameox/flameox/pkg/version"
)

// PublishFinding publishes one finding revision as one generation: its
// findings row, one evidence_refs row (owner_type finding) per reference
// in fresh, and one naming checkedAt, the commit at which the writer found
// every reference (ref_type commit, relation input). all is the finding's
// references after this revision (inquiry.Finding.Validate's refs); fresh
// are those this revision adds, so that rows accumulate across revisions
// without repeating.
//
// Under the write lock and against the HEAD the commit extends, the
// revision is a compare-and-swap: ExpectedRevision must be the finding's
// latest revision at HEAD (0 for a new finding), otherwise
// REVISION_CONFLICT naming the current revision, and nothing is published.
// Evidence is immutable and every commit keeps what its parent held, so
// references found at checkedAt still exist at HEAD.
func (p *Publisher) PublishFinding(ctx context.Context, f *inquiry.Finding, all, fresh []inquiry.EvidenceRef, checkedAt string) (*Result, error) {
	if err := f.Validate(all); err != nil {
		return nil, err
	}
	if _, err := corpus.Read(p.WS.Root, checkedAt); err != nil {
		return nil, fault.Wrap(fault.InvalidArguments, err, "finding %s names commit %s, which this workspace does not have", f.FindingID, checkedAt)
	}
	st, err := NewStage(p.WS.Root, Name, version.Version(), p.now())
	if err != nil {
		return nil, err
	}
	defer st.Discard()
	fw, err := st.Table(schema.Findings)
	if err != nil {
		return nil, err
	}
	next, err := canonicalList(f.NextExperiments)
	if err != nil {
		return nil, err
	}
	fw.StringCol("finding_id").Append(f.FindingID)
	fw.Int32Col("revision").Append(f.Revision)
	fw.TimeCol("created_at").Append(f.CreatedAt)
	fw.StringCol("kind").Append(f.Kind)
	fw.StringCol("title").Append(f.Title)
	fw.StringCol("claim").Append(f.Claim)
	fw.StringCol("evidence_level").Append(f.EvidenceLevel)
	fw.StringCol("confidence").Append(f.Confidence)
	fw.StringCol("assessment").Append(f.Assessment)
	fw.StringCol("lifecycle").Append(f.Lifecycle)
	fw.StringListCol("limitations").Append(nonNilStrings(f.Limitations))
	fw.StringCol("next_experiments_json").Append(next)
	if err := fw.EndRow(); err != nil {
		return nil, err
	}
	rw, err := st.Table(schema.EvidenceRefs)
	if err != nil {
		return nil, err
	}
	refs := append([]inquiry.EvidenceRef{{RefType: "commit", RefID: checkedAt, Relation: "input"}}, fresh...)
	meta := Meta{Publisher: Name, PublisherVersion: version.Version()}
	for _, r := range refs {
		rw.StringCol("owner_type").Append("finding")
		rw.StringCol("owner_id").Append(f.FindingID)
		rw.StringCol("ref_type").Append(r.RefType)
		rw.StringCol("ref_id").Append(r.RefID)
		rw.StringCol("relation").Append(r.Relation)
		if err := rw.EndRow(); err != nil {
			return nil, err
		}
		switch r.RefType {
		case "run":
			meta.InputRunIDs = append(meta.InputRunIDs, r.RefID)
		case "artifact":
			meta.InputArtifactIDs = append(meta.InputArtifactIDs, r.RefID)
		}
	}
	meta.Check = func(head corpus.Commit) error {
		release, err := p.WS.Locks().Lock(ctx, lock.Retention, true)
		if err != nil {
			return err
		}
		defer release()
		snap, err := corpus.Open(p.WS.Root, head)
		if err != nil {
			return err
		}
		cur, err := FindingRevision(ctx, snap, f.FindingID)
		if err != nil {
			return err
		}
		if cur != f.ExpectedRevision {
			return findingConflict(f, cur)
		}
		return nil
	}
	return p.commit(ctx, st, meta, 0)
}

// FindingRevision returns the latest revision of finding id in snap (0:
// none), read from its Parquet files (no DuckDB).
func FindingRevision(ctx context.Context, snap *corpus.Snapshot, id string) (int32, error) {
	var latest int32
	err := scanLive(ctx, snap, schema.Findings, []string{"finding_id", "revision"}, func(row []any) error {
		if fid, _ := row[0].(string); fid == id {
			if rev, _ := row[1].(int32); rev > latest {
				latest = rev
			}
		}
		return nil
	})
	return latest, err
}

func findingConflict(f *inquiry.Finding, cur int32) error {
	var e *fault.Error
	if cur == 0 {
		e = fault.New(fault.RevisionConflict, "finding %s does not exist (current revision 0); expected revision %d", f.FindingID, f.ExpectedRevision)
	} else {
		e = fault.New(fault.RevisionConflict, "finding %s is at revision %d, not the expected revision %d", f.FindingID, cur, f.ExpectedRevision)
	}
	return e.With("finding_id", f.FindingID).With("current_revision", strconv.Itoa(int(cur))).
		With("expected_revision", strconv.Itoa(int(f.ExpectedRevision))).
		FixSteps(fmt.Sprintf("Read revision %d with %%s, then record the change again with expected revision %d.", cur, cur),
			fault.Step{Command: "flameox findings show " + f.FindingID, Tool: "get_finding", Arguments: map[string]any{"finding_id": f.FindingID}})
}

// canonicalList is vs as canonical JSON, [] for none.
func canonicalList(vs []string) (string, error) {
	b, err := digest.Canonical(nonNilStrings(vs))
	if err != nil {
		return "", fault.Wrap(fault.InvalidArguments, err, "encode the next experiments")
	}
	return string(b), nil
}
