package admin

import (
	"context"
	"encoding/json"
	"net/http"

	"strata/internal/analytics"
	"strata/internal/importer"
)

// ImportRequest is the body of POST /imports: one batch of an import into
// the running server (docs/import.md), event objects as POST /e takes
// them.
type ImportRequest struct {
	ProductID int64             `json:"productId"`
	Env       analytics.Env     `json:"env"`
	Batch     []json.RawMessage `json:"batch"`
}

// ImportBatch sends one batch of an import to the server, which stores
// it through its own writer; it answers once the batch is durable.
func (c *Client) ImportBatch(ctx context.Context, product int64, env analytics.Env, batch []json.RawMessage) (importer.Result, error) {
	var res importer.Result
	err := c.do(ctx, http.MethodPost, "/imports", ImportRequest{ProductID: product, Env: env, Batch: batch}, &res)
	return res, err
}

// ImportSink is a running server's admin socket as the sink of an import
// for one product and environment.
type ImportSink struct {
	Client  *Client
	Product int64
	Env     analytics.Env
}

// ImportBatch sends one batch.
func (s ImportSink) ImportBatch(ctx context.Context, batch []json.RawMessage) (importer.Result, error) {
	return s.Client.ImportBatch(ctx, s.Product, s.Env, batch)
}
