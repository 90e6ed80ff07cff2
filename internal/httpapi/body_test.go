package httpapi

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"testing/iotest"

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
