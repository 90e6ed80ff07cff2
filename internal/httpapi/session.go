package httpapi

import (
	"errors"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"strata/internal/analytics"
	"strata/internal/auth"
	"strata/internal/enrich/geo"
)

// The dashboard's sign-in: first-run setup, sign-in and sign-out, and the
// cookie session that lets the dashboard call the same /api/v1 handlers as
// bearer credentials do (docs/dashboard.md).
//
// The cookie is HttpOnly (scripts cannot read it), SameSite=Lax (other
// sites' subrequests do not carry it) and Secure when the request came over
// HTTPS. On top of SameSite, every state-changing request signed by the
// cookie, and every sign-in, setup and sign-out, must carry an Origin
// header naming this server's host: a cross-site form or a sibling
// subdomain cannot make the browser act for its user.

// sessionCookie is the name of the session cookie.
const sessionCookie = "strata_session"

// maxAuthBody bounds the bodies of setup and sign-in.
const maxAuthBody = 64 << 10

var (
	errBadOrigin = analytics.Errorf(analytics.KindForbidden, "bad_origin",
		"The request's Origin header is missing or names another site; the dashboard's changes must come from the dashboard's own origin.")
	errNoProduct = analytics.Errorf(analytics.KindInvalid, "invalid_request",
		"product: is required when signed in with a session cookie; name the product with ?product=ID")
)

// credentials is the body of setup and sign-in.
type credentials struct {
	Email    string `json:"email"`
	Password string `json:"password"`
}

// setupRequest is the body of first-run setup: the owner's credentials and
// the setup token the server printed when it started.
type setupRequest struct {
	SetupToken string `json:"setupToken"`
	credentials
}

// sessionResponse is the body that answers setup, sign-in and GET
// /api/v1/session.
type sessionResponse struct {
	User      analytics.User `json:"user"`
	ExpiresAt time.Time      `json:"expiresAt"`
	// Memberships are the user's workspaces and roles there, by which
	// the dashboard hides what the role may not do (the server refuses it
	// anyway).
	Memberships []analytics.Membership `json:"memberships"`
}

// sessionBody is the answer of a signed-in user's session.
func (s *Server) sessionBody(r *http.Request, u analytics.User, sess analytics.Session) (sessionResponse, error) {
	ms, err := s.Accounts.Memberships(r.Context(), u.ID)
	if ms == nil {
		ms = []analytics.Membership{}
	}
	return sessionResponse{User: u, ExpiresAt: sess.ExpiresAt, Memberships: ms}, err
}

// startSession ends every way of signing in (first-run setup, sign-in,
// accepting an invite): the cookie of the new session, and its body.
func (s *Server) startSession(w http.ResponseWriter, r *http.Request, status int, signed auth.Signed) error {
	setSessionCookie(w, r, signed.Token, signed.Session.ExpiresAt, s.Now())
	resp, err := s.sessionBody(r, signed.User, signed.Session)
	if err != nil {
		return err
	}
	writeJSON(w, status, resp)
	return nil
}

// handleDashboardConfig is GET /api/v1/dashboard/config: what the
// dashboard needs before anyone signs in.
func (s *Server) handleDashboardConfig(w http.ResponseWriter, r *http.Request) error {
	done, err := s.Accounts.SetupDone(r.Context())
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, map[string]any{
		"setupRequired":  !done,
		"features":       map[string]bool{"errorTracking": s.ErrorTracking},
		"geoAttribution": s.GeoAttribution,
	})
	return nil
}

// handleSetup is POST /api/v1/dashboard/setup: it creates the owner of a
// fresh data directory and signs them in. Besides the Origin check it needs
// the setup token the server printed at start (auth.Accounts.Setup says in
// which order it checks what): the Origin check alone cannot stop a page
// that reached the server through DNS rebinding, whose Origin and Host are
// both the attacker's name.
func (s *Server) handleSetup(w http.ResponseWriter, r *http.Request) error {
	if err := checkOrigin(r); err != nil {
		return err
	}
	var in setupRequest
	if err := decodeBody(w, r, maxAuthBody, &in); err != nil {
		return err
	}
	signed, err := s.Accounts.Setup(r.Context(), in.SetupToken, in.Email, in.Password)
	if errors.Is(err, auth.ErrBadSetupToken) {
		// Worth the operator's eye: a person who lost the address, or a
		// page trying to claim the server (the Host shows which).
		s.Log.WarnContext(r.Context(), "first-run setup refused: missing or wrong setup token", "addr", s.requestAddr(r), "host", r.Host)
	}
	if err != nil {
		return err
	}
	s.Log.InfoContext(r.Context(), "dashboard owner created", "user", signed.User.ID)
	return s.startSession(w, r, http.StatusCreated, signed)
}

// handleLogin is POST /api/v1/session: sign in with email and password.
func (s *Server) handleLogin(w http.ResponseWriter, r *http.Request) error {
	if err := checkOrigin(r); err != nil {
		return err
	}
	var in credentials
	if err := decodeBody(w, r, maxAuthBody, &in); err != nil {
		return err
	}
	signed, err := s.Accounts.Login(r.Context(), in.Email, in.Password, s.requestAddr(r))
	if err != nil {
		if errors.Is(err, auth.ErrBadLogin) {
			s.Log.InfoContext(r.Context(), "dashboard sign-in refused", "addr", s.requestAddr(r))
		}
		return err
	}
	return s.startSession(w, r, http.StatusOK, signed)
}

// handleSession is GET /api/v1/session: who is signed in. It also renews
// the cookie, so that the browser keeps it as long as the server keeps the
// sliding session; the dashboard calls it on every load.
func (s *Server) handleSession(w http.ResponseWriter, r *http.Request) error {
	token, u, sess, err := s.signedIn(r)
	if err != nil {
		return err
	}
	setSessionCookie(w, r, token, sess.ExpiresAt, s.Now())
	w.Header().Set("Cache-Control", "no-store")
	resp, err := s.sessionBody(r, u, sess)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, resp)
	return nil
}

// handleLogout is DELETE /api/v1/session: it deletes the session on the
// server and the cookie in the browser. Without a session it still
// answers 204, so that signing out is always safe to repeat.
func (s *Server) handleLogout(w http.ResponseWriter, r *http.Request) error {
	if err := checkOrigin(r); err != nil {
		return err
	}
	if c, err := r.Cookie(sessionCookie); err == nil {
		if err := s.Accounts.Logout(r.Context(), c.Value); err != nil {
			return err
		}
	}
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: "", Path: "/", MaxAge: -1,
		HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: isHTTPS(r)})
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// signedIn authenticates the session cookie of a request and returns its
// token, user and session. A request that may change state must also come
// from this server's origin; that is checked first, so that a cross-site
// request learns nothing.
func (s *Server) signedIn(r *http.Request) (string, analytics.User, analytics.Session, error) {
	if !safeMethod(r.Method) {
		if err := checkOrigin(r); err != nil {
			return "", analytics.User{}, analytics.Session{}, err
		}
	}
	c, err := r.Cookie(sessionCookie)
	if err != nil || s.Accounts == nil {
		return "", analytics.User{}, analytics.Session{}, auth.ErrNotSignedIn
	}
	u, sess, err := s.Accounts.Authenticate(r.Context(), c.Value)
	return c.Value, u, sess, err
}

// sessionPrincipal is the principal of a request signed by a session
// cookie: the product named by ?product=, which must belong to one of the
// signed-in user's workspaces.
func (s *Server) sessionPrincipal(r *http.Request) (auth.Principal, error) {
	_, u, _, err := s.signedIn(r)
	if err != nil {
		return auth.Principal{}, err
	}
	raw := r.URL.Query().Get("product")
	if raw == "" {
		return auth.Principal{}, errNoProduct
	}
	id, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || id < 1 {
		return auth.Principal{}, analytics.Errorf(analytics.KindInvalid, "invalid_request", "product: must be a product id, not %q", raw)
	}
	p, err := s.userProduct(r, u.ID, id)
	if err != nil {
		return auth.Principal{}, err
	}
	return auth.Principal{ProductID: p.ID, UserID: u.ID, Email: u.Email}, nil
}

// userProduct returns product id when it belongs to one of the user's
// workspaces and the user's role there allows the route (authorize).
// Another workspace's product is 404 like a missing one, so that ids
// reveal nothing.
func (s *Server) userProduct(r *http.Request, userID, id int64) (analytics.Product, error) {
	ms, err := s.Accounts.Memberships(r.Context(), userID)
	if err != nil {
		return analytics.Product{}, err
	}
	notFound := analytics.Errorf(analytics.KindNotFound, "product_not_found", "There is no product %d.", id)
	p, err := s.Admin.Meta.Product(r.Context(), id)
	if errors.Is(err, analytics.ErrNotFound) {
		return analytics.Product{}, notFound
	} else if err != nil {
		return p, err
	}
	return p, authorize(r, ms, p.WorkspaceID, notFound)
}

// setSessionCookie sends the session cookie, to last as long as the
// session does on the server.
func setSessionCookie(w http.ResponseWriter, r *http.Request, token string, expires, now time.Time) {
	http.SetCookie(w, &http.Cookie{
		Name: sessionCookie, Value: token, Path: "/",
		Expires: expires, MaxAge: max(1, int(expires.Sub(now).Seconds())),
		HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: isHTTPS(r),
	})
}

// isHTTPS reports whether the browser reached the server over HTTPS:
// directly, or through a proxy that terminated TLS and said so. Trusting
// the header costs nothing here: a forged one only makes the cookie
// stricter.
func isHTTPS(r *http.Request) bool {
	return r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https")
}

// checkOrigin refuses a request whose Origin header is absent or names a
// host other than the one the request was sent to.
func checkOrigin(r *http.Request) error {
	o := r.Header.Get("Origin")
	if o == "" || o == "null" {
		return errBadOrigin
	}
	u, err := url.Parse(o)
	if err != nil || u.Host == "" || !strings.EqualFold(u.Host, r.Host) {
		return errBadOrigin
	}
	return nil
}

// safeMethod reports whether a method only reads.
func safeMethod(m string) bool {
	return m == http.MethodGet || m == http.MethodHead || m == http.MethodOptions
}

// requestAddr is the address a request came from, for the per-address
// budgets of sign-in and shared links: the peer's, or behind a proxy that
// --trusted-proxies names the one its X-Forwarded-For gives, by the rule
// ingest locates events with (geo.ClientAddr). Otherwise the header is not
// trusted: anyone can send it.
func (s *Server) requestAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	peer, err := netip.ParseAddr(host)
	if err != nil || len(s.TrustedProxies) == 0 {
		return host
	}
	var forwarded [][]byte
	for _, v := range r.Header.Values("X-Forwarded-For") {
		forwarded = append(forwarded, []byte(v))
	}
	if a := geo.ClientAddr(peer, forwarded, s.TrustedProxies); a.IsValid() {
		return a.String()
	}
	return host
}
