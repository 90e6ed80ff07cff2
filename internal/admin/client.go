package admin

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"strconv"
	"time"

	"strata/internal/analytics"
)

// Client implements Admin by calling a running server over its admin socket.
type Client struct {
	http *http.Client
	// long is http without its timeout, for a backup: it copies the whole
	// database and takes as long as that takes; the caller's context
	// bounds it.
	long *http.Client
}

var _ Admin = (*Client)(nil)

// Dial returns a client for the server that holds dataDir, or an error when
// no server answers on the socket (the caller then opens the store itself).
func Dial(ctx context.Context, dataDir string) (*Client, error) {
	sock := filepath.Join(dataDir, SocketName)
	c := &Client{http: &http.Client{
		Timeout: 30 * time.Second,
		Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", sock)
		}},
	}}
	c.long = &http.Client{Transport: c.http.Transport}
	var pong map[string]string
	if err := c.do(ctx, http.MethodGet, "/ping", nil, &pong); err != nil {
		return nil, err
	}
	return c, nil
}

// Wire shapes shared by Client and the socket handler in httpapi.
type (
	// CreateProductRequest is the body of POST /products.
	CreateProductRequest struct {
		Name string `json:"name"`
	}
	// CreateKeyRequest is the body of POST /keys.
	CreateKeyRequest struct {
		ProductID int64         `json:"productId"`
		Env       analytics.Env `json:"env"`
		RateLimit int           `json:"rateLimit"`
	}
	// SecretResponse carries a credential's plaintext beside its record.
	SecretResponse[T any] struct {
		Secret string `json:"secret"`
		Record T      `json:"record"`
	}
	// KeyStatusRequest is the body of POST /keys/status.
	KeyStatusRequest struct {
		Key    string              `json:"key"`
		Status analytics.KeyStatus `json:"status"`
	}
	// CreateTokenRequest is the body of POST /tokens.
	CreateTokenRequest struct {
		ProductID int64 `json:"productId"`
	}
	// ExperimentRequest is the body of POST /experiments/{action}: start,
	// pause, resume or apply-winner (with Variant) experiment ID of the
	// product.
	ExperimentRequest struct {
		ProductID int64  `json:"productId"`
		ID        int64  `json:"id"`
		Variant   string `json:"variant,omitempty"`
	}
)

// CreateProduct implements Admin.
func (c *Client) CreateProduct(ctx context.Context, name string) (analytics.Product, error) {
	var p analytics.Product
	err := c.do(ctx, http.MethodPost, "/products", CreateProductRequest{Name: name}, &p)
	return p, err
}

// ListProducts implements Admin.
func (c *Client) ListProducts(ctx context.Context) ([]analytics.Product, error) {
	var products []analytics.Product
	err := c.do(ctx, http.MethodGet, "/products", nil, &products)
	return products, err
}

// CreateKey implements Admin.
func (c *Client) CreateKey(ctx context.Context, productID int64, env analytics.Env, rateLimit int) (string, analytics.APIKey, error) {
	var r SecretResponse[analytics.APIKey]
	err := c.do(ctx, http.MethodPost, "/keys", CreateKeyRequest{ProductID: productID, Env: env, RateLimit: rateLimit}, &r)
	return r.Secret, r.Record, err
}

// ListKeys implements Admin.
func (c *Client) ListKeys(ctx context.Context, productID int64) ([]analytics.APIKey, error) {
	var keys []analytics.APIKey
	err := c.do(ctx, http.MethodGet, "/keys?product="+url.QueryEscape(strconv.FormatInt(productID, 10)), nil, &keys)
	return keys, err
}

// SetKeyStatus implements Admin.
func (c *Client) SetKeyStatus(ctx context.Context, ref string, status analytics.KeyStatus) (analytics.APIKey, error) {
	var k analytics.APIKey
	err := c.do(ctx, http.MethodPost, "/keys/status", KeyStatusRequest{Key: ref, Status: status}, &k)
	return k, err
}

// CreateToken implements Admin.
func (c *Client) CreateToken(ctx context.Context, productID int64) (string, analytics.QueryToken, error) {
	var r SecretResponse[analytics.QueryToken]
	err := c.do(ctx, http.MethodPost, "/tokens", CreateTokenRequest{ProductID: productID}, &r)
	return r.Secret, r.Record, err
}

// ListTokens implements Admin.
func (c *Client) ListTokens(ctx context.Context, productID int64) ([]analytics.QueryToken, error) {
	var tokens []analytics.QueryToken
	err := c.do(ctx, http.MethodGet, "/tokens?product="+url.QueryEscape(strconv.FormatInt(productID, 10)), nil, &tokens)
	return tokens, err
}

// ListFlags implements Admin.
func (c *Client) ListFlags(ctx context.Context, productID int64) ([]analytics.Flag, error) {
	var list []analytics.Flag
	err := c.do(ctx, http.MethodGet, "/flags?product="+strconv.FormatInt(productID, 10), nil, &list)
	return list, err
}

// ListExperiments implements Admin.
func (c *Client) ListExperiments(ctx context.Context, productID int64) ([]analytics.Experiment, error) {
	var list []analytics.Experiment
	err := c.do(ctx, http.MethodGet, "/experiments?product="+strconv.FormatInt(productID, 10), nil, &list)
	return list, err
}

// ActExperiment implements Admin.
func (c *Client) ActExperiment(ctx context.Context, productID, id int64, action string) (analytics.Experiment, error) {
	var e analytics.Experiment
	err := c.do(ctx, http.MethodPost, "/experiments/"+url.PathEscape(action), ExperimentRequest{ProductID: productID, ID: id}, &e)
	return e, err
}

// ApplyWinner implements Admin.
func (c *Client) ApplyWinner(ctx context.Context, productID, id int64, variant string) (analytics.Experiment, error) {
	var e analytics.Experiment
	err := c.do(ctx, http.MethodPost, "/experiments/apply-winner", ExperimentRequest{ProductID: productID, ID: id, Variant: variant}, &e)
	return e, err
}

// do sends one request and decodes the answer, turning an error body back
// into the *analytics.Error the server reported.
func (c *Client) do(ctx context.Context, method, path string, in, out any) error {
	return c.doWith(c.http, ctx, method, path, in, out)
}

// doWith is do on the given HTTP client.
func (c *Client) doWith(hc *http.Client, ctx context.Context, method, path string, in, out any) error {
	var body bytes.Buffer
	if in != nil {
		if err := json.NewEncoder(&body).Encode(in); err != nil {
			return fmt.Errorf("encoding admin request: %w", err)
		}
	}
	req, err := http.NewRequestWithContext(ctx, method, "http://strata"+path, &body)
	if err != nil {
		return fmt.Errorf("building admin request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("calling admin socket: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		var e struct {
			Error struct{ Code, Message string } `json:"error"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&e); err != nil || e.Error.Code == "" {
			return fmt.Errorf("admin socket answered %s", resp.Status)
		}
		return &analytics.Error{Kind: kindOf(resp.StatusCode), Code: e.Error.Code, Message: e.Error.Message}
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("decoding admin response: %w", err)
	}
	return nil
}

func kindOf(status int) analytics.ErrorKind {
	switch status {
	case http.StatusBadRequest:
		return analytics.KindInvalid
	case http.StatusNotFound:
		return analytics.KindNotFound
	case http.StatusConflict:
		return analytics.KindConflict
	}
	return analytics.KindInternal
}
