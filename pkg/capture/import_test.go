package capture

import (
	"bytes"
	"context"
	"github.com/flameox/flameox/pkg/corpus"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flameox/flameox/pkg/broker"
	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/run"
	"github.com/flameox/flameox/pkg/workspace"
)

func newService(t *testing.T) *Service {
	t.Helper()
	res, err := workspace.Init(context.Background(), t.TempDir(), time.Now(), corpus.InitHead)
	if err != nil {
		t.Fatal(err)
	}
	return &Service{WS: res.Workspace, Identity: &IdentityCollector{Runner: broker.Default}}
}

func writeFile(t *testing.T, name string, data []byte) string {
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestImportTwiceStoresOnce(t *testing.T) {
	s := newService(t)
	src := writeFile(t, "cpu.pb.gz", []byte("profile bytes"))
	ctx := context.Background()
	a, err := s.Import(ctx, ImportRequest{Path: src, Kind: "sample_profile", Sensitivity: "normal"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Import(ctx, ImportRequest{Path: src, Kind: "sample_profile", Sensitivity: "sensitive"})
	if err != nil {
		t.Fatal(err)
	}
	if a.ArtifactID != b.ArtifactID || a.Deduplicated || !b.Deduplicated {
		t.Fatalf("ids %s %s dedup %v %v", a.ArtifactID, b.ArtifactID, a.Deduplicated, b.Deduplicated)
	}
	if a.Run.RunID == b.Run.RunID || a.Registration.RegistrationID == b.Registration.RegistrationID {
		t.Fatal("two imports must be two runs with two registrations")
	}
	objs, _ := filepath.Glob(s.WS.Path("artifacts", "sha256", "*", "*"))
	if len(objs) != 1 {
		t.Fatalf("stored objects: %v", objs)
	}
	for _, r := range []*ImportResult{a, b} {
		m, err := (&run.Store{Root: s.WS.Root}).Get(r.Run.RunID)
		if err != nil {
			t.Fatal(err)
		}
		if m.CaptureStatus != run.CaptureRegistered || m.ExecutionStatus != run.ExecNotApplicable || len(m.Artifacts) != 1 {
			t.Fatalf("run %+v", m)
		}
		if m.Environment == nil || m.SourceState == nil || m.Environment.EnvironmentID == "" {
			t.Fatal("run lacks identity records")
		}
	}
	if a.Registration.Sensitivity != "normal" || b.Registration.Sensitivity != "sensitive" {
		t.Fatalf("sensitivities %s %s", a.Registration.Sensitivity, b.Registration.Sensitivity)
	}
	stagingEmpty(t, s)
}

func stagingEmpty(t *testing.T, s *Service) {
	t.Helper()
	ents, _ := os.ReadDir(s.WS.Path("staging"))
	if len(ents) != 0 {
		t.Fatalf("staging not empty: %v", ents)
	}
}

func runsOf(t *testing.T, s *Service) []*run.Manifest {
	st := &run.Store{Root: s.WS.Root}
	ids, _ := st.IDs()
	var out []*run.Manifest
	for _, id := range ids {
		m, err := st.Get(id)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

func TestImportRefusalsCreateNoRun(t *testing.T) {
	s := newService(t)
	dir := t.TempDir()
	target := writeFile(t, "t", []byte("x"))
	os.Symlink(target, filepath.Join(dir, "link"))
	for _, p := range []string{filepath.Join(dir, "link"), dir, filepath.Join(dir, "missing"), "/dev/null"} {
		if _, err := s.Import(context.Background(), ImportRequest{Path: p}); err == nil {
			t.Fatalf("%s accepted", p)
		}
	}
	if n := len(runsOf(t, s)); n != 0 {
		t.Fatalf("refusals created %d runs", n)
	}
	stagingEmpty(t, s)
}

func TestImportFailureLeavesFailedRun(t *testing.T) {
	s := newService(t)
	src := writeFile(t, "growing", []byte("0123456789"))
	s.afterCopy = func(p string) {
		f, _ := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
		f.WriteString("more")
		f.Close()
	}
	_, err := s.Import(context.Background(), ImportRequest{Path: src})
	fe := fault.As(err)
	if fe.Code != fault.ArtifactIntegrityFailed || fe.RunID == "" {
		t.Fatalf("got %v (run %q)", err, fe.RunID)
	}
	runs := runsOf(t, s)
	if len(runs) != 1 || runs[0].CaptureStatus != run.CaptureFailed || runs[0].Error == nil || runs[0].Error.Code != fault.ArtifactIntegrityFailed {
		t.Fatalf("runs %+v", runs)
	}
	stagingEmpty(t, s)
	objs, _ := filepath.Glob(s.WS.Path("artifacts", "sha256", "*", "*"))
	if len(objs) != 0 {
		t.Fatalf("object stored for a failed import: %v", objs)
	}
}

func TestCoreDumpFloor(t *testing.T) {
	s := newService(t)
	core := make([]byte, 128)
	copy(core, "\x7fELF\x02\x01\x01")
	core[16] = 4
	src := writeFile(t, "core", core)
	if _, err := s.Import(context.Background(), ImportRequest{Path: src, Sensitivity: "normal"}); !fault.Is(err, fault.SensitiveArtifactRefused) {
		t.Fatalf("explicit normal core dump: %v", err)
	}
	res, err := s.Import(context.Background(), ImportRequest{Path: src})
	if err != nil || res.Registration.Sensitivity != "sensitive" {
		t.Fatalf("default core dump: %v %+v", err, res)
	}
}

func TestNoSecretsInManifests(t *testing.T) {
	t.Setenv("API_TOKEN", "secret-token-value-4242")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "secret-aws-value-4242")
	s := newService(t)
	src := writeFile(t, "f.txt", []byte("hello"))
	if _, err := s.Import(context.Background(), ImportRequest{Path: src}); err != nil {
		t.Fatal(err)
	}
	home, _ := os.UserHomeDir()
	filepath.Walk(s.WS.Root, func(p string, info os.FileInfo, err error) error {
		if err != nil || !info.Mode().IsRegular() {
			return err
		}
		b, _ := os.ReadFile(p)
		for _, bad := range []string{"secret-token-value-4242", "secret-aws-value-4242"} {
			if bytes.Contains(b, []byte(bad)) {
				t.Errorf("%s contains %s", p, bad)
			}
		}
		if home != "" && home != "/" && strings.HasSuffix(p, ".json") && bytes.Contains(b, []byte(`"`+home+`/`)) {
			t.Errorf("%s contains the home path", p)
		}
		return nil
	})
}
