package httpapi

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"mime"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/valyala/fasthttp"

	"strata/internal/analytics"
	"strata/internal/ingest"
)

// ingestResponse is the 202 body of POST /e.
type ingestResponse struct {
	Accepted int                `json:"accepted"`
	Rejected []ingest.Rejection `json:"rejected"`
}

var gunzipPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

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
	// body is parsed, so that refused requests cost little.
	plain := string(ctx.Request.Header.Peek("X-API-Key"))
	var key analytics.APIKey
	if plain != "" {
		var err error
		if key, err = s.admit(rctx, origin, plain); err != nil {
			return err
		}
	}

	body, release, err := requestBody(ctx)
	if err != nil {
		return err
	}
	defer release()
	env, err := ingest.ParseEnvelope(body)
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
	}

	accepted, rejected := s.Pipeline.Process(env, ingest.Request{
		Product: key.ProductID, Env: key.Env, UserAgent: string(ctx.UserAgent()), ReceivedAt: receivedAt,
	})
	if len(accepted) == 0 {
		if rejected == nil {
			rejected = []ingest.Rejection{}
		}
		return &analytics.Error{Kind: analytics.KindInvalid, Code: "all_events_rejected",
			Message: "Every event of the batch was rejected; see rejected for the reasons.",
			Detail:  map[string]any{"rejected": rejected}}
	}
	// fasthttp reuses the request's buffers once this handler returns;
	// the events hold none of them (the decoder copies every string).
	if err := s.Writer.Write(rctx, accepted); err != nil {
		return err
	}
	if len(rejected) > 0 {
		writeFastJSON(ctx, fasthttp.StatusAccepted,
			marshalLine(ingestResponse{Accepted: len(accepted), Rejected: rejected}))
		return nil
	}
	// Every event accepted, the common answer, written without reflection.
	var buf [48]byte
	b := append(buf[:0], `{"accepted":`...)
	b = strconv.AppendInt(b, int64(len(accepted)), 10)
	b = append(b, ",\"rejected\":[]}\n"...)
	writeFastJSON(ctx, fasthttp.StatusAccepted, b)
	return nil
}

// admit authenticates a key, applies the test-key origin rule and takes a
// token from the key's rate-limit bucket.
func (s *Server) admit(ctx context.Context, origin []byte, plain string) (analytics.APIKey, error) {
	key, err := s.Keys.Authenticate(ctx, plain)
	if err != nil {
		return key, err
	}
	if key.Env == analytics.EnvTest && len(origin) > 0 && !localOrigin(string(origin)) {
		return key, analytics.Errorf(analytics.KindUnauthenticated, "test_key_not_allowed",
			"Test keys are accepted only from local origins (localhost, 127.0.0.1, *.test …); use a live key in production.")
	}
	limit := key.RateLimit
	if limit == 0 {
		limit = s.DefaultRateLimit
	}
	if ok, wait := s.Limiter.Allow(key.ID, limit); !ok {
		return key, &analytics.Error{Kind: analytics.KindRateLimited, Code: "rate_limited",
			Message:    "Too many requests for this API key; retry after the number of seconds in Retry-After.",
			RetryAfter: max(wait, time.Second)}
	}
	return key, nil
}

// requestBody returns the request body with gzip undone, and a function
// that releases it once nothing refers to it. fasthttp has already read
// the body, refusing one over ingest.MaxBodyBytes (RequestError); a gzip
// body is decompressed under the same limit, so a gzip bomb stops at 5 MB.
func requestBody(ctx *fasthttp.RequestCtx) ([]byte, func(), error) {
	if ct := ctx.Request.Header.ContentType(); len(ct) > 0 {
		mt, _, err := mime.ParseMediaType(string(ct))
		if err != nil || (mt != "application/json" && mt != "text/plain") {
			return nil, nil, analytics.Errorf(analytics.KindInvalid, "unsupported_content_type",
				"Content-Type must be application/json or text/plain (for beacons).")
		}
	}
	enc := strings.ToLower(strings.TrimSpace(string(ctx.Request.Header.ContentEncoding())))
	switch enc {
	case "", "identity":
		return ctx.PostBody(), func() {}, nil
	case "gzip":
	default:
		return nil, nil, analytics.Errorf(analytics.KindInvalid, "unsupported_encoding",
			"Content-Encoding %q is not supported; send gzip or no encoding.", enc)
	}
	zr, err := gzip.NewReader(bytes.NewReader(ctx.PostBody()))
	if err != nil {
		return nil, nil, analytics.Errorf(analytics.KindInvalid, "invalid_gzip", "The body is not valid gzip.")
	}
	buf := gunzipPool.Get().(*bytes.Buffer)
	release := func() {
		if buf.Cap() <= 2*ingest.MaxBodyBytes {
			buf.Reset()
			gunzipPool.Put(buf)
		}
	}
	n, err := buf.ReadFrom(io.LimitReader(zr, ingest.MaxBodyBytes+1))
	if err != nil {
		release()
		return nil, nil, analytics.Errorf(analytics.KindInvalid, "invalid_gzip", "The gzip body is corrupt or cut short.")
	}
	if n > ingest.MaxBodyBytes {
		release()
		return nil, nil, errBodyTooLarge
	}
	return buf.Bytes(), release, nil
}

var errBodyTooLarge = analytics.Errorf(analytics.KindTooLarge, "payload_too_large",
	"The body is over 5 MB after decompression; send smaller batches.")

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
// error format: a body over 5 MB (413), headers over the read buffer (431),
// a read timeout (408), or anything else malformed (400). On /e the answer
// carries the CORS headers, so that the SDK sees it, when fasthttp still
// has the path: it has for a Content-Length over the limit (what browsers
// send), not for a chunked body that ran over it.
func (s *Server) RequestError(ctx *fasthttp.RequestCtx, err error) {
	var small *fasthttp.ErrSmallBuffer
	var netErr net.Error
	status, e := fasthttp.StatusBadRequest, analytics.Errorf(analytics.KindInvalid, "invalid_request", "The request is not valid HTTP/1.1.")
	switch {
	case errors.Is(err, fasthttp.ErrBodyTooLarge):
		status, e = fasthttp.StatusRequestEntityTooLarge, errBodyTooLarge
	case errors.As(err, &small):
		status = fasthttp.StatusRequestHeaderFieldsTooLarge
		e = analytics.Errorf(analytics.KindInvalid, "headers_too_large", "The request line and headers are over %d KB.", MaxHeaderBytes>>10)
	case errors.As(err, &netErr) && netErr.Timeout():
		status = fasthttp.StatusRequestTimeout
		e = analytics.Errorf(analytics.KindInvalid, "request_timeout", "The request was not received in time.")
	}
	if string(ctx.Path()) == "/e" {
		setFastCORS(&ctx.Response.Header)
	}
	writeFastJSON(ctx, status, marshalLine(errorBody(e)))
}
