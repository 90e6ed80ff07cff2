package httpapi

import (
	"bytes"
	"strings"

	"github.com/valyala/fasthttp"

	"strata/internal/analytics"
)

// The allowed-hosts check (--allowed-hosts, docs/security.md). DNS
// rebinding points a name the attacker owns at this server's address, so
// that the attacker's page, loaded from that name, may call the server as
// its own origin: the browser sends Host and Origin of the attacker's name,
// and the Origin check passes. Answering only to the names the operator
// lists shuts that out for every path at once. Only the host name is
// compared, not the port: the attacker controls the name, not the port the
// browser connects to, and behind a proxy the port the client used
// (443, 8443 …) is not the one the server listens on.

// hostSet is the set of allowed host names, in ParseHosts' spelling (lower
// case, no trailing dot, IPv6 without brackets). A nil set allows every
// host: the check is off.
type hostSet map[string]struct{}

// newHostSet returns the set of names, nil when there are none.
func newHostSet(names []string) hostSet {
	if len(names) == 0 {
		return nil
	}
	set := make(hostSet, len(names))
	for _, n := range names {
		set[strings.ToLower(string(hostName([]byte(n))))] = struct{}{}
	}
	return set
}

// allows reports whether a request's Host (with or without a port) names
// one of the set's hosts. It runs before every request, /e included, so it
// does not allocate: fasthttp has already lower-cased the host, so the
// first lookup is the one that answers, and the second, on a copy in a
// stack buffer, is only a safeguard.
func (h hostSet) allows(host []byte) bool {
	name := hostName(host)
	if _, ok := h[string(name)]; ok {
		return true
	}
	var buf [256]byte
	if len(name) > len(buf) {
		return false
	}
	lower := buf[:len(name)]
	for i, c := range name {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		lower[i] = c
	}
	_, ok := h[string(lower)]
	return ok
}

// hostName is the name part of a Host header: without the port, the
// brackets of an IPv6 address, or a trailing dot (which names the same
// host).
func hostName(host []byte) []byte {
	if len(host) > 0 && host[0] == '[' {
		if end := bytes.IndexByte(host, ']'); end > 0 {
			return host[1:end]
		}
		return host
	}
	if i := bytes.LastIndexByte(host, ':'); i >= 0 && bytes.IndexByte(host, ':') == i {
		host = host[:i]
	}
	return bytes.TrimSuffix(host, []byte("."))
}

// errUnknownHost answers a request for a host name that is not allowed.
// The message does not list the allowed names: a stranger needs none.
var errUnknownHost = analytics.Errorf(analytics.KindMisdirected, "unknown_host",
	"This server does not answer to the host name in the request. If you run it, add the name to --allowed-hosts (STRATA_ALLOWED_HOSTS).")

// refuseHost answers a request for a host that is not allowed: 421
// Misdirected Request, in the API's error format. On /e the answer carries
// the CORS headers, so that a browser's console shows the 421 and not a
// CORS failure when an operator forgot to list the name the SDK uses.
func refuseHost(ctx *fasthttp.RequestCtx) {
	if string(ctx.Path()) == "/e" {
		setFastCORS(&ctx.Response.Header)
	}
	status, body := errorJSON(errUnknownHost)
	writeFastJSON(ctx, status, body)
}
