package httpapi

import (
	"encoding/json"
	"io"
	"log/slog"
	"testing"

	"github.com/valyala/fasthttp"
)

func TestHostSet(t *testing.T) {
	set := newHostSet([]string{"analytics.example.com", "127.0.0.1", "::1", "LocalHost"})
	for _, c := range []struct {
		host string
		want bool
	}{
		{"analytics.example.com", true},
		{"analytics.example.com:443", true},
		{"Analytics.Example.COM:8080", true},
		{"analytics.example.com.", true},
		{"analytics.example.com.:80", true},
		{"127.0.0.1:8080", true},
		{"[::1]:8080", true},
		{"[::1]", true},
		{"localhost:3000", true},
		{"rebind.attacker.example", false},
		{"rebind.attacker.example:8080", false},
		{"analytics.example.com.attacker.example", false},
		{"example.com", false},
		{"127.0.0.2:8080", false},
		{"[::2]:8080", false},
		{"", false},
		{":8080", false},
	} {
		if got := set.allows([]byte(c.host)); got != c.want {
			t.Errorf("allows(%q) = %v, want %v", c.host, got, c.want)
		}
	}
	if newHostSet(nil) != nil {
		t.Error("no names must mean no check")
	}
}

// TestHostSetAllocatesNothing checks that the host check does not
// allocate: it runs before every request, /e's included.
func TestHostSetAllocatesNothing(t *testing.T) {
	set := newHostSet([]string{"analytics.example.com"})
	for _, host := range []string{"analytics.example.com:443", "Analytics.Example.com", "rebind.attacker.example"} {
		b := []byte(host)
		if n := testing.AllocsPerRun(100, func() { set.allows(b) }); n != 0 {
			t.Errorf("allows(%q) allocates %v times", host, n)
		}
	}
}

// TestHandlerRefusesUnknownHosts checks the check's place: before routing,
// for the paths served on fasthttp directly and for those behind the
// net/http route table alike.
func TestHandlerRefusesUnknownHosts(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	s := &Server{Ready: func() error { return nil }, Log: log, Bodies: NewBodyBudget(1<<20, log)}
	serve := func(h fasthttp.RequestHandler, method, path, host string) *fasthttp.Response {
		var ctx fasthttp.RequestCtx
		ctx.Request.Header.SetMethod(method)
		ctx.Request.SetRequestURI(path)
		ctx.Request.Header.SetHost(host)
		h(&ctx)
		var res fasthttp.Response
		ctx.Response.CopyTo(&res)
		return &res
	}
	open := s.Handler()
	s.AllowedHosts = []string{"analytics.example.com"}
	strict := s.Handler()
	for _, c := range []struct{ method, path string }{{"GET", "/healthz"}, {"OPTIONS", "/e"}, {"POST", "/e"}, {"GET", "/"}, {"POST", "/api/v1/dashboard/setup"}} {
		res := serve(strict, c.method, c.path, "rebind.attacker.example:8080")
		var body struct {
			Error struct{ Code, Message string }
		}
		json.Unmarshal(res.Body(), &body)
		if res.StatusCode() != 421 || body.Error.Code != "unknown_host" || body.Error.Message == "" {
			t.Errorf("%s %s for another host: %d %s; want 421 unknown_host", c.method, c.path, res.StatusCode(), res.Body())
		}
		if want := c.path == "/e"; (string(res.Header.Peek("Access-Control-Allow-Origin")) == "*") != want {
			t.Errorf("%s %s: CORS header %q", c.method, c.path, res.Header.Peek("Access-Control-Allow-Origin"))
		}
	}
	for _, c := range []struct{ method, path string }{{"GET", "/healthz"}, {"OPTIONS", "/e"}} {
		if res := serve(strict, c.method, c.path, "analytics.example.com"); res.StatusCode() >= 300 {
			t.Errorf("%s %s for a listed host: %d %s", c.method, c.path, res.StatusCode(), res.Body())
		}
		if res := serve(open, c.method, c.path, "rebind.attacker.example"); res.StatusCode() >= 300 {
			t.Errorf("%s %s without --allowed-hosts: %d %s", c.method, c.path, res.StatusCode(), res.Body())
		}
	}
}
