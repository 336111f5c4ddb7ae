package catalog

import (
	"bytes"
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/flameox/flameox/pkg/corpus"
	"github.com/flameox/flameox/pkg/evidence/schema"
)

func TestLockdown(t *testing.T) {
	f := newFixture(t)
	gf := f.file("g1", schema.Runs, 0, [][]any{runRow("a", 0, "registered")})
	f.publish("g1", []corpus.GenerationFile{gf}, nil)
	listed := filepath.Join(f.root, gf.Path)

	// A Parquet file dropped by hand beside the published ones.
	var buf bytes.Buffer
	w, err := schema.NewWriter(schema.Runs, &buf, schema.Options{Common: schema.Common{
		GenerationID: "rogue", PublishedAt: f.now, ExtractorName: "x", ExtractorVersion: "0"}})
	must(t, err)
	must(t, w.AppendRow(runRow("rogue", 0, "registered")))
	_, err = w.Close()
	must(t, err)
	dropped := filepath.Join(f.root, "evidence", "runs", "generation=rogue", "part-00000.parquet")
	must(t, os.MkdirAll(filepath.Dir(dropped), 0o700))
	must(t, os.WriteFile(dropped, buf.Bytes(), 0o644))

	r := openHead(t, f.root, Options{})
	if n := count(t, r, "runs"); n != 1 {
		t.Fatalf("runs = %d; the dropped file is visible", n)
	}
	if err := raw(r, "SELECT count(*) FROM read_parquet("+sqlString(listed)+")"); err != nil {
		t.Fatalf("a listed file is not readable: %v", err)
	}
	out := filepath.Join(f.root, "staging", "out.parquet")
	for _, s := range []string{
		"SELECT * FROM read_parquet('/etc/passwd')",
		"SELECT * FROM read_text('/etc/passwd')",
		"SELECT * FROM read_csv('/etc/passwd')",
		"SELECT * FROM glob('/etc/*')",
		"SELECT * FROM read_parquet(" + sqlString(dropped) + ")",
		"SELECT * FROM read_parquet(" + sqlList([]string{listed, dropped}) + ")",
		"SELECT * FROM read_parquet(" + sqlString(filepath.Join(f.root, "evidence", "runs", "*", "*.parquet")) + ")",
		"SELECT * FROM read_parquet(" + sqlString(filepath.Join(filepath.Dir(listed), "..", "generation=rogue", "part-00000.parquet")) + ")",
		"ATTACH " + sqlString(filepath.Join(f.root, "x.duckdb")) + " AS x",
		"INSTALL httpfs",
		"LOAD httpfs",
		"SET threads = 8",
		"SET memory_limit = '8GB'",
		"SET enable_external_access = true",
		"SET allowed_paths = ['/etc/passwd']",
		"SET temp_directory = '/tmp'",
		"RESET lock_configuration",
		"SET lock_configuration = false",
		"COPY (SELECT 1 AS x) TO " + sqlString(out) + " (FORMAT parquet)",
		"COPY (SELECT 1 AS x) TO " + sqlString(out) + " (FORMAT parquet, USE_TMP_FILE false)",
		"SELECT * FROM read_parquet('https://example.com/x.parquet')",
	} {
		if err := raw(r, s); err == nil {
			t.Errorf("allowed: %s", s)
		} else {
			t.Logf("refused: %s: %s", s, oneLine(err))
		}
	}
	// ATTACH ':memory:' works: it touches no file, and the instance dies
	// with the Reader.
	if _, err := os.Stat(out); err == nil {
		t.Errorf("COPY wrote %s", out)
	}
	// Settings given when the instance is created (the DSN) and those
	// set by statement are all in force.
	want := map[string]string{
		"enable_external_access": "false", "lock_configuration": "true", "threads": "2", "TimeZone": "UTC",
		"autoinstall_known_extensions": "false", "autoload_known_extensions": "false",
		"allow_community_extensions": "false", "allow_persistent_secrets": "false",
		"memory_limit": "512.0 MiB", "max_temp_directory_size": "4.0 GiB",
	}
	for name, v := range want {
		var got string
		q := Query{Name: "test.settings", Version: "1", SQL: "SELECT current_setting('" + name + "')::VARCHAR"}
		must(t, r.Scan(context.Background(), q, nil, func(rows *sql.Rows) error {
			rows.Next()
			return rows.Scan(&got)
		}))
		if got != v {
			t.Errorf("%s = %q, want %q", name, got, v)
		}
	}
}

func TestClip(t *testing.T) {
	for _, c := range []struct {
		in   string
		max  int
		want string
		cut  bool
	}{
		{"hello", 10, "hello", false},
		{"hello", 5, "hello", false},
		{"hello", 3, "hel", true},
		{"a€b", 2, "a", true},
		{"a€b", 3, "a", true},
		{"a€b", 4, "a€", true},
		{"€€", 0, "", true},
		{"\xff\xff\xff\xff\xff", 2, "\xff\xff", true},
	} {
		got, cut := Clip(c.in, c.max)
		if got != c.want || cut != c.cut {
			t.Errorf("Clip(%q, %d) = %q, %t; want %q, %t", c.in, c.max, got, cut, c.want, c.cut)
		}
		if utf8.ValidString(c.in) && !utf8.ValidString(got) {
			t.Errorf("Clip(%q, %d) broke UTF-8", c.in, c.max)
		}
	}
	if s, cut := Clip(strings.Repeat("é", 100), 51); len(s) != 50 || !cut {
		t.Errorf("Clip of 2-byte runes = %d bytes", len(s))
	}
}
