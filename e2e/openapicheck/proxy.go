package openapicheck

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync"
	"sync/atomic"
)

// MaxCheckedBody is the largest JSON body the proxy keeps a copy of to
// check. The server's JSON answers are bounded far below it; a larger one is
// passed on whole and counted as not checked rather than held in memory.
const MaxCheckedBody = 64 << 20

// Violation is one response the document does not allow, as the proxy
// reports it.
type Violation struct {
	Method string `json:"method"`
	Path   string `json:"path"`
	Status int    `json:"status"`
	Error  string `json:"error"`
}

// Proxy is a reverse proxy to one strata server that checks every response
// it passes on against the document and reports each mismatch. It changes
// nothing a client sees: the request keeps its Host and X-Forwarded-*
// headers (so that origin checks, CORS and the addresses the server builds
// from the Host are those of the proxy's address), the response keeps its
// headers (CORS included) and encoding, and bodies are streamed, flushed
// as they arrive, so that a CSV export or a replay chunk reaches the client
// as the server sends it. Only a JSON body is copied aside, to be checked
// once it is complete; other bodies are checked for their status, headers
// and Content-Type.
type Proxy struct {
	checker *Checker
	report  func(Violation)
	rp      *httputil.ReverseProxy

	counts struct {
		checked, described, schema, unchecked atomic.Int64
	}
}

// Counts are the figures a proxy reports when it stops.
type Counts struct {
	// Checked responses, of which Described came from an operation of the
	// document (the rest are the dashboard's pages and assets, and answers
	// to paths the document leaves out), and Schema had a JSON body
	// validated against a schema.
	Checked, Described, Schema int64
	// Unchecked are JSON responses passed on without a check because
	// their body was cut short or over MaxCheckedBody.
	Unchecked int64
}

// NewProxy returns a proxy to target (scheme and host) that checks
// responses with c and calls report, from any goroutine, for each one the
// document does not allow.
func NewProxy(target *url.URL, c *Checker, report func(Violation)) *Proxy {
	p := &Proxy{checker: c, report: report}
	p.rp = &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			pr.Out.Host = pr.In.Host
			// Rewrite starts from a request without the X-Forwarded
			// headers; the client's go on as they were sent, since the
			// proxy is not a hop the server should know of.
			for _, h := range []string{"X-Forwarded-For", "X-Forwarded-Host", "X-Forwarded-Proto"} {
				if v, ok := pr.In.Header[h]; ok {
					pr.Out.Header[h] = v
				}
			}
		},
		// Without compression of its own, the transport neither asks for
		// gzip nor undoes it: the client gets the encoding it asked for.
		Transport:      &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 32},
		FlushInterval:  -1,
		ModifyResponse: p.check,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			// The server is gone (a suite stops it to test what clients do
			// then): the proxy's own answer is not the server's, so it is
			// not checked.
			http.Error(w, fmt.Sprintf("openapi-proxy: %v", err), http.StatusBadGateway)
		},
	}
	return p
}

// ServeHTTP passes the request to the server and its response back.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) { p.rp.ServeHTTP(w, r) }

// Counts returns how many responses the proxy checked so far, and how.
func (p *Proxy) Counts() Counts {
	return Counts{
		Checked:   p.counts.checked.Load(),
		Described: p.counts.described.Load(),
		Schema:    p.counts.schema.Load(),
		Unchecked: p.counts.unchecked.Load(),
	}
}

// check runs as the response arrives: a body that is not JSON (or the
// answer to HEAD) is checked now, without it; a JSON body is wrapped so that
// it is checked when the client has been handed its last byte.
func (p *Proxy) check(resp *http.Response) error {
	req := Request(resp.Request)
	if !IsJSON(resp.Header.Get("Content-Type")) || req.Method == http.MethodHead {
		p.finish(req, resp.StatusCode, resp.Header, nil)
		return nil
	}
	resp.Body = &teeBody{rc: resp.Body, done: func(body []byte, complete bool) {
		if !complete {
			p.counts.unchecked.Add(1)
			return
		}
		if resp.Header.Get("Content-Encoding") == "gzip" {
			plain, err := gunzip(body)
			if err != nil {
				p.counts.checked.Add(1)
				p.report(Violation{req.Method, req.URL.Path, resp.StatusCode, "the gzipped body does not decompress: " + err.Error()})
				return
			}
			if plain == nil {
				p.counts.unchecked.Add(1)
				return
			}
			body = plain
		}
		p.finish(req, resp.StatusCode, resp.Header, body)
	}}
	return nil
}

// finish checks one whole response and reports it if it does not match.
func (p *Proxy) finish(req *http.Request, status int, header http.Header, body []byte) {
	res, err := p.checker.Inspect(req, status, header, body)
	p.counts.checked.Add(1)
	if res.Operation != "" {
		p.counts.described.Add(1)
	}
	if res.Schema {
		p.counts.schema.Add(1)
	}
	if err != nil {
		p.report(Violation{req.Method, req.URL.Path, status, err.Error()})
	}
}

// gunzip decompresses body, or returns nil when it decompresses to more
// than MaxCheckedBody.
func gunzip(body []byte) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	plain, err := io.ReadAll(io.LimitReader(zr, MaxCheckedBody+1))
	if err != nil {
		return nil, err
	}
	if len(plain) > MaxCheckedBody {
		return nil, nil
	}
	return plain, nil
}

// teeBody hands the body on as it is read and keeps a copy of up to
// MaxCheckedBody bytes; done is called once, with complete true when the
// whole body was read and kept, false when it was closed early, failed or
// was too large.
type teeBody struct {
	rc   io.ReadCloser
	buf  bytes.Buffer
	over bool
	once sync.Once
	done func(body []byte, complete bool)
}

func (b *teeBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if !b.over {
		if b.buf.Len()+n > MaxCheckedBody {
			b.over = true
			b.buf = bytes.Buffer{}
		} else {
			b.buf.Write(p[:n])
		}
	}
	switch {
	case errors.Is(err, io.EOF):
		b.once.Do(func() { b.done(b.buf.Bytes(), !b.over) })
	case err != nil:
		b.once.Do(func() { b.done(nil, false) })
	}
	return n, err
}

func (b *teeBody) Close() error {
	b.once.Do(func() { b.done(nil, false) })
	return b.rc.Close()
}
