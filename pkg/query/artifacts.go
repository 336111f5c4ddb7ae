package query

import (
	"context"
	"database/sql"
	"strconv"
	"strings"
	"time"

	"github.com/flameox/flameox/pkg/artifact"
	"github.com/flameox/flameox/pkg/catalog"
	"github.com/flameox/flameox/pkg/cursor"
	"github.com/flameox/flameox/pkg/run"
	"github.com/flameox/flameox/pkg/workspace"
)

// ArtifactSummary is one stored object in an artifact list.
type ArtifactSummary struct {
	ArtifactID           string    `json:"artifact_id"`
	ByteLength           int64     `json:"byte_length"`
	DisplayName          string    `json:"display_name"`
	Kinds                []string  `json:"kinds"`
	EffectiveSensitivity string    `json:"effective_sensitivity"`
	Registrations        int       `json:"registrations"`
	FirstRegisteredAt    time.Time `json:"first_registered_at"`
}

// ArtifactList is the result of `flameox artifacts list` and MCP list_artifacts.
type ArtifactList struct {
	SchemaVersion  int    `json:"schema_version"`
	Query          string `json:"query"`
	CorpusCommitID string `json:"corpus_commit_id"`
	Page
	Artifacts []ArtifactSummary `json:"artifacts"`
}

// ListArtifactsRequest filters and pages an artifact list.
type ListArtifactsRequest struct {
	Kind   string `json:"kind,omitempty" jsonschema:"only objects registered with this kind"`
	RunID  string `json:"run_id,omitempty" jsonschema:"only objects this run registered"`
	Limit  int    `json:"limit,omitempty" jsonschema:"rows to return (default 50, max 1000)"`
	Cursor string `json:"cursor,omitempty" jsonschema:"cursor from a previous page"`
}

// sensitivityRank orders sensitivities in SQL; the effective sensitivity of
// an object is the maximum over its registrations.
const sensitivityRank = `max(CASE sensitivity WHEN 'sensitive' THEN 2 WHEN 'internal' THEN 1 ELSE 0 END)`

var (
	qArtifactsList = catalog.Query{Name: "artifacts.list", Version: "1", SQL: `
WITH objects AS (
  SELECT artifact_id, max(byte_length) AS byte_length, arg_min(display_name, registered_at) AS display_name,
         string_agg(DISTINCT kind, ',' ORDER BY kind) AS kinds, ` + sensitivityRank + ` AS sens,
         count(*) AS regs, min(registered_at) AS first_at
  FROM artifacts_current
  WHERE artifact_id IN (SELECT artifact_id FROM artifacts_current WHERE ($1 = '' OR kind = $1) AND ($2 = '' OR run_id = $2))
  GROUP BY artifact_id)
SELECT artifact_id, byte_length, display_name, kinds, sens, regs, first_at, epoch_us(first_at) FROM objects
WHERE $3::BIGINT IS NULL OR epoch_us(first_at) < $3 OR (epoch_us(first_at) = $3 AND artifact_id < $4)
ORDER BY first_at DESC, artifact_id DESC
LIMIT $5`}
	qArtifactsCount = catalog.Query{Name: "artifacts.count", Version: "1", SQL: `
SELECT count(DISTINCT artifact_id) FROM artifacts_current WHERE ($1 = '' OR kind = $1) AND ($2 = '' OR run_id = $2)`}
	qArtifactRegs = catalog.Query{Name: "artifacts.registrations", Version: "1", SQL: `
SELECT registration_id, run_id, artifact_id, display_name, kind, media_type, role, coalesce(producer, ''),
       coalesce(producer_version, ''), sensitivity, byte_length, registered_at, payload_path
FROM artifacts_current WHERE artifact_id = $1
ORDER BY registered_at, registration_id LIMIT $2`}
)

var sensitivityNames = []string{"normal", "internal", "sensitive"}

// ListArtifacts lists published objects, newest first registration first.
func ListArtifacts(ctx context.Context, ws *workspace.Workspace, req ListArtifactsRequest) (*ArtifactList, error) {
	limit, err := Limit(req.Limit)
	if err != nil {
		return nil, err
	}
	return with(ctx, ws, func(s *Session) (*ArtifactList, error) {
		filters := req
		filters.Limit, filters.Cursor = 0, ""
		want, key, err := s.resume(qArtifactsList, filters, "first_registered_at desc, artifact_id desc", req.Cursor)
		if err != nil {
			return nil, err
		}
		afterUS, afterID, err := timeKey(key)
		if err != nil {
			return nil, err
		}
		res := &ArtifactList{SchemaVersion: 1, Query: qArtifactsList.ID(), CorpusCommitID: s.Commit(), Artifacts: []ArtifactSummary{}}
		var lastUS int64
		err = s.R.Scan(ctx, qArtifactsList, []any{req.Kind, req.RunID, afterUS, afterID, limit + 1}, func(rows *sql.Rows) error {
			for rows.Next() {
				var a ArtifactSummary
				var size uint64
				var kinds string
				var sens int32
				var us int64
				if err := rows.Scan(&a.ArtifactID, &size, &a.DisplayName, &kinds, &sens, &a.Registrations, &a.FirstRegisteredAt, &us); err != nil {
					return err
				}
				if len(res.Artifacts) == limit {
					res.Truncated = true
					break
				}
				a.ByteLength = int64(size)
				a.Kinds = strings.Split(kinds, ",")
				a.EffectiveSensitivity = sensitivityNames[min(max(int(sens), 0), 2)]
				a.FirstRegisteredAt = a.FirstRegisteredAt.UTC()
				res.Artifacts = append(res.Artifacts, a)
				lastUS = us
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		res.Returned = len(res.Artifacts)
		if res.Truncated {
			want.Key = []string{strconv.FormatInt(lastUS, 10), res.Artifacts[len(res.Artifacts)-1].ArtifactID}
			res.Cursor = cursor.Encode(want)
		}
		res.Total, err = count(ctx, s, qArtifactsCount, []any{req.Kind, req.RunID})
		return res, err
	})
}

// ArtifactDetail is the result of `flameox artifacts show` and MCP
// get_artifact: content facts, the published registrations, and the
// effective sensitivity. Never the bytes.
type ArtifactDetail struct {
	SchemaVersion        int                `json:"schema_version"`
	CorpusCommitID       string             `json:"corpus_commit_id"`
	ArtifactID           string             `json:"artifact_id"`
	ByteLength           int64              `json:"byte_length"`
	PayloadPath          string             `json:"payload_path"`
	HashedAt             time.Time          `json:"hashed_at"`
	EffectiveSensitivity string             `json:"effective_sensitivity"`
	Registrations        []run.Registration `json:"registrations"`
	RegistrationsTotal   int                `json:"registrations_total"`
	Truncated            bool               `json:"truncated"`
}

// ShowArtifact describes one stored object and its registrations.
func ShowArtifact(ctx context.Context, ws *workspace.Workspace, id string) (*ArtifactDetail, error) {
	return with(ctx, ws, func(s *Session) (*ArtifactDetail, error) { return s.showArtifact(ctx, strings.TrimSpace(id)) })
}

func (s *Session) showArtifact(ctx context.Context, id string) (*ArtifactDetail, error) {
	c, _, err := (&artifact.Store{Root: s.WS.Root}).Stat(id)
	if err != nil {
		return nil, err
	}
	d := &ArtifactDetail{SchemaVersion: 1, CorpusCommitID: s.Commit(), ArtifactID: c.ArtifactID, ByteLength: c.ByteLength,
		PayloadPath: artifact.ObjectRel(c.ArtifactID) + "/" + c.PayloadName, HashedAt: c.HashedAt, Registrations: []run.Registration{}}
	levels := []artifact.Sensitivity{}
	err = s.R.Scan(ctx, qArtifactRegs, []any{id, MaxLimit + 1}, func(rows *sql.Rows) error {
		for rows.Next() {
			var r run.Registration
			var size uint64
			if err := rows.Scan(&r.RegistrationID, &r.RunID, &r.ArtifactID, &r.DisplayName, &r.Kind, &r.MediaType, &r.Role,
				&r.Producer, &r.ProducerVersion, &r.Sensitivity, &size, &r.RegisteredAt, &r.PayloadPath); err != nil {
				return err
			}
			levels = append(levels, artifact.Sensitivity(r.Sensitivity))
			if len(d.Registrations) == MaxLimit {
				d.Truncated = true
				continue
			}
			r.ByteLength, r.RegisteredAt = int64(size), r.RegisteredAt.UTC()
			d.Registrations = append(d.Registrations, r)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	d.RegistrationsTotal = len(levels)
	d.EffectiveSensitivity = string(artifact.Max(levels...))
	if len(levels) == 0 {
		d.EffectiveSensitivity = "unknown" // stored, but no published registration says what it is
	}
	return d, nil
}
