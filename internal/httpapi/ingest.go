package httpapi

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"mime"
	"net"
	"net/netip"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/valyala/fasthttp"

	"strata/internal/analytics"
	"strata/internal/enrich/geo"
	"strata/internal/ingest"
	"strata/internal/metrics"
	"strata/internal/replay"
)

// ingestResponse is the 202 body of POST /e.
type ingestResponse struct {
	Accepted int                `json:"accepted"`
	Rejected []ingest.Rejection `json:"rejected"`
}

// handleIngest is POST /e: authenticate, limit, read, validate and enrich,
// commit, and only then answer 202. It is served on fasthttp directly
// rather than through the net/http route table: every tracked event
// arrives here, one request per event from beacon trackers, and net/http's
// per-request cost (a goroutine watching each connection while the handler
// waits for its commit, header maps, copying the body) was most of the
// server's CPU at tens of thousands of requests a second
// (docs/benchmarks.md).
func (s *Server) handleIngest(ctx *fasthttp.RequestCtx) error {
	receivedAt := s.Now().UTC()
	// fasthttp's request context ends when the server starts shutting
	// down; a request in flight then still commits and is answered.
	rctx := context.WithoutCancel(ctx)
	origin := ctx.Request.Header.Peek("Origin")

	// The key comes from the header, else the body, else the query (a
	// beacon can set neither header). A header key is checked before the
	// body is read: fasthttp has read at most its first byte (app.go), so
	// a refused request costs its headers and nothing more.
	plain := string(ctx.Request.Header.Peek("X-API-Key"))
	var key analytics.APIKey
	if plain != "" {
		var err error
		if key, err = s.admit(rctx, origin, plain); err != nil {
			return err
		}
		setProduct(ctx, key.ProductID)
	}

	body, err := s.ingestBody(ctx)
	if err != nil {
		return err
	}
	defer body.release()
	env, err := ingest.ParseEnvelope(body.buf)
	if err != nil {
		return err
	}
	if plain == "" {
		plain = env.APIKey
		if plain == "" {
			plain = string(ctx.QueryArgs().Peek("api_key"))
		}
		if key, err = s.admit(rctx, origin, plain); err != nil {
			return err
		}
		setProduct(ctx, key.ProductID)
	}

	accepted, rejected := s.Pipeline.Process(env, ingest.Request{
		Product: key.ProductID, Env: key.Env, UserAgent: string(ctx.UserAgent()), ReceivedAt: receivedAt,
		ClientAddr: s.clientAddr(ctx),
	})
	// Every use of the accepted events ends with this handler (the writer
	// has answered, the response is written).
	defer ingest.Release(accepted)
	if !s.Replay {
		accepted, rejected = replay.RefuseChunks(accepted, rejected)
	}
	if len(accepted) == 0 {
		s.Metrics.IngestEvents(0, rejected)
		return allRejected(rejected)
	}
	// Replay chunks go to the replay store, durably, before the events
	// are committed (docs/replay.md, "Storage"); those past their
	// session's cap are rejected.
	events, full, err := s.ReplayOps.StoreChunks(rctx, accepted)
	if err != nil {
		return err
	}
	rejected = append(rejected, full...)
	n := len(accepted) - len(full)
	if n == 0 {
		s.Metrics.IngestEvents(0, rejected)
		return allRejected(rejected)
	}
	// fasthttp reuses the request's buffers once this handler returns;
	// the events hold none of them (the decoder copies every string).
	if len(events) > 0 {
		if err := s.Writer.Write(rctx, events); err != nil {
			return err
		}
	}
	s.Metrics.IngestEvents(n, rejected)
	if len(rejected) > 0 {
		if req := requestOf(ctx); req != nil {
			req.partial = true
		}
		sort.Slice(rejected, func(i, j int) bool { return rejected[i].Index < rejected[j].Index })
		writeFastJSON(ctx, fasthttp.StatusAccepted,
			marshalLine(ingestResponse{Accepted: n, Rejected: rejected}))
		return nil
	}
	// Every event accepted, the common answer, written without reflection.
	var buf [48]byte
	b := append(buf[:0], `{"accepted":`...)
	b = strconv.AppendInt(b, int64(n), 10)
	b = append(b, ",\"rejected\":[]}\n"...)
	writeFastJSON(ctx, fasthttp.StatusAccepted, b)
	return nil
}

// countIngest counts each request to POST /e by its outcome
// (metrics.Outcome…).
func (s *Server) countIngest(h fastHandlerFunc) fastHandlerFunc {
	if s.Metrics == nil {
		return h
	}
	return func(ctx *fasthttp.RequestCtx) error {
		err := h(ctx)
		s.Metrics.IngestRequest(ingestOutcome(ctx, err))
		return err
	}
}

// ingestOutcome is the outcome of a request to POST /e that h answered
// with err.
func ingestOutcome(ctx *fasthttp.RequestCtx, err error) string {
	if err == nil {
		if req := requestOf(ctx); req != nil && req.partial {
			return metrics.OutcomePartial
		}
		return metrics.OutcomeAccepted
	}
	switch analytics.AsError(err).Kind {
	case analytics.KindInvalid:
		return metrics.OutcomeRejected
	case analytics.KindUnauthenticated, analytics.KindForbidden:
		return metrics.OutcomeUnauthenticated
	case analytics.KindRateLimited:
		return metrics.OutcomeRateLimited
	case analytics.KindTooLarge:
		return metrics.OutcomeTooLarge
	case analytics.KindUnavailable, analytics.KindTimeout:
		return metrics.OutcomeUnavailable
	}
	return metrics.OutcomeError
}

// clientAddr is the address the events of an ingest request are located
// by: the peer's, or behind a trusted proxy the one its X-Forwarded-For
// names (geo.ClientAddr). It is never stored or logged.
func (s *Server) clientAddr(ctx *fasthttp.RequestCtx) netip.Addr {
	peer, _ := netip.AddrFromSlice(ctx.RemoteIP())
	if len(s.TrustedProxies) == 0 {
		return peer.Unmap()
	}
	return geo.ClientAddr(peer, ctx.Request.Header.PeekAll(fasthttp.HeaderXForwardedFor), s.TrustedProxies)
}

// allRejected is the answer to a batch of which no event was stored.
func allRejected(rejected []ingest.Rejection) error {
	if rejected == nil {
		rejected = []ingest.Rejection{}
	}
	sort.Slice(rejected, func(i, j int) bool { return rejected[i].Index < rejected[j].Index })
	return &analytics.Error{Kind: analytics.KindInvalid, Code: "all_events_rejected",
		Message: "Every event of the batch was rejected; see rejected for the reasons.",
		Detail:  map[string]any{"rejected": rejected}}
}

// admit authenticates a key, applies the test-key origin rule and takes a
// token from the key's rate-limit bucket.
func (s *Server) admit(ctx context.Context, origin []byte, plain string) (analytics.APIKey, error) {
	key, err := s.Keys.Authenticate(ctx, plain)
	if err != nil {
		return key, err
	}
	if err := testKeyOrigin(key.Env, origin); err != nil {
		return key, err
	}
	return key, s.allowKey(key.ID, key.RateLimit)
}

// allowKey takes one request from an API key's bucket, which its events
// and its sourcemap uploads share, across nodes: ownLimit a minute (the
// key's own rate limit), or the server's default when that is 0. Over it,
// 429 rate_limited with Retry-After.
func (s *Server) allowKey(keyID int64, ownLimit int) error {
	limit := ownLimit
	if limit == 0 {
		limit = s.DefaultRateLimit
	}
	if ok, wait := s.Limiter.Allow(keyID, limit); !ok {
		return rateLimited(wait, "Too many requests for this API key (at most %d a minute, uploads and ingest together)", limit)
	}
	return nil
}

// ingestBody reads the body of POST /e under the server's body budget and
// returns it with gzip undone. The limit, ingest.MaxBodyBytes, applies to
// the bytes received and again to the decompressed bytes, so a gzip bomb
// stops at 5 MB, and both buffers are charged to the budget. The caller
// releases the body.
func (s *Server) ingestBody(ctx *fasthttp.RequestCtx) (*body, error) {
	if ct := ctx.Request.Header.ContentType(); len(ct) > 0 && !ingestContentType(ct) {
		return nil, analytics.Errorf(analytics.KindInvalid, "unsupported_content_type",
			"Content-Type must be application/json or text/plain (for beacons).")
	}
	gzipped := false
	if enc := ctx.Request.Header.ContentEncoding(); len(enc) > 0 {
		switch e := strings.ToLower(strings.TrimSpace(string(enc))); e {
		case "", "identity":
		case "gzip":
			gzipped = true
		default:
			return nil, analytics.Errorf(analytics.KindInvalid, "unsupported_encoding",
				"Content-Encoding %q is not supported; send gzip or no encoding.", e)
		}
	}
	raw, err := readBody(ctx.RequestBodyStream(), ctx.Request.Header.ContentLength(), ingest.MaxBodyBytes, s.Bodies, errBodyTooLarge)
	if err != nil || !gzipped {
		return raw, err
	}
	defer raw.release()
	zr, _ := gzipPool.Get().(*gzip.Reader)
	src := bytes.NewReader(raw.buf)
	if zr == nil {
		zr, err = gzip.NewReader(src)
	} else {
		err = zr.Reset(src)
	}
	if err != nil {
		return nil, analytics.Errorf(analytics.KindInvalid, "invalid_gzip", "The body is not valid gzip.")
	}
	defer gzipPool.Put(zr)
	plain, err := readBody(zr, -1, ingest.MaxBodyBytes, s.Bodies, errBodyTooLarge)
	if e := analytics.AsError(err); err != nil && e.Kind != analytics.KindTooLarge && e.Kind != analytics.KindUnavailable {
		return nil, analytics.Errorf(analytics.KindInvalid, "invalid_gzip", "The gzip body is corrupt or cut short.")
	}
	return plain, err
}

// gzipPool keeps gzip readers, whose window and tables are most of what
// decompressing a small batch allocates.
var gzipPool sync.Pool

// ingestContentType reports whether a Content-Type is one /e takes:
// application/json, or text/plain as beacons send it, with any parameters.
// The common values are matched without parsing.
func ingestContentType(ct []byte) bool {
	switch string(ct) {
	case "application/json", "text/plain;charset=UTF-8", "application/json; charset=utf-8", "text/plain":
		return true
	}
	mt, _, err := mime.ParseMediaType(string(ct))
	return err == nil && (mt == "application/json" || mt == "text/plain")
}

var errBodyTooLarge = analytics.Errorf(analytics.KindTooLarge, "payload_too_large",
	"The body is over 5 MB (%d bytes), as sent or after decompression; send smaller batches.", ingest.MaxBodyBytes)

// testKeyOrigin applies the test-key rule wherever a key is accepted:
// a test key sent from a browser page (an Origin header) that is not a
// developer's machine is refused, so that a test key left in production
// code fails loudly. Requests without Origin (servers, scripts) may use it.
func testKeyOrigin(env analytics.Env, origin []byte) error {
	if env == analytics.EnvTest && len(origin) > 0 && !localOrigin(string(origin)) {
		return errTestKeyNotAllowed
	}
	return nil
}

var errTestKeyNotAllowed = analytics.Errorf(analytics.KindUnauthenticated, "test_key_not_allowed",
	"Test keys are accepted only from local origins (localhost, 127.0.0.1, *.test …); use a live key in production.")

// localOrigin reports whether a browser Origin is a developer's machine,
// where test keys are allowed: localhost, loopback addresses, and the
// reserved *.localhost, *.local and *.test names.
func localOrigin(origin string) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false
	}
	host := strings.ToLower(u.Hostname())
	if host == "localhost" || strings.HasSuffix(host, ".localhost") ||
		strings.HasSuffix(host, ".local") || strings.HasSuffix(host, ".test") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// MaxHeaderBytes bounds a request's line and headers together: it is the
// server's read buffer (fasthttp's ReadBufferSize).
const MaxHeaderBytes = 16 << 10

// RequestError answers a request fasthttp could not read, in the API's
// error format: headers over the read buffer (431), a read timeout (408:
// the headers, or the first byte of the body, did not arrive in time), or
// anything else malformed (400). Bodies are read by the handlers, which
// answer their own 413s (body.go); fasthttp's ErrBodyTooLarge, which its
// streaming mode does not return, is answered with the path's limit all
// the same. On /e the answer carries the CORS headers, so that the SDK
// sees it.
func (s *Server) RequestError(ctx *fasthttp.RequestCtx, err error) {
	var small *fasthttp.ErrSmallBuffer
	var netErr net.Error
	status, e := fasthttp.StatusBadRequest, analytics.Errorf(analytics.KindInvalid, "invalid_request", "The request is not valid HTTP/1.1.")
	switch {
	case errors.Is(err, fasthttp.ErrBodyTooLarge):
		e = errAPIBodyTooLarge
		if string(ctx.Path()) == "/e" {
			e = errBodyTooLarge
		}
		status = statusOf(e.Kind)
	case errors.As(err, &small):
		status = fasthttp.StatusRequestHeaderFieldsTooLarge
		e = analytics.Errorf(analytics.KindInvalid, "headers_too_large", "The request line and headers are over %d KB.", MaxHeaderBytes>>10)
	case errors.As(err, &netErr) && netErr.Timeout():
		status, e = fasthttp.StatusRequestTimeout, errBodyTimeout
	}
	if string(ctx.Path()) == "/e" {
		setFastCORS(&ctx.Response.Header)
	}
	writeFastJSON(ctx, status, marshalLine(errorBody(e)))
}
