package httpapi

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"strata/internal/analytics"
	"strata/internal/ingest"
)

// ingestResponse is the 202 body of POST /e.
type ingestResponse struct {
	Accepted int                `json:"accepted"`
	Rejected []ingest.Rejection `json:"rejected"`
}

var bodyPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// handleIngest is POST /e: authenticate, limit, read, validate and enrich,
// commit, and only then answer 202.
func (s *Server) handleIngest(w http.ResponseWriter, r *http.Request) error {
	receivedAt := s.Now().UTC()

	// The key comes from the header, else the body, else the query (a
	// beacon can set neither header). A header key is checked before the
	// body is read, so that refused requests cost little.
	plain := r.Header.Get("X-API-Key")
	var key analytics.APIKey
	if plain != "" {
		var err error
		if key, err = s.admit(r, plain); err != nil {
			return err
		}
	}

	buf := bodyPool.Get().(*bytes.Buffer)
	defer func() {
		if buf.Cap() <= 2*ingest.MaxBodyBytes {
			buf.Reset()
			bodyPool.Put(buf)
		}
	}()
	if err := readBody(r, buf); err != nil {
		return err
	}
	env, err := ingest.ParseEnvelope(buf.Bytes())
	if err != nil {
		return err
	}
	if plain == "" {
		plain = env.APIKey
		if plain == "" {
			plain = r.URL.Query().Get("api_key")
		}
		if key, err = s.admit(r, plain); err != nil {
			return err
		}
	}

	accepted, rejected := s.Pipeline.Process(env, ingest.Request{
		Product: key.ProductID, Env: key.Env, UserAgent: r.UserAgent(), ReceivedAt: receivedAt,
	})
	if len(accepted) == 0 {
		if rejected == nil {
			rejected = []ingest.Rejection{}
		}
		return &analytics.Error{Kind: analytics.KindInvalid, Code: "all_events_rejected",
			Message: "Every event of the batch was rejected; see rejected for the reasons.",
			Detail:  map[string]any{"rejected": rejected}}
	}
	if err := s.Writer.Write(r.Context(), accepted); err != nil {
		return err
	}
	if len(rejected) > 0 {
		writeJSON(w, http.StatusAccepted, ingestResponse{Accepted: len(accepted), Rejected: rejected})
		return nil
	}
	// Every event accepted, the common answer: the same bytes as
	// writeJSON's, written without reflection.
	setJSONHeaders(w.Header())
	w.WriteHeader(http.StatusAccepted)
	out := make([]byte, 0, 40)
	out = append(out, `{"accepted":`...)
	out = strconv.AppendInt(out, int64(len(accepted)), 10)
	out = append(out, ",\"rejected\":[]}\n"...)
	w.Write(out)
	return nil
}

// admit authenticates a key, applies the test-key origin rule and takes a
// token from the key's rate-limit bucket.
func (s *Server) admit(r *http.Request, plain string) (analytics.APIKey, error) {
	key, err := s.Keys.Authenticate(r.Context(), plain)
	if err != nil {
		return key, err
	}
	if key.Env == analytics.EnvTest {
		if origin := r.Header.Get("Origin"); origin != "" && !localOrigin(origin) {
			return key, analytics.Errorf(analytics.KindUnauthenticated, "test_key_not_allowed",
				"Test keys are accepted only from local origins (localhost, 127.0.0.1, *.test …); use a live key in production.")
		}
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

// readBody reads the request body into buf, undoing gzip, and enforces the
// size limit on the decompressed bytes so that a gzip bomb stops at 5 MB.
func readBody(r *http.Request, buf *bytes.Buffer) error {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || (mt != "application/json" && mt != "text/plain") {
			return analytics.Errorf(analytics.KindInvalid, "unsupported_content_type",
				"Content-Type must be application/json or text/plain (for beacons).")
		}
	}
	var body io.Reader = r.Body
	switch enc := strings.ToLower(strings.TrimSpace(r.Header.Get("Content-Encoding"))); enc {
	case "", "identity":
	case "gzip":
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			return analytics.Errorf(analytics.KindInvalid, "invalid_gzip", "The body is not valid gzip.")
		}
		defer zr.Close()
		body = zr
	default:
		return analytics.Errorf(analytics.KindInvalid, "unsupported_encoding",
			"Content-Encoding %q is not supported; send gzip or no encoding.", enc)
	}
	n, err := buf.ReadFrom(io.LimitReader(body, ingest.MaxBodyBytes+1))
	if err != nil {
		switch {
		case errors.Is(err, gzip.ErrChecksum), errors.Is(err, gzip.ErrHeader), errors.Is(err, io.ErrUnexpectedEOF):
			return analytics.Errorf(analytics.KindInvalid, "invalid_gzip", "The gzip body is corrupt or cut short.")
		}
		return analytics.Errorf(analytics.KindInvalid, "invalid_body", "The body could not be read.")
	}
	if n > ingest.MaxBodyBytes {
		return errBodyTooLarge
	}
	return nil
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
