package httpapi

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/valyala/fasthttp"

	"strata/internal/analytics"
)

var errTestTooLarge = analytics.Errorf(analytics.KindTooLarge, "too_large", "over the limit")

// stallReader hands out its bytes and then, instead of the end, fails with
// err, as a connection whose client stalled (a timeout) or went away does.
type stallReader struct {
	r   io.Reader
	err error
}

func (s *stallReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if err == io.EOF {
		return n, s.err
	}
	return n, err
}

// timeoutErr is a net.Error that timed out, as a read past the deadline
// returns.
type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

// TestReadBody checks the body reader: what it returns, the error for each
// way a body can fail, and that the budget gets every byte back.
func TestReadBody(t *testing.T) {
	const limit = 100 << 10
	payload := func(n int) []byte { return bytes.Repeat([]byte("x"), n) }
	cases := []struct {
		name     string
		r        io.Reader
		declared int
		budget   int64
		want     int    // body length, when no error
		code     string // error code, when one
	}{
		{"empty", nil, 0, 1 << 20, 0, ""},
		{"small declared", bytes.NewReader(payload(200)), 200, 1 << 20, 200, ""},
		{"declared exactly the limit", bytes.NewReader(payload(limit)), limit, 1 << 20, limit, ""},
		{"chunked exactly the limit", bytes.NewReader(payload(limit)), -1, 1 << 20, limit, ""},
		{"one byte at a time", iotest.OneByteReader(bytes.NewReader(payload(10_000))), 10_000, 1 << 20, 10_000, ""},
		{"declared over the limit", bytes.NewReader(payload(10)), limit + 1, 1 << 20, 0, "too_large"},
		{"chunked over the limit", bytes.NewReader(payload(limit + 1)), -1, 1 << 20, 0, "too_large"},
		{"cut short", bytes.NewReader(payload(50)), 100, 1 << 20, 0, "invalid_request"},
		{"stalled", &stallReader{bytes.NewReader(payload(50)), timeoutErr{}}, 100, 1 << 20, 0, "request_timeout"},
		{"broken", &stallReader{bytes.NewReader(payload(50)), errors.New("connection reset")}, 100, 1 << 20, 0, "invalid_request"},
		{"budget too small to start", bytes.NewReader(payload(200)), 200, 100, 0, "server_busy"},
		{"budget too small to grow", bytes.NewReader(payload(limit)), limit, 32 << 10, 0, "server_busy"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			budget := NewBodyBudget(c.budget, slog.New(slog.NewTextHandler(io.Discard, nil)))
			b, err := readBody(c.r, c.declared, limit, budget, errTestTooLarge)
			if c.code != "" {
				if err == nil || analytics.AsError(err).Code != c.code {
					t.Fatalf("error %v, want %s", err, c.code)
				}
			} else {
				if err != nil {
					t.Fatal(err)
				}
				if len(b.buf) != c.want || (c.want > 0 && !bytes.Equal(b.buf, payload(c.want))) {
					t.Fatalf("body of %d bytes, want %d", len(b.buf), c.want)
				}
				if budget.InUse() < int64(c.want) || budget.InUse() > 2*int64(max(c.want, initialBodyCap)) {
					t.Errorf("%d bytes reserved for a body of %d", budget.InUse(), c.want)
				}
				b.release()
			}
			if n := budget.InUse(); n != 0 {
				t.Errorf("%d bytes still reserved after the body was done", n)
			}
		})
	}
}

// TestReadBodyGrowsWithArrival checks that a body's reservation follows
// the bytes that arrived, not the length the client declared: a client
// that declares 5 MB and sends 10 KB holds 16 KB.
func TestReadBodyGrowsWithArrival(t *testing.T) {
	budget := NewBodyBudget(64<<20, slog.New(slog.NewTextHandler(io.Discard, nil)))
	r := &stallReader{strings.NewReader(strings.Repeat("x", 10_000)), timeoutErr{}}
	var peak int64
	watch := readerFunc(func(p []byte) (int, error) {
		peak = max(peak, budget.InUse())
		return r.Read(p)
	})
	if _, err := readBody(watch, 5<<20, 5<<20, budget, errTestTooLarge); analytics.AsError(err).Code != "request_timeout" {
		t.Fatalf("error %v, want request_timeout", err)
	}
	if peak != 16<<10 {
		t.Errorf("peak reservation %d bytes for 10,000 received; want 16 KB", peak)
	}
}

type readerFunc func([]byte) (int, error)

func (f readerFunc) Read(p []byte) (int, error) { return f(p) }

// TestBodyPoolKeepsNoLargeBuffers checks that a buffer grown for a large
// body is not kept for the next one.
func TestBodyPoolKeepsNoLargeBuffers(t *testing.T) {
	budget := NewBodyBudget(64<<20, slog.New(slog.NewTextHandler(io.Discard, nil)))
	b, err := readBody(bytes.NewReader(make([]byte, 2<<20)), 2<<20, 5<<20, budget, errTestTooLarge)
	if err != nil {
		t.Fatal(err)
	}
	b.release()
	if cap(b.buf) > maxPooledBody {
		t.Errorf("a %d-byte buffer went back to the pool", cap(b.buf))
	}
}

// TestAdaptedBodyOutlivesTheAdaptor serves a request with a body through
// serveAdapted to a net/http handler that flushes (as the survey export and
// a replay page do), after which the adaptor streams the response and
// returns while the handler still runs: the body stays reserved, and its
// buffer the request's own, until the handler returns, even while another
// request's body is read meanwhile; then the budget has it all back. A
// handler that does not flush, and a request the adaptor never hands to the
// handler, give it back when serveAdapted returns.
func TestAdaptedBodyOutlivesTheAdaptor(t *testing.T) {
	budget := NewBodyBudget(1<<20, slog.New(slog.NewTextHandler(io.Discard, nil)))
	s := &Server{Bodies: budget, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	request := func(uri string, b []byte) *fasthttp.RequestCtx {
		var req fasthttp.Request
		req.Header.SetMethod("POST")
		req.SetRequestURI(uri)
		var ctx fasthttp.RequestCtx
		ctx.Init(&req, nil, quietLogger{})
		ctx.Request.SetBodyStream(bytes.NewReader(b), len(b))
		return &ctx
	}
	sent := bytes.Repeat([]byte("a"), 300<<10)
	proceed, got := make(chan struct{}), make(chan []byte, 1)
	returned := make(chan struct{})
	ctx := request("/stream", sent)
	s.serveAdapted(ctx, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer close(returned)
		w.Write([]byte("head"))
		w.(http.Flusher).Flush()
		<-proceed
		b, _ := io.ReadAll(r.Body)
		got <- b
		w.Write([]byte("tail"))
	}))
	// The adaptor has returned; the handler waits, with its request.
	if n := budget.InUse(); n < int64(len(sent)) {
		t.Errorf("%d bytes reserved while the handler still runs with its %d-byte body", n, len(sent))
	}
	other, err := readBody(bytes.NewReader(bytes.Repeat([]byte("b"), len(sent))), len(sent), maxAPIBody, budget, errTestTooLarge)
	if err != nil {
		t.Fatal(err)
	}
	other.release()
	drained := make(chan []byte)
	go func() {
		b, _ := io.ReadAll(ctx.Response.BodyStream())
		drained <- b
	}()
	close(proceed)
	if b := <-got; !bytes.Equal(b, sent) {
		t.Errorf("the handler read a body of %d bytes, %.20q…; want its own %d", len(b), b, len(sent))
	}
	if b := <-drained; string(b) != "headtail" {
		t.Errorf("the streamed response: %q", b)
	}
	<-returned
	deadline := time.Now().Add(5 * time.Second)
	for budget.InUse() != 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if n := budget.InUse(); n != 0 {
		t.Errorf("%d bytes still reserved after the handler returned", n)
	}

	s.serveAdapted(request("/buffered", sent), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(w, r.Body)
	}))
	if n := budget.InUse(); n != 0 {
		t.Errorf("%d bytes still reserved after a handler that does not flush", n)
	}
	s.serveAdapted(request("/%zz", sent), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("the handler ran for a request the adaptor cannot convert")
	}))
	if n := budget.InUse(); n != 0 {
		t.Errorf("%d bytes still reserved after a request the handler never saw", n)
	}
}

// quietLogger is a fasthttp.Logger that drops what it is given.
type quietLogger struct{}

func (quietLogger) Printf(string, ...any) {}
