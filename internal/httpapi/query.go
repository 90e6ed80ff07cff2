package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"strata/internal/analytics"
	"strata/internal/auth"
	"strata/internal/jsontext"
	"strata/internal/query"
	"strata/internal/sharing"
)

// principal authenticates the credential of an API request: the
// Authorization: Bearer credential, else the dashboard's session cookie,
// which with ?product=ID stands for the product it names when the
// signed-in user may see it (session.go). A bearer query token is accepted
// everywhere; a bearer API key only on the routes that the route table
// marks with keysMayWrite (a key is public: every visitor's browser has
// the page's key), elsewhere it is 403 key_not_allowed; and a test key,
// where a key is accepted, only from a local Origin, as in ingest.
func (s *Server) principal(r *http.Request) (auth.Principal, error) {
	if p, ok := sharePrincipal(r); ok {
		return p, nil
	}
	h := r.Header.Get("Authorization")
	if h == "" && s.Accounts != nil {
		if c, err := r.Cookie(sessionCookie); err == nil && c.Value != "" {
			return s.sessionPrincipal(r)
		}
	}
	token, ok := strings.CutPrefix(h, "Bearer ")
	if !ok && h != "" {
		return auth.Principal{}, auth.ErrMissingBearer
	}
	p, err := s.Keys.AuthenticateBearer(r.Context(), strings.TrimSpace(token))
	if err != nil || p.KeyID == 0 {
		return p, err
	}
	if !keysAllowed(r) {
		return auth.Principal{}, errKeyNotAllowed
	}
	if err := testKeyOrigin(p.KeyEnv, []byte(r.Header.Get("Origin"))); err != nil {
		return auth.Principal{}, err
	}
	return p, nil
}

var errKeyNotAllowed = analytics.Errorf(analytics.KindForbidden, "key_not_allowed",
	"API keys are public (every visitor's browser has one), so they may only create annotations; "+
		"to read or delete data, use a query token (Authorization: Bearer st_tok_…) or the dashboard.")

// keyRoute marks, in a request's context, a route an API key may call.
type keyRoute struct{}

// keysMayWrite lets API keys call a route as bearer credentials. The spec
// gives keys exactly the writes a deploy script makes, creating an
// annotation and uploading a sourcemap; every route that reads data or
// deletes it takes a query token or a dashboard session.
func keysMayWrite(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), keyRoute{}, true)))
	})
}

// keysAllowed reports whether r's route was marked with keysMayWrite.
func keysAllowed(r *http.Request) bool {
	ok, _ := r.Context().Value(keyRoute{}).(bool)
	return ok
}

// scope authenticates a query request and returns what it may read: the
// credential's product, in the environment ?env= names (live by default).
func (s *Server) scope(r *http.Request) (analytics.EventRange, error) {
	p, err := s.principal(r)
	if err != nil {
		return analytics.EventRange{}, err
	}
	return s.scopeOf(r, p)
}

// readScope is scope for a request that reads events (a funnel, trend,
// retention, the bots panel, event names, a saved query run): it also takes
// the query from the credential's budget, before the body is read, so that
// a refused request costs little.
func (s *Server) readScope(r *http.Request) (analytics.EventRange, error) {
	p, err := s.principal(r)
	if err != nil {
		return analytics.EventRange{}, err
	}
	if err := s.allowQuery(p); err != nil {
		return analytics.EventRange{}, err
	}
	return s.scopeOf(r, p)
}

// allowQuery takes one query from the budget of the credential p presented,
// or answers 429 with the wait until the next one. Each query token and
// dashboard user has its own bucket of QueryRateLimit queries a minute on
// this node (the buckets are not shared between nodes): it keeps one
// client, a script in a loop or a stuck page, from filling the query queue
// that every client of the node shares. API keys never get here: principal
// refuses them with 403 key_not_allowed on every route that reads events.
func (s *Server) allowQuery(p auth.Principal) error {
	if s.QueryLimiter == nil {
		return nil
	}
	ok, wait := s.QueryLimiter.Allow(p.Bucket(), s.QueryRateLimit)
	if ok {
		return nil
	}
	return rateLimited(wait, "Too many queries with this credential (at most %d a minute)", s.QueryRateLimit)
}

// scopeOf is the scope of principal p for request r: its product, in the
// product's time zone, which its dates and buckets follow.
func (s *Server) scopeOf(r *http.Request, p auth.Principal) (analytics.EventRange, error) {
	sc := analytics.EventRange{ProductID: p.ProductID, Env: analytics.EnvLive}
	switch env := r.URL.Query().Get("env"); env {
	case "", "live":
	case "test":
		sc.Env = analytics.EnvTest
	default:
		return sc, analytics.Errorf(analytics.KindInvalid, "invalid_request", "env: must be live or test, not %q", env)
	}
	var err error
	sc.Zone, err = s.productZone(r, p.ProductID)
	return sc, err
}

// productZone returns the time zone of a product, nil for UTC, read from
// the metadata store on each query (one row by key), so that a zone
// changed in Settings holds on every node at once.
func (s *Server) productZone(r *http.Request, productID int64) (*time.Location, error) {
	if s.Admin == nil || s.Admin.Meta == nil {
		return nil, nil
	}
	prod, err := s.Admin.Meta.Product(r.Context(), productID)
	if errors.Is(err, analytics.ErrNotFound) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	if prod.TimeZone == "" || prod.TimeZone == analytics.DefaultTimeZone {
		return nil, nil
	}
	return analytics.LoadZone(prod.TimeZone)
}

// readJSON reads a JSON request body into v with the API's one strict
// decoder (jsontext.Decode).
func readJSON(w http.ResponseWriter, r *http.Request, v any) error {
	body, err := readQueryBody(w, r)
	if err != nil {
		return err
	}
	return jsontext.Decode(body, v)
}

// readQueryBody reads a JSON request body of at most maxAPIBody bytes, for
// jsontext.Decode, which checks it. On the server, serveAdapted has read and
// limited the body already; the limit here holds the handlers to it
// wherever they are mounted.
func readQueryBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	return readLimitedBody(w, r, maxAPIBody, errAPIBodyTooLarge)
}

// readLimitedBody reads a request body of at most limit bytes; a longer
// one is tooLarge.
func readLimitedBody(w http.ResponseWriter, r *http.Request, limit int64, tooLarge error) ([]byte, error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return nil, tooLarge
	}
	if err != nil {
		return nil, analytics.Errorf(analytics.KindInvalid, "invalid_request", "body: could not be read")
	}
	return body, nil
}

// queryHandler serves the endpoint of one query kind: the body is the
// query's request.
func (s *Server) queryHandler(kind analytics.QueryKind) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		return s.serveBody(w, r, func(ctx context.Context, sc analytics.EventRange, body []byte) (any, error) {
			if _, ok := sharePrincipal(r); ok {
				if err := s.checkShared(kind, sc, body); err != nil {
					return nil, err
				}
			}
			run, err := s.Queries.Prepare(kind, sc, body)
			if err != nil {
				return nil, err
			}
			return run(ctx)
		})
	}
}

// checkShared holds a shared link's query to what the Overview asks
// (sharing.CheckTrend, CheckRetention; the sessions query's is in
// handleSessions).
func (s *Server) checkShared(kind analytics.QueryKind, sc analytics.EventRange, body []byte) error {
	switch kind {
	case analytics.QueryTrend:
		q, err := query.ParseTrend(body, sc, s.Now())
		if err != nil {
			return err
		}
		return sharing.CheckTrend(q)
	case analytics.QueryRetention:
		q, err := query.ParseRetention(body, sc, s.Now())
		if err != nil {
			return err
		}
		return sharing.CheckRetention(q)
	}
	return errNotShared
}

// serveBody serves a POST query whose body is the request, over the
// caller's product: the budget is taken before the body is read.
func (s *Server) serveBody(w http.ResponseWriter, r *http.Request,
	run func(ctx context.Context, sc analytics.EventRange, body []byte) (any, error)) error {
	sc, err := s.readScope(r)
	if err != nil {
		return err
	}
	body, err := readQueryBody(w, r)
	if err != nil {
		return err
	}
	res, err := run(r.Context(), sc, body)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}

// handleSessions is POST /api/v1/query/sessions: visits, bounce rate,
// visit duration, and entry and exit pages (docs/queries.md, "Sessions").
// It is read and budgeted as the trend endpoint is.
func (s *Server) handleSessions(w http.ResponseWriter, r *http.Request) error {
	return s.serveBody(w, r, func(ctx context.Context, sc analytics.EventRange, body []byte) (any, error) {
		if _, ok := sharePrincipal(r); ok {
			q, err := query.ParseSessions(body, sc, s.Now())
			if err != nil {
				return nil, err
			}
			if err := sharing.CheckSessions(q); err != nil {
				return nil, err
			}
		}
		return s.Queries.Sessions(ctx, sc, body)
	})
}

// handleBots is GET /api/v1/query/bots.
func (s *Server) handleBots(w http.ResponseWriter, r *http.Request) error {
	return s.serveRange(w, r, func(ctx context.Context, sc analytics.EventRange, from, to, limit string) (any, error) {
		return s.Queries.Bots(ctx, sc, from, to, limit)
	})
}

// handleEventNames is GET /api/v1/query/events: the event names seen in
// the range, most frequent first, for the dashboard's step autocomplete.
func (s *Server) handleEventNames(w http.ResponseWriter, r *http.Request) error {
	_, shared := sharePrincipal(r)
	return s.serveRange(w, r, func(ctx context.Context, sc analytics.EventRange, from, to, limit string) (any, error) {
		res, err := s.Queries.EventNames(ctx, sc, from, to, limit)
		if shared {
			res = sharing.EventNames(res)
		}
		return res, err
	})
}

// handleLive is GET /api/v1/query/live: visitors now. It authenticates as
// every query route does (a query token or a dashboard session; an API key
// is 403) but does not take from the credential's query budget: the
// Overview asks every ten seconds for as long as it is open, and the
// engine answers from a short cache per product and environment in a lane
// of its own (query.Live), so a request costs a map lookup, not a query.
func (s *Server) handleLive(w http.ResponseWriter, r *http.Request) error {
	sc, err := s.scope(r)
	if err != nil {
		return err
	}
	res, err := s.Queries.LiveVisitors(r.Context(), sc)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}

// serveRange serves a GET query read from the URL's dateFrom, dateTo and
// limit over the caller's product.
func (s *Server) serveRange(w http.ResponseWriter, r *http.Request,
	run func(ctx context.Context, sc analytics.EventRange, from, to, limit string) (any, error)) error {
	sc, err := s.readScope(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	res, err := run(r.Context(), sc, q.Get("dateFrom"), q.Get("dateTo"), q.Get("limit"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}

// savedQueryRequest is the body of POST /queries and PUT /queries/{id}.
type savedQueryRequest struct {
	Kind       analytics.QueryKind `json:"kind"`
	Name       string              `json:"name"`
	Definition json.RawMessage     `json:"definition"`
}

var errSavedNotFound = analytics.Errorf(analytics.KindNotFound, "query_not_found", "There is no saved query with this id in this product.")

// parseSavedQuery validates a saved query body. A funnel saved without a
// definition starts from the placeholder steps, as a new funnel in the
// dashboard does.
func (s *Server) parseSavedQuery(body []byte, sc analytics.EventRange, into *analytics.SavedQuery) error {
	var req savedQueryRequest
	if err := jsontext.Decode(body, &req); err != nil {
		return err
	}
	if into.ID != 0 && req.Kind != "" && req.Kind != into.Kind {
		return analytics.InvalidField("kind", "a saved query's kind cannot change")
	}
	if into.ID == 0 {
		into.Kind = req.Kind
	}
	if n := utf8.RuneCountInString(req.Name); n < 1 || n > 255 {
		return analytics.InvalidField("name", "must be 1 to 255 characters, not %d", n)
	}
	def := req.Definition
	if len(bytes.TrimSpace(def)) == 0 || string(def) == "null" {
		if into.Kind != analytics.QueryFunnel {
			return analytics.InvalidField("definition", "is required")
		}
		def, _ = json.Marshal(query.FunnelRequest{Steps: query.EventSteps(query.PlaceholderSteps), WindowHours: json.RawMessage("24")})
	}
	if _, err := s.Queries.Prepare(into.Kind, sc, def); err != nil {
		var e *analytics.Error
		if err != query.ErrUnknownKind && errors.As(err, &e) {
			return analytics.Errorf(e.Kind, e.Code, "definition.%s", e.Message)
		}
		return err
	}
	var compact bytes.Buffer
	json.Compact(&compact, def) // cannot fail: Prepare decoded def
	into.Name, into.Definition = req.Name, compact.Bytes()
	return nil
}

// savedTarget authenticates a request on /queries/{id} and reads the id.
func (s *Server) savedTarget(r *http.Request) (analytics.EventRange, int64, error) {
	sc, err := s.scope(r)
	if err != nil {
		return sc, 0, err
	}
	id, err := savedID(r)
	return sc, id, err
}

// savedID reads the {id} of a /queries/{id} path.
func savedID(r *http.Request) (int64, error) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id < 1 {
		return 0, errSavedNotFound
	}
	return id, nil
}

// savedLookup translates a store miss into the API's not-found error.
func savedLookup(err error) error {
	if errors.Is(err, analytics.ErrNotFound) {
		return errSavedNotFound
	}
	return err
}

// handleCreateSaved is POST /api/v1/queries.
func (s *Server) handleCreateSaved(w http.ResponseWriter, r *http.Request) error {
	sc, err := s.scope(r)
	if err != nil {
		return err
	}
	body, err := readQueryBody(w, r)
	if err != nil {
		return err
	}
	q := analytics.SavedQuery{ProductID: sc.ProductID}
	if err := s.parseSavedQuery(body, sc, &q); err != nil {
		return err
	}
	if err := s.Saved.CreateSavedQuery(r.Context(), &q); err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, q)
	return nil
}

// readMeta runs f, a read of the metadata store whose cost grows with what
// is stored (a list, a survey's responses), under the query admission and
// its memory rules (query.Engine.ReadMeta), and returns what f read.
func readMeta[T any](s *Server, r *http.Request, f func(context.Context) (T, error)) (T, error) {
	var v T
	err := s.Queries.ReadMeta(r.Context(), func(ctx context.Context) error {
		var err error
		v, err = f(ctx)
		return err
	})
	return v, err
}

// handleListSaved is GET /api/v1/queries.
func (s *Server) handleListSaved(w http.ResponseWriter, r *http.Request) error {
	sc, err := s.scope(r)
	if err != nil {
		return err
	}
	list, err := readMeta(s, r, func(ctx context.Context) ([]analytics.SavedQuery, error) {
		return s.Saved.ListSavedQueries(ctx, sc.ProductID)
	})
	if err != nil {
		return err
	}
	writeItems(w, list)
	return nil
}

// handleGetSaved is GET /api/v1/queries/{id}.
func (s *Server) handleGetSaved(w http.ResponseWriter, r *http.Request) error {
	sc, id, err := s.savedTarget(r)
	if err != nil {
		return err
	}
	q, err := s.Saved.SavedQuery(r.Context(), sc.ProductID, id)
	if err != nil {
		return savedLookup(err)
	}
	writeJSON(w, http.StatusOK, q)
	return nil
}

// handleUpdateSaved is PUT /api/v1/queries/{id}: it replaces the name and
// definition; the kind stays.
func (s *Server) handleUpdateSaved(w http.ResponseWriter, r *http.Request) error {
	sc, id, err := s.savedTarget(r)
	if err != nil {
		return err
	}
	body, err := readQueryBody(w, r)
	if err != nil {
		return err
	}
	q, err := s.Saved.SavedQuery(r.Context(), sc.ProductID, id)
	if err != nil {
		return savedLookup(err)
	}
	if err := s.parseSavedQuery(body, sc, &q); err != nil {
		return err
	}
	if err := s.Saved.UpdateSavedQuery(r.Context(), &q); err != nil {
		return savedLookup(err)
	}
	writeJSON(w, http.StatusOK, q)
	return nil
}

// handleDeleteSaved is DELETE /api/v1/queries/{id}.
func (s *Server) handleDeleteSaved(w http.ResponseWriter, r *http.Request) error {
	sc, id, err := s.savedTarget(r)
	if err != nil {
		return err
	}
	if err := s.Saved.DeleteSavedQuery(r.Context(), sc.ProductID, id); err != nil {
		return savedLookup(err)
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// handleRunSaved is POST /api/v1/queries/{id}/run: it runs the stored
// definition as its endpoint would, over the URL's dateFrom and dateTo when
// given (else the definition's dates, or the last 30 days as of now), and
// answers with that endpoint's result.
func (s *Server) handleRunSaved(w http.ResponseWriter, r *http.Request) error {
	sc, err := s.readScope(r)
	if err != nil {
		return err
	}
	id, err := savedID(r)
	if err != nil {
		return err
	}
	q, err := s.Saved.SavedQuery(r.Context(), sc.ProductID, id)
	if err != nil {
		return savedLookup(err)
	}
	qs := r.URL.Query()
	run, err := s.Queries.PrepareSaved(q.Kind, sc, q.Definition, qs.Get("dateFrom"), qs.Get("dateTo"))
	if err != nil {
		return err
	}
	res, err := run(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}
