package query

import (
	"sort"
	"time"

	"github.com/flameox/flameox/pkg/artifact"
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

// ArtifactList is the result of `flameox artifacts list`.
type ArtifactList struct {
	SchemaVersion int               `json:"schema_version"`
	Total         int               `json:"total"`
	Returned      int               `json:"returned"`
	Truncated     bool              `json:"truncated"`
	Cursor        string            `json:"cursor,omitempty"`
	Artifacts     []ArtifactSummary `json:"artifacts"`
}

// ArtifactDetail is the result of `flameox artifacts show`: content facts,
// every registration, and the effective sensitivity. Never the bytes.
type ArtifactDetail struct {
	SchemaVersion        int                `json:"schema_version"`
	ArtifactID           string             `json:"artifact_id"`
	ByteLength           int64              `json:"byte_length"`
	PayloadPath          string             `json:"payload_path"`
	HashedAt             time.Time          `json:"hashed_at"`
	EffectiveSensitivity string             `json:"effective_sensitivity"`
	Registrations        []run.Registration `json:"registrations"`
}

// ListArtifactsRequest pages an artifact list.
type ListArtifactsRequest struct {
	Limit  int    `json:"limit,omitempty"`
	Cursor string `json:"cursor,omitempty"`
}

func registrations(ws *workspace.Workspace) (map[string][]run.Registration, error) {
	store := &run.Store{Root: ws.Root}
	ids, err := store.IDs()
	if err != nil {
		return nil, err
	}
	out := map[string][]run.Registration{}
	for _, id := range ids {
		m, err := store.Get(id)
		if err != nil {
			continue
		}
		for _, a := range m.Artifacts {
			out[a.ArtifactID] = append(out[a.ArtifactID], a)
		}
	}
	return out, nil
}

func effective(regs []run.Registration) string {
	levels := make([]artifact.Sensitivity, len(regs))
	for i, r := range regs {
		levels[i] = artifact.Sensitivity(r.Sensitivity)
	}
	return string(artifact.Max(levels...))
}

// ListArtifacts lists registered objects, newest first.
func ListArtifacts(ws *workspace.Workspace, req ListArtifactsRequest) (*ArtifactList, error) {
	limit, err := Limit(req.Limit)
	if err != nil {
		return nil, err
	}
	after, err := decodeCursor(req.Cursor)
	if err != nil {
		return nil, err
	}
	regs, err := registrations(ws)
	if err != nil {
		return nil, err
	}
	rows := make([]ArtifactSummary, 0, len(regs))
	for id, rs := range regs {
		sort.Slice(rs, func(i, j int) bool { return rs[i].RegisteredAt.Before(rs[j].RegisteredAt) })
		kinds := map[string]bool{}
		for _, r := range rs {
			kinds[r.Kind] = true
		}
		ks := make([]string, 0, len(kinds))
		for k := range kinds {
			ks = append(ks, k)
		}
		sort.Strings(ks)
		rows = append(rows, ArtifactSummary{ArtifactID: id, ByteLength: rs[0].ByteLength, DisplayName: rs[0].DisplayName,
			Kinds: ks, EffectiveSensitivity: effective(rs), Registrations: len(rs), FirstRegisteredAt: rs[0].RegisteredAt})
	}
	key := func(a ArtifactSummary) string {
		return a.FirstRegisteredAt.UTC().Format("2006-01-02T15:04:05.000000Z") + "|" + a.ArtifactID
	}
	sort.Slice(rows, func(i, j int) bool { return key(rows[i]) > key(rows[j]) })
	res := &ArtifactList{SchemaVersion: 1, Total: len(rows), Artifacts: []ArtifactSummary{}}
	for _, r := range rows {
		if after != "" && key(r) >= after {
			continue
		}
		if len(res.Artifacts) == limit {
			res.Truncated = true
			res.Cursor = encodeCursor(key(res.Artifacts[len(res.Artifacts)-1]))
			break
		}
		res.Artifacts = append(res.Artifacts, r)
	}
	res.Returned = len(res.Artifacts)
	return res, nil
}

// ShowArtifact describes one stored object and all its registrations.
func ShowArtifact(ws *workspace.Workspace, id string) (*ArtifactDetail, error) {
	store := &artifact.Store{Root: ws.Root}
	c, _, err := store.Stat(id)
	if err != nil {
		return nil, err
	}
	regs, err := registrations(ws)
	if err != nil {
		return nil, err
	}
	rs := regs[id]
	if rs == nil {
		rs = []run.Registration{}
	}
	sort.Slice(rs, func(i, j int) bool { return rs[i].RegisteredAt.Before(rs[j].RegisteredAt) })
	return &ArtifactDetail{SchemaVersion: 1, ArtifactID: c.ArtifactID, ByteLength: c.ByteLength,
		PayloadPath: artifact.ObjectRel(c.ArtifactID) + "/" + c.PayloadName, HashedAt: c.HashedAt,
		EffectiveSensitivity: effective(rs), Registrations: rs}, nil
}
