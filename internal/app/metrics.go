package app

import (
	"log/slog"
	"net"
	"net/http"
	"syscall"
	"time"

	"strata/internal/metrics"
	"strata/internal/query"
	"strata/internal/ratelimit"
	"strata/internal/store/spool"
)

// countedCache is a cache whose hits and misses the metrics report.
type countedCache struct {
	name  string
	stats func() (hits, misses uint64)
}

// namedLimiter is a rate limiter whose refusals the metrics report.
type namedLimiter struct {
	name string
	l    *ratelimit.Limiter
}

// registerMetrics adds to m what other parts count themselves, read at each
// scrape: the spool's backlog, the data directory's disk, the query
// admission, the limiters' refusals and the caches' hits and misses
// (docs/operations.md, "Monitoring").
func registerMetrics(m *metrics.Metrics, dataDir string, sp *spool.Store, adm *query.Admission,
	limiters []namedLimiter, caches []countedCache) {
	if sp != nil {
		m.GaugeFunc("strata_spool_backlog_events", "Events in the spool not yet loaded into the database.",
			func() float64 { n, _ := sp.Backlog(); return float64(n) })
		m.GaugeFunc("strata_spool_backlog_bytes", "Bytes of the spool's records not yet loaded into the database.",
			func() float64 { _, b := sp.Backlog(); return float64(b) })
	}
	m.GaugeFunc("strata_data_disk_free_bytes", "Bytes free to the server on the data directory's filesystem.",
		func() float64 { free, _ := diskSpace(dataDir); return float64(free) })
	m.GaugeFunc("strata_data_disk_size_bytes", "Size of the data directory's filesystem in bytes.",
		func() float64 { _, size := diskSpace(dataDir); return float64(size) })
	m.GaugeFunc("strata_query_running", "Queries holding an admission slot.",
		func() float64 { r, _ := adm.Load(); return float64(r) })
	m.GaugeFunc("strata_query_queue_length", "Queries waiting in the admission queue for a slot.",
		func() float64 { _, w := adm.Load(); return float64(w) })
	m.CounterFunc("strata_query_refused_total", "Queries refused with 503 server_busy: the queue was full or the wait too long.",
		nil, func() float64 { return float64(adm.Refused()) })
	for _, l := range limiters {
		m.CounterFunc("strata_rate_limited_total", "Requests refused with 429 by each rate limiter.",
			map[string]string{"limiter": l.name}, func() float64 { return float64(l.l.Refused()) })
	}
	for _, c := range caches {
		m.CounterFunc("strata_cache_requests_total", "Lookups of each in-memory cache: hit (answered from memory) or miss (read from the store).",
			map[string]string{"cache": c.name, "result": "hit"}, func() float64 { h, _ := c.stats(); return float64(h) })
		m.CounterFunc("strata_cache_requests_total", "Lookups of each in-memory cache: hit (answered from memory) or miss (read from the store).",
			map[string]string{"cache": c.name, "result": "miss"}, func() float64 { _, mi := c.stats(); return float64(mi) })
	}
}

// diskSpace is what is free to the server, and the size, of dir's
// filesystem; zeros when it cannot be read.
func diskSpace(dir string) (free, size uint64) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, 0
	}
	return st.Bavail * uint64(st.Bsize), st.Blocks * uint64(st.Bsize)
}

// serveMetrics serves the metrics at /metrics on their own address, and
// nothing else there, as the debug address serves only the profiles.
func serveMetrics(ln net.Listener, m *metrics.Metrics, log *slog.Logger) {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", m.Handler())
	log.Info("metrics server listening", "addr", ln.Addr().String())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	if err := srv.Serve(ln); err != nil {
		log.Warn("metrics server stopped", "err", err)
	}
}
