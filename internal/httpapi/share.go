package httpapi

import (
	"context"
	"errors"
	"hash/fnv"
	"net/http"
	"net/url"
	"strings"
	"time"

	"strata/internal/analytics"
	"strata/internal/auth"
	"strata/internal/boards"
	"strata/internal/ratelimit"
	"strata/internal/sharing"
)

// Shared links (docs/dashboard.md, "Shared links"; docs/security.md,
// "Shared links"): a product's settings create, list and revoke them; the
// public view is GET /share/{secret}, the dashboard in its read-only
// shared mode, which reads through /share/{secret}/api/…. The share
// credential is the secret in that path, and it is accepted there only:
// the share dispatcher (handleShareAPI) answers the routes of shareRoutes
// and nothing else, and it is the only place that gives a request a share
// principal. Every other route never sees one, so a route added to the
// table later refuses shared links by default.

// shareCookie is the name of the cookie that proves a link's password was
// entered. It is scoped to the link's own path, /share/{secret}/.
const shareCookie = "strata_share"

// ShareLimits are the budgets of the public share paths, one bucket per
// link and one per client address for each (the buckets are this node's).
type ShareLimits struct {
	// Reads and ReadsPerMinute bound the view's reads (the page itself
	// and every API call through a link).
	Reads, ReadAddrs *ratelimit.Limiter
	ReadsPerMinute   int
	// Passwords and PasswordsPerMinute bound the password checks, so that
	// a link's password cannot be guessed by brute force.
	Passwords, PasswordAddrs *ratelimit.Limiter
	PasswordsPerMinute       int
}

// shareRoutes is the allowlist: the reads the Overview makes
// (dashboard/src/pages/Overview.tsx and its cards), by method and path
// under /share/{secret}. A link reaches these and nothing else; the query
// routes also hold a link to sharing.CheckTrend, CheckRetention,
// CheckSessions and CheckGoals, and
// the event names are cut to sharing.Events. A card added to the Overview
// that reads another route must add it here, with its own check if it
// takes a query.
func (s *Server) shareRoutes() map[string]handlerFunc {
	return map[string]handlerFunc{
		"POST /api/v1/query/trend":     s.queryHandler(analytics.QueryTrend),
		"POST /api/v1/query/retention": s.queryHandler(analytics.QueryRetention),
		"POST /api/v1/query/sessions":  s.handleSessions,
		"POST /api/v1/query/goals":     s.handleGoalsQuery,
		"GET /api/v1/query/live":       s.handleLive,
		"GET /api/v1/query/events":     s.handleEventNames,
		"GET /api/v1/annotations":      s.handleListAnnotations,
	}
}

// boardShareRoutes are a board's link's own routes, with {id} its board
// (boards.go, boardShareRoute): the board and its tiles' runs. A board's
// link reaches no route of shareRoutes unless the board shows an Overview
// card, and an Overview link reaches none of these.
func (s *Server) boardShareRoutes() map[string]handlerFunc {
	return map[string]handlerFunc{
		"GET /api/v1/boards/{id}":                     s.handleGetBoard,
		"POST /api/v1/boards/{id}/tiles/{tileId}/run": s.handleRunTile,
	}
}

// ShareAllowlist lists the routes a shared link reaches, "METHOD /path",
// for the docs and the tests.
func (s *Server) ShareAllowlist() []string {
	var out []string
	for k := range s.shareRoutes() {
		out = append(out, k)
	}
	return out
}

// sharePrincipalKey marks, in a request's context, the principal of the
// shared link the share dispatcher admitted the request for.
type sharePrincipalKey struct{}

// sharePrincipal returns the shared link's principal of a request the
// share dispatcher admitted.
func sharePrincipal(r *http.Request) (auth.Principal, bool) {
	p, ok := r.Context().Value(sharePrincipalKey{}).(auth.Principal)
	return p, ok
}

// handleListSharedLinks is GET /api/v1/products/{id}/shared-links.
func (s *Server) handleListSharedLinks(w http.ResponseWriter, r *http.Request) error {
	p, err := s.settingsProduct(r)
	if err != nil {
		return err
	}
	links, err := s.SharedLinks.List(r.Context(), p.ID)
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	writeItems(w, links)
	return nil
}

// handleCreateSharedLink is POST /api/v1/products/{id}/shared-links. The
// answer carries the link's URL with its secret, which is never shown
// again.
func (s *Server) handleCreateSharedLink(w http.ResponseWriter, r *http.Request) error {
	_, u, _, err := s.signedIn(r)
	if err != nil {
		return err
	}
	id, err := pathID(r, "id")
	if err != nil {
		return analytics.Errorf(analytics.KindNotFound, "product_not_found", "There is no such product.")
	}
	p, err := s.userProduct(r, u.ID, id)
	if err != nil {
		return err
	}
	var in struct {
		Name     string `json:"name"`
		Password string `json:"password"`
		// BoardID makes a link to that board of the product instead of
		// the Overview (docs/dashboard.md, "Dashboards").
		BoardID int64 `json:"boardId"`
	}
	if err := decodeBody(w, r, maxSettingsBody, &in); err != nil {
		return err
	}
	if in.BoardID < 0 {
		return boards.ErrNotFound
	}
	c, err := s.SharedLinks.CreateForBoard(r.Context(), p.ID, in.BoardID, in.Name, in.Password, u.Email)
	if errors.Is(err, analytics.ErrNotFound) {
		return boards.ErrNotFound
	}
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusCreated, map[string]any{"link": c.Link, "secret": c.Secret, "url": s.shareURL(r, c.Secret)})
	return nil
}

// shareURL is the public URL of a link (publicBase).
func (s *Server) shareURL(r *http.Request, secret string) string {
	return s.publicBase(r) + "/share/" + secret
}

// publicBase is where the links the server hands out start: --public-url
// when set, else the scheme and host the request came to.
func (s *Server) publicBase(r *http.Request) string {
	if base := strings.TrimRight(s.PublicURL, "/"); base != "" {
		return base
	}
	scheme := "http"
	if isHTTPS(r) {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// handleRevokeSharedLink is DELETE /api/v1/products/{id}/shared-links/{linkId}.
func (s *Server) handleRevokeSharedLink(w http.ResponseWriter, r *http.Request) error {
	p, err := s.settingsProduct(r)
	if err != nil {
		return err
	}
	id, err := pathID(r, "linkId")
	if err != nil {
		return sharing.ErrNotFound
	}
	if err := s.SharedLinks.Revoke(r.Context(), p.ID, id); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// handleSharePage is GET /share/{secret}: the dashboard's page, which runs
// in its shared mode there. An unknown or revoked link still gets the page
// (with 404), which asks the API and says which it is.
func (s *Server) handleSharePage(w http.ResponseWriter, r *http.Request) error {
	if err := s.allowShareRead(r, 0); err != nil {
		return err
	}
	status := http.StatusOK
	if _, err := s.SharedLinks.Open(r.Context(), r.PathValue("secret")); err != nil {
		var e *analytics.Error
		if !errors.As(err, &e) || e.Kind != analytics.KindNotFound {
			return err
		}
		status = http.StatusNotFound
	}
	if s.Pages == nil {
		return errNotFound
	}
	page := r.Clone(r.Context())
	page.URL = &url.URL{Path: "/"}
	page.Header.Del("If-None-Match")
	page.Header.Del("If-Modified-Since")
	s.Pages.ServePage(&sharePageWriter{ResponseWriter: w, status: status}, page)
	return nil
}

// sharePageWriter serves the dashboard's page with the share headers,
// which replace the page's own caching and referrer headers, and with
// status instead of the one written.
type sharePageWriter struct {
	http.ResponseWriter
	status      int
	wroteHeader bool
}

func (w *sharePageWriter) WriteHeader(int) {
	if w.wroteHeader {
		return
	}
	w.wroteHeader = true
	shareHeaders(w.ResponseWriter)
	w.Header().Del("ETag")
	w.ResponseWriter.WriteHeader(w.status)
}

func (w *sharePageWriter) Write(b []byte) (int, error) {
	w.WriteHeader(w.status)
	return w.ResponseWriter.Write(b)
}

// shareHeaders are the headers of every answer under /share: never cached
// (a revoked link must stop at once), never indexed, and the secret in the
// URL is never sent on as a Referer.
func shareHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Robots-Tag", "noindex, nofollow")
}

// shareInfo is the answer of GET /share/{secret}/api/v1/share: what the
// shared view shows before it reads anything.
type shareInfo struct {
	Name        string `json:"name"`
	ProductID   int64  `json:"productId"`
	ProductName string `json:"productName"`
	// TimeZone is the product's zone, which the view's dates and presets
	// follow as the dashboard's do (docs/queries.md, "Time zones").
	TimeZone    string `json:"timeZone"`
	HasPassword bool   `json:"hasPassword"`
	Unlocked    bool   `json:"unlocked"`
	// BoardID is the board a board's link shows (docs/dashboard.md,
	// "Dashboards"); absent, the link shows the Overview.
	BoardID int64 `json:"boardId,omitempty"`
}

// handleShareAPI serves every path under /share/{secret}/: the link's
// own two (its description, and the password check), and the allowlisted
// reads of shareRoutes, which it calls with the link's principal and
// nothing else of the request's credentials. Anything else is 403
// not_shared.
func (s *Server) handleShareAPI(w http.ResponseWriter, r *http.Request) error {
	secret := r.PathValue("secret")
	rest := strings.TrimPrefix(r.URL.Path, "/share/"+secret)
	shareHeaders(w)
	if err := s.allowShareRead(r, 0); err != nil {
		return err
	}
	link, err := s.SharedLinks.Open(r.Context(), secret)
	if err != nil {
		return err
	}
	if err := s.allowShareRead(r, link.ID); err != nil {
		return err
	}
	route := r.Method + " " + rest
	switch route {
	case "POST /api/v1/share/unlock":
		return s.unlockShare(w, r, link, secret)
	case "GET /api/v1/share":
		prod, err := s.Products.Product(r.Context(), link.ProductID)
		if err != nil {
			return err
		}
		info := shareInfo{Name: link.Name, ProductID: prod.ID, ProductName: prod.Name, TimeZone: prod.TimeZone, HasPassword: link.HasPassword, BoardID: link.BoardID}
		info.Unlocked = s.SharedLinks.Admit(link, shareGrant(r)) == nil
		writeJSON(w, http.StatusOK, info)
		return nil
	}
	h, ok := s.shareRoutes()[route]
	var values map[string]string
	if link.BoardID != 0 {
		// A board's link reaches its board only (boards.go).
		h, values = s.boardShareRoute(r, link, route)
		ok = h != nil
	}
	if !ok {
		return errNotShared
	}
	if err := s.SharedLinks.Admit(link, shareGrant(r)); err != nil {
		return err
	}
	// The handler sees the path it was written for, the link's product
	// and live data, and none of the request's own credentials.
	inner := r.Clone(context.WithValue(r.Context(), sharePrincipalKey{},
		auth.Principal{ProductID: link.ProductID, ShareID: link.ID, Prefix: link.Prefix}))
	inner.Header.Del("Authorization")
	inner.Header.Del("Cookie")
	q := inner.URL.Query()
	q.Del("env")
	q.Del("product")
	u := *r.URL
	u.Path, u.RawPath, u.RawQuery = rest, "", q.Encode()
	inner.URL = &u
	for k, v := range values {
		inner.SetPathValue(k, v)
	}
	return h(w, inner)
}

var errNotShared = analytics.Errorf(analytics.KindForbidden, "not_shared",
	"A shared link reaches only the Overview's reads; this path needs a query token or the dashboard.")

// shareGrant is the password grant the request's cookie carries, "" when
// none.
func shareGrant(r *http.Request) string {
	if c, err := r.Cookie(shareCookie); err == nil {
		return c.Value
	}
	return ""
}

// unlockShare is POST /share/{secret}/api/v1/share/unlock: it checks the
// link's password, under the password budgets of the link and of the
// client's address, and answers the grant in a cookie that is HttpOnly
// (scripts cannot read it), scoped to this link's path, SameSite=Strict
// (the view's own requests are same-site; no other site's request needs
// it) and Secure over HTTPS, for sharing.GrantTTL.
func (s *Server) unlockShare(w http.ResponseWriter, r *http.Request, link analytics.SharedLink, secret string) error {
	if err := checkOrigin(r); err != nil {
		return err
	}
	if err := s.allowPasswordCheck(r, link.ID); err != nil {
		return err
	}
	var in struct {
		Password string `json:"password"`
	}
	if err := decodeBody(w, r, maxAuthBody, &in); err != nil {
		return err
	}
	grant, expires, err := s.SharedLinks.Unlock(link, in.Password)
	if err != nil {
		if errors.Is(err, sharing.ErrWrongPassword) {
			s.Log.InfoContext(r.Context(), "shared link password refused", "link", link.ID, "addr", s.requestAddr(r))
		}
		return err
	}
	http.SetCookie(w, &http.Cookie{Name: shareCookie, Value: grant, Path: "/share/" + secret + "/",
		Expires: expires, MaxAge: int(sharing.GrantTTL / time.Second),
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: isHTTPS(r)})
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// allowShareRead takes one read from the budget of the client's address
// (linkID 0) or of the link.
func (s *Server) allowShareRead(r *http.Request, linkID int64) error {
	l := s.Share
	if linkID == 0 {
		if ok, wait := l.ReadAddrs.Allow(s.addrBucket(r), l.ReadsPerMinute); !ok {
			return rateLimited(wait, "Too many shared-view requests from this address (at most %d a minute)", l.ReadsPerMinute)
		}
		return nil
	}
	if ok, wait := l.Reads.Allow(linkID, l.ReadsPerMinute); !ok {
		return rateLimited(wait, "Too many requests through this shared link (at most %d a minute)", l.ReadsPerMinute)
	}
	return nil
}

// allowPasswordCheck takes one password check from the budgets of the
// link and of the client's address.
func (s *Server) allowPasswordCheck(r *http.Request, linkID int64) error {
	l := s.Share
	if ok, wait := l.PasswordAddrs.Allow(s.addrBucket(r), l.PasswordsPerMinute); !ok {
		return rateLimited(wait, "Too many password attempts from this address (at most %d a minute)", l.PasswordsPerMinute)
	}
	if ok, wait := l.Passwords.Allow(linkID, l.PasswordsPerMinute); !ok {
		return rateLimited(wait, "Too many password attempts on this shared link (at most %d a minute)", l.PasswordsPerMinute)
	}
	return nil
}

// addrBucket is the rate-limit bucket of the client's address, a 63-bit
// hash (a collision only shares a budget).
func (s *Server) addrBucket(r *http.Request) int64 {
	h := fnv.New64a()
	h.Write([]byte(s.requestAddr(r)))
	return int64(h.Sum64() >> 1)
}
