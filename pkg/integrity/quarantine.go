package integrity

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/flameox/flameox/pkg/durable"
	"github.com/flameox/flameox/pkg/fault"
)

// A corrupt artifact is set aside, not deleted: its object directory moves
// to quarantine/<id>/object and quarantine/<id>/manifest.json says what it
// was, why it moved and from where. Its registrations stay on their runs,
// so nothing that names it is left without an explanation (validation
// reports ARTIFACT_QUARANTINED, a warning). The move is journaled: the
// manifest is written in state "moving" before the rename and rewritten
// "quarantined" after it.

const (
	stateMoving      = "moving"
	stateQuarantined = "quarantined"
	quarantineFormat = 1
)

// QuarantineEntry is quarantine/<id>/manifest.json.
type QuarantineEntry struct {
	SchemaVersion int       `json:"schema_version"`
	QuarantineID  string    `json:"quarantine_id"`
	Operation     string    `json:"operation"` // "repair:<plan digest>"
	State         string    `json:"state"`
	DetectedAt    time.Time `json:"detected_at"`
	OriginalPath  string    `json:"original_path"` // workspace-relative
	StoredPath    string    `json:"stored_path"`   // relative to the entry: "object"
	Reason        string    `json:"reason"`        // the problem code
	ArtifactID    string    `json:"artifact_id"`
	ExpectedSHA   string    `json:"expected_sha256"`
	FoundSHA      string    `json:"found_sha256,omitempty"`
	// RegisteredBy are the runs whose registrations were kept.
	RegisteredBy    []string `json:"registered_by"`
	RecoveryOptions []string `json:"recovery_options"`
}

func readQuarantineManifest(root, id string) (*QuarantineEntry, error) {
	b, err := os.ReadFile(filepath.Join(root, "quarantine", id, "manifest.json"))
	if err != nil {
		return nil, err
	}
	var q QuarantineEntry
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&q); err != nil {
		return nil, err
	}
	return &q, nil
}

// quarantineObject moves the object directory of q.ArtifactID into
// quarantine. The caller holds the write and retention locks.
func quarantineObject(root string, q QuarantineEntry) error {
	if strings.ContainsAny(q.QuarantineID, "/\\") || q.QuarantineID == "" || q.QuarantineID[0] == '.' {
		return fault.New(fault.InternalError, "bad quarantine id %q", q.QuarantineID)
	}
	src := filepath.Join(root, filepath.FromSlash(q.OriginalPath))
	fi, err := os.Lstat(src)
	if err != nil {
		return fault.Wrap(fault.ArtifactIntegrityFailed, err, "quarantine %s", q.OriginalPath).With("file", q.OriginalPath)
	}
	if !fi.IsDir() {
		return fault.New(fault.ArtifactIntegrityFailed, "%s is not an object directory (%s); refusing to move it", q.OriginalPath, fi.Mode().Type()).With("file", q.OriginalPath)
	}
	dir := filepath.Join(root, "quarantine", q.QuarantineID)
	if err := os.MkdirAll(filepath.Join(root, "quarantine"), 0o700); err != nil {
		return err
	}
	if err := os.Mkdir(dir, 0o700); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fault.New(fault.InternalError, "quarantine entry %s exists already", q.QuarantineID)
		}
		return err
	}
	q.SchemaVersion, q.State, q.StoredPath = quarantineFormat, stateMoving, "object"
	if q.RegisteredBy == nil {
		q.RegisteredBy = []string{}
	}
	q.RecoveryOptions = []string{"re-import the original file (the same bytes place the object again)", "restore the object directory from a backup"}
	manifest := filepath.Join(dir, "manifest.json")
	if err := durable.WriteJSON(manifest, q, 0o600); err != nil {
		return err
	}
	if err := durable.SyncDir(filepath.Join(root, "quarantine")); err != nil {
		return err
	}
	if err := os.Rename(src, filepath.Join(dir, "object")); err != nil {
		return fault.Wrap(fault.InternalError, err, "move %s into quarantine", q.OriginalPath)
	}
	if err := durable.SyncDirs(filepath.Dir(src), dir); err != nil {
		return err
	}
	q.State = stateQuarantined
	if err := durable.WriteJSON(manifest, q, 0o600); err != nil {
		return fmt.Errorf("quarantine %s: %w", q.OriginalPath, err)
	}
	return nil
}
