#!/bin/sh
# Copies into the Go SDK's module what it shares with the rest of Strata:
# the AI-bot allowlist (embedded), the server's classification cases and
# the shared assignment vectors (its tests' data). The SDK is its own
# module, so it carries copies rather than reading the server's files; the
# server module's tests (internal/sdkgo) fail when a copy differs.
#
#   go generate ./...    (from sdk/go), or sh sync.sh from this directory
set -eu
cd "$(dirname "$0")"
root=../../..
cp "$root/internal/enrich/bots/ai_bots.json" ai_bots.json
cp "$root/internal/enrich/bots/testdata/user_agents.tsv" testdata/user_agents.tsv
cp "$root/sdk/browser/test/assignment.json" testdata/assignment.json
