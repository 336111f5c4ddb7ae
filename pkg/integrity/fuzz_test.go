package integrity_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flameox/flameox/pkg/artifact"
	"github.com/flameox/flameox/pkg/capture/capturetest"
	"github.com/flameox/flameox/pkg/corpus"
	"github.com/flameox/flameox/pkg/integrity"
)

// FuzzGenerationManifest: whatever bytes replace a generation manifest
// HEAD pins, validation returns a result (never an error or a panic), and
// it is invalid exactly when the bytes differ from the pinned ones.
func FuzzGenerationManifest(f *testing.F) {
	ws, _ := capturetest.Published(f, "", sample)
	head, err := corpus.Head(ws.Root)
	if err != nil {
		f.Fatal(err)
	}
	path := filepath.Join(ws.Root, filepath.FromSlash(head.Generations[0].Manifest))
	orig, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(orig)
	f.Add(orig[:len(orig)/2])
	f.Add([]byte("{}"))
	f.Add(bytes.Replace(orig, []byte(`"files"`), []byte(`"filez"`), 1))
	f.Fuzz(func(t *testing.T, data []byte) {
		os.Chmod(path, 0o600)
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		defer os.WriteFile(path, orig, 0o600)
		res, err := integrity.Validate(context.Background(), ws, integrity.Standard)
		if err != nil {
			t.Fatalf("validate: %v", err)
		}
		if want := bytes.Equal(data, orig); res.Valid != want {
			t.Fatalf("valid = %v for %d bytes (pinned bytes: %v): %v", res.Valid, len(data), want, codes(res))
		}
	})
}

// FuzzArtifactManifest: whatever bytes replace an artifact.json,
// validation returns a result, and an invalid one names the object.
func FuzzArtifactManifest(f *testing.F) {
	ws, ids := capturetest.Published(f, "", sample)
	id, _ := payloadOf(f, ws, ids[0])
	rel := artifact.ObjectRel(id)
	path := filepath.Join(ws.Root, filepath.FromSlash(rel), "artifact.json")
	orig, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(orig)
	f.Add(orig[:len(orig)-3])
	f.Add([]byte(`{"artifact_id":"sha256:00","payload_name":"../x","byte_length":-1}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		os.Chmod(path, 0o600)
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		defer os.WriteFile(path, orig, 0o600)
		res, err := integrity.Validate(context.Background(), ws, integrity.Quick)
		if err != nil {
			t.Fatalf("validate: %v", err)
		}
		if bytes.Equal(data, orig) && !res.Valid {
			t.Fatalf("the original artifact.json is invalid: %v", codes(res))
		}
		for _, p := range res.Problems {
			if !strings.HasPrefix(p.File, rel) {
				t.Fatalf("a problem outside the object: %+v", p)
			}
		}
	})
}
