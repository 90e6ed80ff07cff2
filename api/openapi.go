// Package api holds the HTTP contract, openapi.yaml, embedded here so that
// the server serves the contract it was built with at
// GET /api/v1/openapi.yaml. Its test keeps the contract and the code from
// drifting apart.
package api

import _ "embed"

// OpenAPI is openapi.yaml as it was when the binary was built.
//
//go:embed openapi.yaml
var OpenAPI []byte
