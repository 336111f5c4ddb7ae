# flameox — build, test, lint, demo. Targets call go and nothing clever.
GO       ?= go
BIN      ?= $(CURDIR)/bin
PKGS     := ./...
CMDS     := $(wildcard cmd/*)
FUZZTIME ?= 10s

.PHONY: all build test test-short lint demo fuzz-smoke bench clean

all: build

build:
	@mkdir -p $(BIN)
	$(GO) build -o $(BIN)/ ./cmd/...

# The README's test command. Collector-backed tests skip locally when a
# collector is missing and fail under CI=true.
test: build lint
	$(GO) test -count=1 -timeout 30m $(PKGS)

test-short:
	$(GO) test -short $(PKGS)

lint:
	@out=$$(gofmt -l cmd pkg); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)

demo: build
	scripts/demo.sh $(BIN)

# Run every fuzz target for a bounded time (CI calls this with a budget).
fuzz-smoke:
	scripts/fuzz-smoke.sh $(FUZZTIME)

bench: build
	scripts/bench/run.sh

clean:
	rm -rf $(BIN)
