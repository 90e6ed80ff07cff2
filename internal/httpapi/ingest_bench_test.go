package httpapi

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"log/slog"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttputil"

	"strata/internal/admin"
	"strata/internal/analytics"
	"strata/internal/auth"
	"strata/internal/enrich/bots"
	"strata/internal/enrich/ua"
	"strata/internal/ingest"
	"strata/internal/metrics"
	"strata/internal/ratelimit"
	"strata/internal/store/duckdb"
)

// nopEvents is an event store that keeps nothing, so that the benchmark
// measures the HTTP path and not storage.
type nopEvents struct{}

func (nopEvents) AppendEvents(context.Context, []analytics.Event) error { return nil }
func (nopEvents) RecentUUIDs(context.Context, time.Time, int, func(int64, [16]byte) error) error {
	return nil
}
func (nopEvents) Close() error { return nil }

// serveIngest serves POST /e over an in-memory listener, through the
// fasthttp server as app.go configures it (bodies streamed), with a real
// key store and events going to events; it returns the product's API key.
// Everything stops when the test ends.
func serveIngest(tb testing.TB, events analytics.EventStore, log *slog.Logger, configure ...func(*Server)) (string, *fasthttputil.InmemoryListener) {
	ctx := context.Background()
	st, err := duckdb.Open(ctx, tb.TempDir(), duckdb.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	key, _, err := (&admin.Service{Meta: st}).Bootstrap(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	wr := ingest.NewWriter(events, ingest.WriterOptions{DedupCapacity: 1000, Logger: log})
	s := &Server{
		Keys: auth.NewKeyring(st, time.Hour, time.Now), Limiter: ratelimit.New(time.Now), DefaultRateLimit: 1 << 30,
		Pipeline: &ingest.Pipeline{UA: ua.NewParser(1000, bots.Default())}, Writer: wr,
		Bodies: NewBodyBudget(64<<20, log), Now: time.Now, Log: log,
	}
	for _, c := range configure {
		c(s)
	}
	srv := &fasthttp.Server{Handler: s.Handler(), ErrorHandler: s.RequestError,
		StreamRequestBody: true, MaxRequestBodySize: 1, ReadBufferSize: MaxHeaderBytes,
		NoDefaultServerHeader: true, NoDefaultContentType: true, DisablePreParseMultipartForm: true}
	ln := fasthttputil.NewInmemoryListener()
	go srv.Serve(ln)
	tb.Cleanup(func() {
		srv.Shutdown()
		wr.Close()
	})
	return key, ln
}

// BenchmarkIngestSingleEvent sends one-event batches to POST /e, one after
// the other on one keep-alive connection, through the fasthttp server as
// app.go configures it (bodies streamed), over an in-memory listener.
// allocs/op counts every allocation of the process per request: the
// server's, the handler's and the few of the client loop.
func BenchmarkIngestSingleEvent(b *testing.B) {
	benchIngest(b, slog.New(slog.NewTextHandler(io.Discard, nil)))
}

// BenchmarkIngestObserved is BenchmarkIngestSingleEvent with the metrics
// counting and the access log on as the server runs them, its lines
// written in JSON to /dev/null (a write each, as to stderr): what they
// cost per request (docs/operations.md, "Logs").
func BenchmarkIngestObserved(b *testing.B) {
	devNull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer devNull.Close()
	log := slog.New(RequestIDHandler(slog.NewJSONHandler(devNull, nil)))
	for _, c := range []struct {
		name   string
		access AccessLog
	}{
		{"metrics", AccessLog{}},
		{"metrics+access", AccessLog{On: true, Level: slog.LevelInfo}},
		{"metrics+access-sample-100", AccessLog{On: true, Level: slog.LevelInfo, Sample: 100}},
		{"metrics+access-debug-at-info", AccessLog{On: true, Level: slog.LevelDebug}},
	} {
		b.Run(c.name, func(b *testing.B) {
			benchIngest(b, log, func(s *Server) { s.Metrics, s.Access = metrics.New(), c.access })
		})
	}
}

// benchIngest sends one-event batches to a server made by serveIngest.
func benchIngest(b *testing.B, log *slog.Logger, configure ...func(*Server)) {
	key, ln := serveIngest(b, nopEvents{}, log, configure...)

	conn, err := ln.Dial()
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	body := `{"batch":[{"event_name":"$pageview","distinct_id":"user_42","url":"https://shop.example.com/pricing","properties":{"plan":"pro"}}]}`
	req := []byte("POST /e HTTP/1.1\r\nHost: bench\r\nContent-Type: text/plain;charset=UTF-8\r\nX-API-Key: " + key +
		"\r\nUser-Agent: Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36" +
		"\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body)
	br := bufio.NewReader(conn)
	want := []byte("HTTP/1.1 202")
	roundTrip := func() {
		if _, err := conn.Write(req); err != nil {
			b.Fatal(err)
		}
		// The answer: a status line, headers with a Content-Length, a
		// body; read without allocating.
		n := -1
		for first := true; ; first = false {
			line, err := br.ReadSlice('\n')
			if err != nil {
				b.Fatal(err)
			}
			if first && !bytes.HasPrefix(line, want) {
				b.Fatalf("answer %q", line)
			}
			if v, ok := bytes.CutPrefix(line, []byte("Content-Length: ")); ok {
				n = 0
				for _, c := range bytes.TrimSpace(v) {
					n = n*10 + int(c-'0')
				}
			}
			if len(line) == 2 {
				break
			}
		}
		if _, err := br.Discard(n); err != nil {
			b.Fatal(err)
		}
	}
	for range 100 { // warm the pools, the key cache and the UA cache
		roundTrip()
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		roundTrip()
	}
}
