# Strata's only entry points: CI calls `make test`; people call `make run`.
GO      ?= go
BIN     := bin/strata
GOFLAGS ?=

.PHONY: all build run test test-go fuzz vet bench deps clean

all: build

## build: compile the strata binary into bin/
build:
	$(GO) build -o $(BIN) ./cmd/strata

## run: build and serve on http://127.0.0.1:8080 with data in ./data
run: build
	./$(BIN) serve --addr 127.0.0.1:8080 --data ./data

## deps: install what the tests need: Go modules, and the PostgreSQL and
## ClickHouse servers the store tests start on loopback (Debian packages)
deps:
	$(GO) mod download
	./scripts/install-test-deps.sh

## test: the whole suite, including a short fuzz run of the envelope parser
test: deps vet test-go fuzz

vet:
	$(GO) vet ./...
	@test -z "$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))" || (gofmt -l . ; echo "gofmt: files above need formatting"; exit 1)

test-go:
	$(GO) test -count=1 -timeout 25m ./...
	$(GO) test -count=1 -race ./internal/auth/... ./internal/ratelimit/... ./internal/enrich/... ./internal/ingest/...

## fuzz: run the envelope fuzzer briefly on top of its seed corpus
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzProcess$$' -fuzztime 15s ./internal/ingest

## bench: ingest and storage benchmarks against a real server (not part of test)
bench: build
	./scripts/install-bench-tools.sh
	$(GO) run ./cmd/strata-bench -strata $(BIN)

clean:
	rm -rf bin
