# Strata's only entry points: CI calls `make test`; people call `make run`.
GO      ?= go
BIN     := bin/strata
GOFLAGS ?=
SDK     := sdk/browser
SDK_JS  := internal/httpapi/sdkjs/sdk.min.js
DASH    := dashboard
DASH_JS := internal/dashboard/dist/index.html
API_TS  := $(DASH)/src/api.gen.ts

.PHONY: all build run test test-go test-sdk test-dashboard fuzz vet bench deps clean

all: build

## build: compile the strata binary into bin/, with the browser SDK and the
## dashboard it serves
build: $(SDK_JS) $(DASH_JS)
	$(GO) build -o $(BIN) ./cmd/strata

# The SDK's npm packages, installed exactly as locked.
$(SDK)/node_modules/.package-lock.json: $(SDK)/package-lock.json
	cd $(SDK) && npm ci --no-audit --no-fund

# The TypeScript types of the API, for the dashboard and the SDK, and the
# limits the dashboard applies, generated from api/openapi.yaml (committed;
# the dashboard's tests fail when they are stale).
$(API_TS): api/openapi.yaml $(DASH)/scripts/api-types.mjs $(DASH)/node_modules/.package-lock.json
	cd $(DASH) && npm run api-types

# The browser SDK the binary embeds, and its message renderer (a second
# script it loads when a product has active messages), rebuilt when their
# sources change. The built files are committed too, so that `go build`
# works without npm.
$(SDK_JS): $(SDK)/node_modules/.package-lock.json $(API_TS) $(wildcard $(SDK)/src/*.ts $(SDK)/src/messages/*.ts $(SDK)/src/replay/*.ts) $(wildcard $(SDK)/scripts/*.mjs)
	cd $(SDK) && npm run build
	cp $(SDK)/dist/sdk.min.js $(SDK)/dist/sdk.min.js.map $(SDK)/dist/messages.min.js $(SDK)/dist/messages.min.js.map $(SDK)/dist/replay.min.js $(SDK)/dist/replay.min.js.map internal/httpapi/sdkjs/

## run: build and serve on http://127.0.0.1:8080 with data in ./data; set
## STRATA_ADDR or STRATA_DATA (environment or `make run STRATA_ADDR=…`) to
## change them
STRATA_ADDR ?= 127.0.0.1:8080
STRATA_DATA ?= ./data
run: build
	./$(BIN) serve --addr $(STRATA_ADDR) --data $(STRATA_DATA)

## deps: install what the tests need: Go modules, and the PostgreSQL and
## ClickHouse servers the store tests start on loopback (Debian packages)
deps:
	$(GO) mod download
	./scripts/install-test-deps.sh

## test: the whole suite, including a short fuzz run of the envelope parser
test: deps vet test-go test-sdk test-dashboard fuzz

vet:
	$(GO) vet ./...
	@test -z "$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))" || (gofmt -l . ; echo "gofmt: files above need formatting"; exit 1)

test-go:
	$(GO) test -count=1 -timeout 25m ./...
	$(GO) test -count=1 -race ./internal/auth/... ./internal/ratelimit/... ./internal/enrich/... ./internal/ingest/... ./internal/messages/...

# The dashboard's npm packages, and the built app the binary embeds (also
# committed, so that `go build` works without npm).
$(DASH)/node_modules/.package-lock.json: $(DASH)/package-lock.json
	cd $(DASH) && npm ci --no-audit --no-fund

$(DASH_JS): $(DASH)/node_modules/.package-lock.json $(API_TS) $(DASH)/index.html $(DASH)/vite.config.ts $(shell find $(DASH)/src $(DASH)/public -type f 2>/dev/null)
	cd $(DASH) && npm run build && npm run embed

## test-sdk: the browser SDK's unit tests, then its end-to-end tests in
## Debian's headless Chromium against the real server
test-sdk: build
	cd $(SDK) && npm test
	cd $(SDK) && STRATA_BIN=$(CURDIR)/$(BIN) CHROMIUM=$$(command -v chromium || echo /usr/bin/chromium) npm run e2e

## test-dashboard: the dashboard's component tests, then its end-to-end tests
## in headless Chromium against the real server (screenshots in
## dashboard/test/artifacts/)
test-dashboard: build
	cd $(DASH) && npm test
	cd $(DASH) && STRATA_BIN=$(CURDIR)/$(BIN) CHROMIUM=$$(command -v chromium || echo /usr/bin/chromium) npm run e2e

## fuzz: run the envelope fuzzer briefly on top of its seed corpus
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzProcess$$' -fuzztime 15s ./internal/ingest

## bench: ingest and storage benchmarks against a real server (not part of test)
bench: build
	./scripts/install-bench-tools.sh
	$(GO) run ./cmd/strata-bench -strata $(BIN)

clean:
	rm -rf bin
