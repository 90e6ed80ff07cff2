package httpapi

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"hash/crc32"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"strata/internal/analytics"
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
	// cohorts are the cohorts the flags' conditions name. When there are
	// some, a request for a user gets the body with the user's
	// memberships added (userBody), and open is the gzip of the body
	// without its closing brace, flushed but not ended, so that each
	// user's gzip adds a few bytes to it rather than compressing 47 KB.
	cohorts []int64
	open    *gzipOpen
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
	var targeted []int64
	for _, f := range list {
		for _, id := range flags.CohortIDs(f.Conditions) {
			if !slices.Contains(targeted, id) {
				targeted = append(targeted, id)
			}
		}
	}
	if len(targeted) > 0 && s.Targets != nil {
		if err := s.Targets.Refresh(ctx, productID, targeted); err != nil {
			return e, err
		}
	}
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
	if len(targeted) > 0 && s.Targets != nil {
		e.cohorts, e.open = targeted, openGzip(body[:len(body)-1])
	}
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
	gz := acceptsGzip(r.Header.Values("Accept-Encoding"))
	if gz {
		body, etag = e.gz, e.gzEtag
		h.Set("Content-Encoding", "gzip")
	}
	if id := r.URL.Query().Get("distinct_id"); len(e.cohorts) > 0 && id != "" && utf8.RuneCountInString(id) <= analytics.MaxDistinctIDLength {
		body, etag = e.userBody(s.Targets.Member(key.ProductID, e.cohorts, id), gz)
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

// userBody is the configuration of a user whose memberships of the
// flags' cohorts are m: the body with a "cohorts" member added, mapping
// each cohort held to whether the user is in it (a cohort not held is left
// out, and its conditions fail: docs/flags.md, "Cohorts"), gzipped when gz,
// with an ETag of its own. Only this user's memberships are in it.
func (e configEntry) userBody(m flags.Cohorts, gz bool) ([]byte, string) {
	tail := make([]byte, 0, 16+16*len(m))
	tail = append(tail, `,"cohorts":{`...)
	for _, id := range e.cohorts {
		member, known := m[id]
		if !known {
			continue
		}
		if len(tail) > len(`,"cohorts":{`) {
			tail = append(tail, ',')
		}
		tail = append(tail, '"')
		tail = strconv.AppendInt(tail, id, 10)
		tail = append(tail, `":`...)
		tail = strconv.AppendBool(tail, member)
	}
	tail = append(tail, "}}"...)
	sum := crc32.ChecksumIEEE(tail)
	tag := strings.TrimSuffix(e.etag, `"`) + "-" + strconv.FormatUint(uint64(sum), 36)
	if gz {
		return e.open.finish(tail), tag + `-gz"`
	}
	body := make([]byte, 0, len(e.body)-1+len(tail))
	body = append(append(body, e.body[:len(e.body)-1]...), tail...)
	return body, tag + `"`
}

// gzipOpen is a gzip member whose deflate stream was flushed but not ended:
// what finish appends one user's part to.
type gzipOpen struct {
	head []byte // the gzip header and the flushed deflate blocks
	crc  uint32 // of the uncompressed bytes so far
	size uint32 // how many they are, modulo 2^32
}

// openGzip compresses b into a gzip member left open after a sync flush,
// which ends on a byte boundary with no block marked final.
func openGzip(b []byte) *gzipOpen {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	zw.Write(b)
	zw.Flush()
	return &gzipOpen{head: buf.Bytes(), crc: crc32.ChecksumIEEE(b), size: uint32(len(b))}
}

// finish ends the member with tail, stored uncompressed in a final
// deflate block (RFC 1951, 3.2.4; tail is far below its 65,535 bytes),
// then the trailer's CRC-32 and size (RFC 1952, 2.3).
func (g *gzipOpen) finish(tail []byte) []byte {
	n := len(tail)
	out := make([]byte, 0, len(g.head)+5+n+8)
	out = append(out, g.head...)
	out = append(out, 1, byte(n), byte(n>>8), ^byte(n), ^byte(n>>8))
	out = append(out, tail...)
	out = binary.LittleEndian.AppendUint32(out, crc32.Update(g.crc, crc32.IEEETable, tail))
	return binary.LittleEndian.AppendUint32(out, g.size+uint32(n))
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
