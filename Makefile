# flameox — build, test, lint, demo. Targets call go and nothing clever.
GO       ?= go
BIN      ?= $(CURDIR)/bin
PKGS     := ./...
CMDS     := $(wildcard cmd/*)
# The writer side links no DuckDB and so needs no cgo; built without it,
# these start without the dynamic loader (docs/performance.md, "Binaries").
NOCGO_CMDS := ./cmd/fox-capture ./cmd/fox-publish
CGO_CMDS   := $(filter-out $(NOCGO_CMDS),$(addprefix ./,$(CMDS)))
FUZZTIME ?= 10s

.PHONY: all build test test-short test-torch lint staticcheck nocgo demo golden fuzz-smoke fuzz bench npm npm-check clean

all: build

# The binaries link libstdc++ statically and export no symbols: DuckDB's
# bindings ask for -rdynamic, which only loading DuckDB extensions needs
# (flameox never loads one; the ones it uses are built in), and which left
# the dynamic loader thousands of symbol relocations to resolve at every
# start (docs/performance.md, "Start-up and status", has the cost). Without
# a libstdc++.a the build still works, linking libstdc++ dynamically.
LDLIBS     := $(BIN)/.ld
EXTLDFLAGS := -L$(LDLIBS) -static-libgcc -Wl,--no-export-dynamic

build:
	@mkdir -p $(BIN) $(LDLIBS)
	@rm -f $(LDLIBS)/libstdc++.a; lib=$$($${CC:-cc} -print-file-name=libstdc++.a); if [ -f "$$lib" ]; then ln -s "$$lib" $(LDLIBS)/libstdc++.a; fi
	$(GO) build -ldflags='-extldflags "$(EXTLDFLAGS)"' -o $(BIN)/ $(CGO_CMDS)
	CGO_ENABLED=0 $(GO) build -o $(BIN)/ $(NOCGO_CMDS)

# Packages whose crash tests kill the test binary itself at fault points,
# so they build only with the faultinject tag (the others build a tagged
# binary from within an ordinary test).
FAULTINJECT_PKGS := ./pkg/retention

# The README's test command. Collector-backed tests skip locally when a
# collector is missing and fail under CI=true; the run ends with one line
# per collector whose tests were skipped (pkg/internal/testenv logs each
# skip to $FLAMEOX_SKIP_LOG), keeping go test's exit status.
test: build lint
	@log=$$(mktemp); \
	FLAMEOX_SKIP_LOG=$$log $(GO) test -ldflags='-extldflags "$(EXTLDFLAGS)"' -count=1 -timeout 30m $(PKGS); rc=$$?; \
	$(GO) test -tags faultinject -count=1 -timeout 30m $(FAULTINJECT_PKGS) || rc=1; \
	scripts/test-summary.sh $$log; rm -f $$log; exit $$rc

test-short:
	$(GO) test -short $(PKGS)

# gofmt, go vet, staticcheck, and the CGO-free build of the writer side
# (nocgo).
lint: nocgo staticcheck
	@out=$$(gofmt -l cmd pkg); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)

# staticcheck at the version scripts/install-collectors.sh pins (go install
# puts it in GOBIN, else GOPATH/bin; neither need be on PATH). When it is
# missing, lint fails under CI=true and skips it with a message otherwise,
# as collector-backed tests do. It runs staticcheck's default checks.
staticcheck:
	@sc=$$(command -v staticcheck || true); \
	if [ -z "$$sc" ]; then d=$$($(GO) env GOBIN); [ -n "$$d" ] || d=$$($(GO) env GOPATH | cut -d: -f1)/bin; sc=$$d/staticcheck; fi; \
	if [ ! -x "$$sc" ]; then \
	  if [ "$$CI" = true ]; then echo "lint: staticcheck is not installed and CI=true: run scripts/install-collectors.sh" >&2; exit 1; fi; \
	  echo "lint: staticcheck is not installed, skipping it (scripts/install-collectors.sh installs it)" >&2; exit 0; \
	fi; \
	echo "$$sc $(PKGS)"; "$$sc" $(PKGS)

# fox-capture and fox-publish must build without cgo: neither links DuckDB
# (docs/architecture.md).
nocgo:
	CGO_ENABLED=0 $(GO) build $(NOCGO_CMDS)

demo: build
	scripts/demo.sh $(BIN)

# The golden investigations of SPEC §9, (a) pyperf, (b) the SDK
# observation, (c) retained memory and (d) go test, on the CLI
# (testscript) and over MCP (the TypeScript SDK): docs/goldens.md.
# They are part of make test too (skipped under -short).
golden:
	$(GO) test -count=1 -run 'TestScripts/golden_' ./pkg/tool/flameox
	$(GO) test -count=1 -run 'TestGoldenTypeScript' ./pkg/mcpserver

# Run every fuzz target for a bounded time (CI calls this with a budget).
fuzz-smoke:
	scripts/fuzz-smoke.sh $(FUZZTIME)

# The fuzz campaign: every Fuzz target for FUZZTIME each, one after the
# other, ending with a table of executions and findings per target
# (docs/reliability.md): make fuzz FUZZTIME=5m.
fuzz:
	scripts/fuzz.sh $(FUZZTIME)

bench: build
	scripts/bench/run.sh

# The torch adapter's live test. scripts/install-collectors.sh does not
# install torch: PyPI's wheel brings its CUDA libraries and is too large
# for CI (docs/torch.md has the sizes). This installs the release
# pkg/adapter/torch.Version pins into a virtualenv of its own, kept
# between runs, and runs the test with it (TORCH_INDEX_URL, e.g. the
# PyTorch CPU wheel index, where it is reachable, makes it much smaller).
TORCH_VERSION   ?= 2.15.0
TORCH_VENV      ?= $(or $(XDG_DATA_HOME),$(HOME)/.local/share)/flameox/torch/$(TORCH_VERSION)
TORCH_INDEX_URL ?=
test-torch:
	@v=$$("$(TORCH_VENV)/bin/python" -c 'import importlib.metadata as m; print(m.version("torch"))' 2>/dev/null || true); \
	case "$$v" in $(TORCH_VERSION)|$(TORCH_VERSION)+*) echo "test-torch: torch $$v in $(TORCH_VENV)";; \
	*) echo "test-torch: installing torch==$(TORCH_VERSION) into $(TORCH_VENV)"; \
	   python3 -m venv --clear "$(TORCH_VENV)" && \
	   "$(TORCH_VENV)/bin/python" -m pip install --quiet --disable-pip-version-check $(if $(TORCH_INDEX_URL),--index-url $(TORCH_INDEX_URL)) "torch==$(TORCH_VERSION)" || exit 1;; \
	esac
	FLAMEOX_TORCH_LIVE=1 FLAMEOX_TORCH_PYTHON="$(TORCH_VENV)/bin/python" $(GO) test -count=1 -v -run 'TestLiveCapture|TestLauncher|TestProbe' ./pkg/adapter/torch

# The npm packages (docs/npm.md): flameox built for linux-x64 and
# linux-arm64 (cgo cross-compiled with Debian's aarch64-linux-gnu gcc,
# which scripts/install-collectors.sh installs) and packed into NPM_DIR
# with the main package; npm-check then checks every tarball: each
# binary's ELF machine against its package's cpu, and its --version, the
# other machine's under qemu-user. Not part of make test:
# cross-linking DuckDB takes minutes. make test packs and installs the
# host's package (pkg/internal/npmtest, TestPackInstallRun).
NPM_DIR     ?= $(BIN)/npm
NPM_VERSION ?= $(or $(patsubst v%,%,$(shell git describe --tags --abbrev=0 --match 'v[0-9]*' 2>/dev/null)),0.0.0-dev)
npm:
	FLAMEOX_NPM_VERSION=$(NPM_VERSION) scripts/npm-pack.sh -o $(NPM_DIR)

npm-check: npm
	FLAMEOX_NPM_DIR=$(NPM_DIR) FLAMEOX_NPM_VERSION=$(NPM_VERSION) $(GO) test -count=1 -v -run TestPackedTarballs ./pkg/internal/npmtest

clean:
	rm -rf $(BIN)
