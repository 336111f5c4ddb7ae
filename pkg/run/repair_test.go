package run

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flameox/flameox/pkg/fault"
	"github.com/flameox/flameox/pkg/internal/tinyfs"
)

// TestProjectionRebuild: whatever a crash did to the files derived from a
// run's revisions, readers see the newest revision, the next revision can
// be appended (no REVISION_CONFLICT wedge), and Repair rebuilds the
// projection and log.
func TestProjectionRebuild(t *testing.T) {
	tests := []struct {
		name   string
		damage func(t *testing.T, s *Store, id string)
	}{
		// A SIGKILL between linking revision 1 and replacing the projection.
		{"projection lags", func(t *testing.T, s *Store, id string) {
			link(t, filepath.Join(s.Dir(id), "revisions", "00000000.json"), filepath.Join(s.Dir(id), "manifest.json"))
		}},
		{"projection missing", func(t *testing.T, s *Store, id string) {
			os.Remove(filepath.Join(s.Dir(id), "manifest.json"))
		}},
		{"projection damaged", func(t *testing.T, s *Store, id string) {
			os.Remove(filepath.Join(s.Dir(id), "manifest.json"))
			os.WriteFile(filepath.Join(s.Dir(id), "manifest.json"), []byte(`{"schema_version":1,"revi`), 0o600)
		}},
		{"projection differs", func(t *testing.T, s *Store, id string) {
			b, _ := os.ReadFile(filepath.Join(s.Dir(id), "revisions", "00000001.json"))
			os.Remove(filepath.Join(s.Dir(id), "manifest.json"))
			os.WriteFile(filepath.Join(s.Dir(id), "manifest.json"), []byte(strings.Replace(string(b), `"running"`, `"planned"`, 1)), 0o600)
		}},
		{"log lacks the newest line", func(t *testing.T, s *Store, id string) {
			p := filepath.Join(s.Dir(id), "log.jsonl")
			b, _ := os.ReadFile(p)
			lines := strings.SplitAfter(string(b), "\n")
			os.WriteFile(p, []byte(lines[0]), 0o600)
		}},
		{"log line torn", func(t *testing.T, s *Store, id string) {
			p := filepath.Join(s.Dir(id), "log.jsonl")
			b, _ := os.ReadFile(p)
			os.WriteFile(p, b[:len(b)-7], 0o600)
		}},
		{"temporary file of a killed writer", func(t *testing.T, s *Store, id string) {
			os.WriteFile(filepath.Join(s.Dir(id), "revisions", ".00000002.json.123.tmp"), []byte(`{"sch`), 0o600)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, m := newRun(t)
			n := next(m, ExecRunning, CaptureRunning, ValidationPending)
			if err := s.Append(&m, n); err != nil {
				t.Fatal(err)
			}
			tt.damage(t, s, m.RunID)

			got, err := s.Get(m.RunID)
			if err != nil || got.Revision != 1 || got.ExecutionStatus != ExecRunning {
				t.Fatalf("Get after damage: %+v %v", got, err)
			}
			_, fixes, err := s.Inspect(m.RunID)
			if err != nil || len(fixes) == 0 {
				t.Fatalf("Inspect found nothing to fix: %v %v", fixes, err)
			}
			fixed, fixes, err := s.Repair(m.RunID)
			if err != nil || fixed.Revision != 1 || len(fixes) == 0 {
				t.Fatalf("Repair: %+v %v %v", fixed, fixes, err)
			}
			if _, fixes, err := s.Inspect(m.RunID); err != nil || len(fixes) != 0 {
				t.Fatalf("still to fix after Repair: %v %v", fixes, err)
			}
			pi, _ := os.Stat(filepath.Join(s.Dir(m.RunID), "manifest.json"))
			ri, _ := os.Stat(filepath.Join(s.Dir(m.RunID), "revisions", "00000001.json"))
			if !os.SameFile(pi, ri) {
				t.Fatal("the projection is not the newest revision")
			}
			// The run moves on from its newest revision.
			last := next(*got, ExecFailed, CaptureFailed, ValidationCancelled)
			if err := s.Append(got, last); err != nil {
				t.Fatalf("append after repair: %v", err)
			}
			if !s.logComplete(m.RunID, 2) {
				b, _ := os.ReadFile(filepath.Join(s.Dir(m.RunID), "log.jsonl"))
				t.Fatalf("log:\n%s", b)
			}
		})
	}
}

// TestAppendAfterLaggingProjection is the wedge of issue 12: a SIGKILL
// between revision N and the projection made every later writer (recover
// included) lose the compare-and-swap forever. No Repair in between here.
func TestAppendAfterLaggingProjection(t *testing.T) {
	s, m := newRun(t)
	n := next(m, ExecRunning, CaptureRunning, ValidationPending)
	if err := s.Append(&m, n); err != nil {
		t.Fatal(err)
	}
	link(t, filepath.Join(s.Dir(m.RunID), "revisions", "00000000.json"), filepath.Join(s.Dir(m.RunID), "manifest.json"))
	cur, err := s.Get(m.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Append(cur, next(*cur, ExecFailed, CaptureFailed, ValidationCancelled)); err != nil {
		t.Fatalf("append after a lagging projection: %v", err)
	}
	// A writer that read the stale projection still loses, as it must.
	if err := s.Append(&m, next(m, ExecCancelled, CaptureCancelled, ValidationCancelled)); !fault.Is(err, fault.RevisionConflict) {
		t.Fatalf("stale writer: %v", err)
	}
}

func TestDamage(t *testing.T) {
	tests := []struct {
		name   string
		damage func(s *Store, id string)
		want   string
	}{
		{"no revision", func(s *Store, id string) {
			os.RemoveAll(filepath.Join(s.Dir(id), "revisions"))
			os.Remove(filepath.Join(s.Dir(id), "manifest.json"))
		}, DamageNoRevision},
		{"newest revision garbage", func(s *Store, id string) {
			os.WriteFile(filepath.Join(s.Dir(id), "revisions", "00000001.json"), []byte("\x00\x00"), 0o600)
		}, DamageUnreadable},
		{"newest revision of another run", func(s *Store, id string) {
			b, _ := os.ReadFile(filepath.Join(s.Dir(id), "revisions", "00000000.json"))
			os.WriteFile(filepath.Join(s.Dir(id), "revisions", "00000001.json"), b, 0o600)
		}, DamageUnreadable},
		{"newer schema is not damage", func(s *Store, id string) {
			os.WriteFile(filepath.Join(s.Dir(id), "revisions", "00000001.json"), []byte(`{"schema_version": 9}`), 0o600)
		}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, m := newRun(t)
			tt.damage(s, m.RunID)
			_, err := s.Get(m.RunID)
			if err == nil {
				t.Fatal("a damaged run read as healthy")
			}
			if got := Damage(err); got != tt.want {
				t.Fatalf("damage %q, want %q (%v)", got, tt.want, err)
			}
			if _, _, err := s.Repair(m.RunID); Damage(err) != tt.want {
				t.Fatalf("Repair: %v", err)
			}
		})
	}
	s := &Store{Root: t.TempDir()}
	if _, err := s.Get(NewID()); !fault.Is(err, fault.NotFound) {
		t.Fatalf("missing run: %v", err)
	}
}

func link(t *testing.T, from, to string) {
	t.Helper()
	os.Remove(to)
	if err := os.Link(from, to); err != nil {
		t.Fatal(err)
	}
}

// TestCreateOnFullDisk: a creation that cannot write revision 0 leaves no
// run directory behind (status warned about such directories forever).
func TestCreateOnFullDisk(t *testing.T) {
	tfs := tinyfs.Mount(t, 1<<20)
	s := &Store{Root: tfs.Dir}
	if err := os.Mkdir(filepath.Join(s.Root, "runs"), 0o700); err != nil {
		t.Fatal(err)
	}
	tfs.Fill(t, 0)
	defer tfs.Free(t)
	m := Manifest{RunID: NewID(), RunType: TypeImport, ExecutionStatus: ExecNotApplicable, CaptureStatus: CapturePending,
		ValidationStatus: ValidationNotRequested, Limitations: []string{strings.Repeat("x", 64<<10)}}
	err := s.Create(m)
	if !fault.Is(err, fault.StorageFull) {
		t.Fatalf("create on a full disk: %v", err)
	}
	if ents, _ := os.ReadDir(filepath.Join(s.Root, "runs")); len(ents) != 0 {
		t.Fatalf("left behind: %v", ents)
	}
}
