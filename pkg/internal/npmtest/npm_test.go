package npmtest

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"debug/elf"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/flameox/flameox/pkg/internal/testenv"
)

// root is the repository root (go test runs in the package directory).
var root = filepath.Join("..", "..", "..")

// platforms maps an npm platform package to the ELF machine of its binary
// and the GOARCH that builds it.
var platforms = map[string]struct {
	machine elf.Machine
	goarch  string
	cpu     string
	qemu    string // qemu-user's emulator for this cpu
	sysroot string // where Debian's cross libc for it lies
}{
	"linux-x64":   {elf.EM_X86_64, "amd64", "x64", "qemu-x86_64", "/usr/x86_64-linux-gnu"},
	"linux-arm64": {elf.EM_AARCH64, "arm64", "arm64", "qemu-aarch64", "/usr/aarch64-linux-gnu"},
}

// hostPlatform is the npm platform package for this machine, "" when
// there is none.
func hostPlatform() string {
	for name, p := range platforms {
		if runtime.GOOS == "linux" && p.goarch == runtime.GOARCH {
			return name
		}
	}
	return ""
}

type entry struct {
	mode int64
	data []byte
}

// readTarball returns the files of an npm tarball by their path in it
// ("package/bin/flameox").
func readTarball(t *testing.T, path string) map[string]entry {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	files := map[string]entry{}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatalf("%s: %s: %v", path, h.Name, err)
		}
		files[h.Name] = entry{h.Mode, data}
	}
}

// manifest is what the tests read of a package.json.
type manifest struct {
	Name                 string            `json:"name"`
	Version              string            `json:"version"`
	Bin                  map[string]string `json:"bin"`
	OS                   []string          `json:"os"`
	CPU                  []string          `json:"cpu"`
	Scripts              map[string]string `json:"scripts"`
	OptionalDependencies map[string]string `json:"optionalDependencies"`
}

func packageJSON(t *testing.T, files map[string]entry) manifest {
	t.Helper()
	var m manifest
	if err := json.Unmarshal(files["package/package.json"].data, &m); err != nil {
		t.Fatalf("package.json: %v", err)
	}
	// Nothing runs at install: no download, no postinstall fetching.
	for _, s := range []string{"preinstall", "install", "postinstall", "prepare"} {
		if m.Scripts[s] != "" {
			t.Errorf("%s has a %s script %q: the packages install nothing but their files", m.Name, s, m.Scripts[s])
		}
	}
	return m
}

// checkMain checks the main package: its launcher, and optional
// dependencies on every platform package at its own version.
func checkMain(t *testing.T, tgz, version string) {
	t.Helper()
	files := readTarball(t, tgz)
	m := packageJSON(t, files)
	if m.Name != "flameox" || m.Version != version || m.Bin["flameox"] != "bin/flameox.js" {
		t.Errorf("main package: name %q version %q bin %v", m.Name, m.Version, m.Bin)
	}
	if e, ok := files["package/bin/flameox.js"]; !ok || e.mode&0o111 == 0 {
		t.Errorf("main package: bin/flameox.js missing or not executable (mode %o)", e.mode)
	}
	for name := range platforms {
		if v := m.OptionalDependencies["@flameox/"+name]; v != version {
			t.Errorf("main package: optional dependency @flameox/%s is %q, want %q", name, v, version)
		}
	}
	if len(m.OptionalDependencies) != len(platforms) {
		t.Errorf("main package: optional dependencies %v, want one per platform", m.OptionalDependencies)
	}
}

// checkPlatform checks a platform package: its os and cpu fields, and a
// binary for that machine.
func checkPlatform(t *testing.T, tgz, name, version string) {
	t.Helper()
	p := platforms[name]
	files := readTarball(t, tgz)
	m := packageJSON(t, files)
	if m.Name != "@flameox/"+name || m.Version != version {
		t.Errorf("%s: name %q version %q", tgz, m.Name, m.Version)
	}
	if strings.Join(m.OS, ",") != "linux" || strings.Join(m.CPU, ",") != p.cpu {
		t.Errorf("%s: os %v cpu %v, want [linux] [%s]", tgz, m.OS, m.CPU, p.cpu)
	}
	bin, ok := files["package/bin/flameox"]
	if !ok || bin.mode&0o111 == 0 {
		t.Fatalf("%s: bin/flameox missing or not executable (mode %o)", tgz, bin.mode)
	}
	ef, err := elf.NewFile(bytes.NewReader(bin.data))
	if err != nil {
		t.Fatalf("%s: bin/flameox is not an ELF file: %v", tgz, err)
	}
	if ef.Machine != p.machine || ef.Class != elf.ELFCLASS64 {
		t.Errorf("%s: bin/flameox is for %v (%v), want %v", tgz, ef.Machine, ef.Class, p.machine)
	}
}

// tarball returns the path of the tarball of pkg at version in dir, as
// npm pack names them.
func tarball(dir, pkg, version string) string {
	return filepath.Join(dir, strings.ReplaceAll(strings.TrimPrefix(pkg, "@"), "/", "-")+"-"+version+".tgz")
}

func run(t *testing.T, dir string, env []string, name string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return out.String(), ee.ExitCode()
	case err != nil:
		t.Fatalf("%s %v: %v", name, args, err)
	}
	if errb.Len() > 0 {
		t.Logf("%s %v: stderr:\n%s", name, args, errb.String())
	}
	return out.String(), 0
}

// TestPackInstallRun: scripts/npm-pack.sh builds this machine's binary
// and packs its platform package and the main package; npm installs both
// tarballs into an empty prefix with no registry reachable (--offline, a
// registry URL nothing listens on); and the installed launcher, through
// node_modules/.bin and through npx, runs the binary with the version the
// packages carry, passing arguments, stdout and the exit status through.
func TestPackInstallRun(t *testing.T) {
	plat := hostPlatform()
	if plat == "" {
		t.Skipf("no npm platform package for %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	if testing.Short() {
		t.Skip("builds flameox: skipped under -short")
	}
	testenv.LookPath(t, "node")
	npm := testenv.LookPath(t, "npm")
	npx := testenv.LookPath(t, "npx")
	const version = "0.0.0-npmtest.1"
	out := t.TempDir()
	cmd := exec.Command("bash", filepath.Join(root, "scripts", "npm-pack.sh"), "-o", out, plat)
	cmd.Env = append(os.Environ(), "FLAMEOX_NPM_VERSION="+version)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm-pack.sh: %v\n%s", err, b)
	}
	main, platTgz := tarball(out, "flameox", version), tarball(out, "@flameox/"+plat, version)
	checkMain(t, main, version)
	checkPlatform(t, platTgz, plat, version)

	// No registry: npm must take both packages from the files and skip the
	// other platforms' optional dependencies, which it cannot fetch.
	prefix := t.TempDir()
	env := []string{
		"npm_config_cache=" + t.TempDir(), "npm_config_registry=http://127.0.0.1:9/",
		"npm_config_update_notifier=false", "npm_config_fund=false", "npm_config_audit=false",
	}
	if o, code := run(t, prefix, env, npm, "install", "--offline", "--prefix", prefix, platTgz, main); code != 0 {
		t.Fatalf("npm install exited %d\n%s", code, o)
	}
	bin := filepath.Join(prefix, "node_modules", ".bin", "flameox")
	if o, code := run(t, prefix, env, bin, "--version"); code != 0 || o != "flameox v"+version+"\n" {
		t.Errorf("flameox --version: exit %d, %q, want %q", code, o, "flameox v"+version+"\n")
	}
	o, code := run(t, prefix, env, npx, "--offline", "--no", "--", "flameox", "--json", "version")
	var v struct{ Version string }
	if err := json.Unmarshal([]byte(o), &v); code != 0 || err != nil || v.Version != "v"+version {
		t.Errorf("npx flameox --json version: exit %d, %q (%v)", code, o, err)
	}
	// A usage error's status comes through the launcher unchanged.
	direct := filepath.Join(prefix, "node_modules", "@flameox", plat, "bin", "flameox")
	_, want := run(t, prefix, env, direct, "--no-such-flag")
	if _, got := run(t, prefix, env, bin, "--no-such-flag"); want == 0 || got != want {
		t.Errorf("flameox --no-such-flag: exit %d through the launcher, %d direct", got, want)
	}
	// The other platforms' packages were skipped, not fetched.
	for name := range platforms {
		if name == plat {
			continue
		}
		if _, err := os.Stat(filepath.Join(prefix, "node_modules", "@flameox", name)); err == nil {
			t.Errorf("npm installed @flameox/%s on %s", name, plat)
		}
	}
}

// TestPackedTarballs checks every tarball `make npm` packed into
// $FLAMEOX_NPM_DIR (make npm-check sets it): the main package, and each
// platform package's binary is an ELF file for its cpu (the cross-compiled
// arm64 one included) that prints the version, run directly on its own
// machine and under qemu-user on the other one (skipped, with a message,
// where qemu-user is missing). Without the variable there is nothing to
// check.
func TestPackedTarballs(t *testing.T) {
	dir := os.Getenv("FLAMEOX_NPM_DIR")
	if dir == "" {
		t.Skip("FLAMEOX_NPM_DIR is not set: make npm-check packs and checks every platform")
	}
	version := os.Getenv("FLAMEOX_NPM_VERSION")
	if version == "" {
		version = "0.0.0-dev"
	}
	checkMain(t, tarball(dir, "flameox", version), version)
	for name := range platforms {
		t.Run(name, func(t *testing.T) {
			tgz := tarball(dir, "@flameox/"+name, version)
			checkPlatform(t, tgz, name, version)
			bin := filepath.Join(t.TempDir(), "flameox")
			if err := os.WriteFile(bin, readTarball(t, tgz)["package/bin/flameox"].data, 0o755); err != nil {
				t.Fatal(err)
			}
			argv := []string{bin, "--version"}
			if name != hostPlatform() {
				p := platforms[name]
				qemu, err := exec.LookPath(p.qemu)
				if err != nil {
					t.Skipf("%s is not installed (Debian's qemu-user): the %s binary was checked but not run", p.qemu, name)
				}
				argv = []string{qemu, "-L", p.sysroot, bin, "--version"}
			}
			if o, code := run(t, t.TempDir(), nil, argv[0], argv[1:]...); code != 0 || o != "flameox v"+version+"\n" {
				t.Errorf("%v: exit %d, %q", argv, code, o)
			}
		})
	}
}
