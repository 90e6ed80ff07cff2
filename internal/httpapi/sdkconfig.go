package httpapi

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"strata/internal/flags"
)

// sdkConfig is the body of GET /api/v1/config, what the browser SDK reads
// to evaluate flags and experiments (docs/flags.md, "The configuration").
type sdkConfig struct {
	Flags           []flags.Flag `json:"flags"`
	MessagesEnabled bool         `json:"messagesEnabled"`
	ErrorTracking   bool         `json:"errorTracking"`
	Replay          bool         `json:"replay"`
	// Cookieless and RespectPrivacySignals are the product's privacy
	// settings, which an SDK not told otherwise by its page follows
	// (docs/privacy.md, "Cookieless mode").
	Cookieless            bool `json:"cookieless"`
	RespectPrivacySignals bool `json:"respectPrivacySignals"`
}

// configTTL is how long a node answers a product's configuration from
// memory before it reads the flags again: a change made on another node is
// served here within it (a change made here, at once).
const configTTL = 2 * time.Second

// configCache holds each product's configuration, encoded, with its ETag.
// An entry older than configTTL is still served while one background read
// replaces it, so that no request waits for the metadata store once a
// product's configuration was read (the p99 at 1,000 requests/s,
// docs/benchmarks.md). gen counts each product's changes made through this
// node: a read that began before a change is not stored over it.
type configCache struct {
	mu         sync.Mutex
	entries    map[int64]configEntry
	gen        map[int64]uint64
	refreshing map[int64]bool
	// hits and misses count the answers from memory and from the store,
	// for the metrics (ConfigCacheStats).
	hits, misses atomic.Uint64
}

// ConfigCacheStats is how many SDK configurations were answered from
// memory (hits) and read from the store first (misses).
func (s *Server) ConfigCacheStats() (hits, misses uint64) {
	return s.configs.hits.Load(), s.configs.misses.Load()
}

// configEntry is a product's configuration as sent: the JSON body and its
// gzip, each with its own ETag (a strong ETag names one encoding).
type configEntry struct {
	body, gz     []byte
	etag, gzEtag string
	loaded       time.Time
}

// FlagsChanged drops a product's cached configuration after a write here,
// and what the message engine holds of the product (its campaigns'
// variants are flags' assignments).
func (s *Server) FlagsChanged(productID int64) {
	if s.Messages != nil {
		s.Messages.Changed(productID)
	}
	s.configs.mu.Lock()
	delete(s.configs.entries, productID)
	if s.configs.gen == nil {
		s.configs.gen = map[int64]uint64{}
	}
	s.configs.gen[productID]++
	s.configs.mu.Unlock()
}

// sdkConfigFor returns a product's configuration from memory. One older
// than configTTL is returned too, and read again in the background; only a
// product not in memory (never read, or changed through this node) is
// read before the answer.
func (s *Server) sdkConfigFor(ctx context.Context, productID int64) (configEntry, error) {
	s.configs.mu.Lock()
	e, ok := s.configs.entries[productID]
	if ok && s.Now().Sub(e.loaded) >= configTTL && !s.configs.refreshing[productID] {
		if s.configs.refreshing == nil {
			s.configs.refreshing = map[int64]bool{}
		}
		s.configs.refreshing[productID] = true
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if _, err := s.loadSDKConfig(ctx, productID); err != nil {
				s.Log.Error("reading the SDK configuration", "product", productID, "err", err)
			}
			s.configs.mu.Lock()
			delete(s.configs.refreshing, productID)
			s.configs.mu.Unlock()
		}()
	}
	s.configs.mu.Unlock()
	if ok {
		s.configs.hits.Add(1)
		return e, nil
	}
	s.configs.misses.Add(1)
	return s.loadSDKConfig(ctx, productID)
}

// loadSDKConfig reads a product's flags and experiments, encodes the
// configuration and stores it in memory, unless the product changed
// through this node while it read.
func (s *Server) loadSDKConfig(ctx context.Context, productID int64) (configEntry, error) {
	s.configs.mu.Lock()
	gen := s.configs.gen[productID]
	s.configs.mu.Unlock()
	now := s.Now()
	var e configEntry
	list, err := s.FlagOps.ForSDK(ctx, productID)
	if err != nil {
		return e, err
	}
	cfg := sdkConfig{Flags: list, Replay: s.Replay, ErrorTracking: s.ErrorTracking}
	if cfg.MessagesEnabled, err = s.CampaignOps.Enabled(ctx, productID); err != nil {
		return e, err
	}
	prod, err := s.Admin.Meta.Product(ctx, productID)
	if err != nil {
		return e, err
	}
	cfg.Cookieless, cfg.RespectPrivacySignals = prod.Privacy.Cookieless, prod.Privacy.RespectPrivacySignals
	body, err := json.Marshal(cfg)
	if err != nil {
		return e, err
	}
	sum := sha256.Sum256(body)
	tag := hex.EncodeToString(sum[:12])
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	zw.Write(body)
	zw.Close()
	e = configEntry{body: body, gz: gz.Bytes(), etag: `"` + tag + `"`, gzEtag: `"` + tag + `-gz"`, loaded: now}
	s.configs.mu.Lock()
	if s.configs.entries == nil {
		s.configs.entries = map[int64]configEntry{}
	}
	if s.configs.gen[productID] == gen {
		s.configs.entries[productID] = e
	}
	s.configs.mu.Unlock()
	return e, nil
}

// FlagsByKey is the product's flags as the SDKs evaluate them, by key,
// for the message engine, whose campaigns' variants are their flags'
// assignments.
func (s *Server) FlagsByKey(ctx context.Context, productID int64) (map[string]*flags.Flag, error) {
	list, err := s.FlagOps.ForSDK(ctx, productID)
	if err != nil {
		return nil, err
	}
	out := make(map[string]*flags.Flag, len(list))
	for i := range list {
		out[list[i].Key] = &list[i]
	}
	return out, nil
}

// handleSDKConfig answers the SDK's configuration request for the product
// of the API key in the query (or X-API-Key): the product's flags, from
// memory (sdkConfigFor), with an ETag that a repeated request may send back
// for a 304. A product without flags gets an empty list, and the SDK then
// answers "control" for every flag, as for a flag that does not exist. A
// test key is refused from a page that is not local, as in ingest.
// Browsers may cache the answer for a minute. A client that accepts gzip
// (browsers, and the Node and Go SDKs' HTTP clients, do) gets the body
// compressed once when the configuration was read: 200 flags with
// conditions are 47 KB of JSON and 2 KB of gzip in the benchmark
// (docs/flags.md, "The configuration").
func (s *Server) handleSDKConfig(w http.ResponseWriter, r *http.Request) error {
	key, err := s.sdkKey(r)
	if err != nil {
		return err
	}
	e, err := s.sdkConfigFor(r.Context(), key.ProductID)
	if err != nil {
		return err
	}
	body, etag := e.body, e.etag
	h := w.Header()
	h.Set("Cache-Control", "max-age=60")
	h.Set("Vary", "Accept-Encoding")
	if acceptsGzip(r.Header.Values("Accept-Encoding")) {
		body, etag = e.gz, e.gzEtag
		h.Set("Content-Encoding", "gzip")
	}
	h.Set("ETag", etag)
	if r.Header.Get("If-None-Match") == etag {
		h.Del("Content-Encoding")
		w.WriteHeader(http.StatusNotModified)
		return nil
	}
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.Write(body)
	return nil
}

// acceptsGzip reports whether Accept-Encoding values name gzip with a
// weight above zero.
func acceptsGzip(values []string) bool {
	for _, v := range values {
		for _, part := range strings.Split(v, ",") {
			name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
			if !strings.EqualFold(strings.TrimSpace(name), "gzip") {
				continue
			}
			q, ok := strings.CutPrefix(strings.ReplaceAll(strings.TrimSpace(params), " ", ""), "q=")
			if !ok {
				return true
			}
			if w, err := strconv.ParseFloat(q, 64); err == nil && w > 0 {
				return true
			}
		}
	}
	return false
}
