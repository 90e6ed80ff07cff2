package admin

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"

	"strata/internal/analytics"
)

// The privacy operations over the admin socket (docs/privacy.md): the CLI's
// `strata persons delete` and `strata persons export` while a server holds
// the data directory, and `strata persons rebuild` (docs/ingest.md). They are not part of Admin: they need the event and
// replay stores, which a stopped store's CLI opens itself (internal/cli).

// DeletionRequest is the body of POST /persons/deletions.
type DeletionRequest struct {
	ProductID   int64    `json:"productId"`
	DistinctIDs []string `json:"distinctIds"`
}

// RequestDeletion starts a deletion job on the server.
func (c *Client) RequestDeletion(ctx context.Context, productID int64, ids []string) (analytics.PersonDeletion, error) {
	var d analytics.PersonDeletion
	err := c.do(ctx, http.MethodPost, "/persons/deletions", DeletionRequest{ProductID: productID, DistinctIDs: ids}, &d)
	return d, err
}

// Deletion reads a job.
func (c *Client) Deletion(ctx context.Context, productID, id int64) (analytics.PersonDeletion, error) {
	var d analytics.PersonDeletion
	err := c.do(ctx, http.MethodGet, "/persons/deletions?product="+strconv.FormatInt(productID, 10)+"&job="+strconv.FormatInt(id, 10), nil, &d)
	return d, err
}

// ExportPerson copies a person's export to w as the server streams it.
func (c *Client) ExportPerson(ctx context.Context, productID int64, distinctID string, w io.Writer) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet,
		"http://strata/persons/export?product="+strconv.FormatInt(productID, 10)+"&distinctId="+url.QueryEscape(distinctID), nil)
	if err != nil {
		return err
	}
	resp, err := c.long.Do(req)
	if err != nil {
		return fmt.Errorf("calling admin socket: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("admin socket answered %s", resp.Status)
	}
	_, err = io.Copy(w, resp.Body)
	return err
}

// RebuildRequest is the body of POST /persons/rebuild.
type RebuildRequest struct {
	ProductID int64 `json:"productId"`
}

// RebuildPersons writes a product's person profiles from its stored
// events on the server (persons.Rebuild), and decodes its report into out.
// It takes as long as the events take to read.
func (c *Client) RebuildPersons(ctx context.Context, productID int64, out any) error {
	return c.doWith(c.long, ctx, http.MethodPost, "/persons/rebuild", RebuildRequest{ProductID: productID}, out)
}
