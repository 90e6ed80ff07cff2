package httpapi

import (
	"fmt"
	"net/http"
	"strconv"

	"strata/internal/analytics"
	"strata/internal/jsontext"
)

// The dashboard's settings API: products, their API keys and their query
// tokens. Only a signed-in dashboard user may call it (a bearer credential
// reads one product's data; it does not manage products), and every
// product it names must belong to one of that user's workspaces. The
// operations are admin.Service's, the same the CLI runs.

// maxSettingsBody bounds the bodies of the settings API.
const maxSettingsBody = 64 << 10

// settingsUser is the signed-in caller of a settings request.
type settingsUser struct {
	id int64
	// workspaces are those where the user's role allows the route
	// (authorize), in ID order.
	workspaces []int64
}

// settingsCaller authenticates a settings request by its session cookie.
func (s *Server) settingsCaller(r *http.Request) (settingsUser, error) {
	_, u, _, err := s.signedIn(r)
	if err != nil {
		return settingsUser{}, err
	}
	ms, err := s.Accounts.Memberships(r.Context(), u.ID)
	if err != nil {
		return settingsUser{}, err
	}
	su := settingsUser{id: u.ID}
	var refused error
	for _, m := range ms {
		if err := authorize(r, ms, m.WorkspaceID, nil); err != nil {
			refused = err
			continue
		}
		su.workspaces = append(su.workspaces, m.WorkspaceID)
	}
	if len(su.workspaces) == 0 && refused != nil {
		return su, refused
	}
	return su, nil
}

// settingsProduct authenticates a request on /products/{id}/… and returns
// the product, which must be the caller's.
func (s *Server) settingsProduct(r *http.Request) (analytics.Product, error) {
	sp, err := s.productOf(r)
	return sp.product, err
}

// signedProduct is a signed-in request on /products/{id}/…: the product
// and who asks, as the audit log names them.
type signedProduct struct {
	product analytics.Product
	actor   string
}

// productOf authenticates a dashboard request on /products/{id}/… and
// finds the product among the user's (the route's role is checked before).
func (s *Server) productOf(r *http.Request) (signedProduct, error) {
	_, u, _, err := s.signedIn(r)
	if err != nil {
		return signedProduct{}, err
	}
	id, err := pathID(r, "id")
	if err != nil {
		return signedProduct{}, analytics.Errorf(analytics.KindNotFound, "product_not_found", "There is no such product.")
	}
	p, err := s.userProduct(r, u.ID, id)
	if err != nil {
		return signedProduct{}, err
	}
	return signedProduct{product: p, actor: "user:" + strconv.FormatInt(u.ID, 10) + " " + u.Email}, nil
}

// handleListProducts is GET /api/v1/products: the products of the
// caller's workspaces, oldest first.
func (s *Server) handleListProducts(w http.ResponseWriter, r *http.Request) error {
	u, err := s.settingsCaller(r)
	if err != nil {
		return err
	}
	items := []analytics.Product{}
	for _, ws := range u.workspaces {
		ps, err := s.Admin.Meta.ListProducts(r.Context(), ws)
		if err != nil {
			return err
		}
		items = append(items, ps...)
	}
	writeJSON(w, http.StatusOK, map[string]any{"items": items})
	return nil
}

// productRequest is the body of POST /products and PATCH /products/{id}.
// A PATCH may set the name, the time zone, or both; nil leaves it as is.
type productRequest struct {
	Name     *string `json:"name"`
	TimeZone *string `json:"timeZone"`
}

// handleCreateProduct is POST /api/v1/products: a new product in the
// caller's first workspace.
func (s *Server) handleCreateProduct(w http.ResponseWriter, r *http.Request) error {
	u, err := s.settingsCaller(r)
	if err != nil {
		return err
	}
	var in productRequest
	if err := decodeBody(w, r, maxSettingsBody, &in); err != nil {
		return err
	}
	if len(u.workspaces) == 0 {
		return analytics.Errorf(analytics.KindConflict, "no_workspace", "You belong to no workspace to create a product in.")
	}
	var name string
	if in.Name != nil {
		name = *in.Name
	}
	p, err := s.Admin.CreateProductIn(r.Context(), u.workspaces[0], name)
	if err != nil {
		return err
	}
	if in.TimeZone != nil {
		if p, err = s.Admin.SetProductTimeZone(r.Context(), p.ID, *in.TimeZone); err != nil {
			return err
		}
	}
	writeJSON(w, http.StatusCreated, p)
	return nil
}

// handleGetProduct is GET /api/v1/products/{id}.
func (s *Server) handleGetProduct(w http.ResponseWriter, r *http.Request) error {
	p, err := s.settingsProduct(r)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, p)
	return nil
}

// handleUpdateProduct is PATCH /api/v1/products/{id}: a new name, a new
// time zone, or both. The zone is checked before anything is written, so
// that a refused request changes nothing.
func (s *Server) handleUpdateProduct(w http.ResponseWriter, r *http.Request) error {
	p, err := s.settingsProduct(r)
	if err != nil {
		return err
	}
	var in productRequest
	if err := decodeBody(w, r, maxSettingsBody, &in); err != nil {
		return err
	}
	if in.Name == nil && in.TimeZone == nil {
		return analytics.Errorf(analytics.KindInvalid, "invalid_request", "Send a name, a timeZone, or both.")
	}
	if in.TimeZone != nil {
		if _, err := analytics.LoadZone(*in.TimeZone); err != nil {
			return err
		}
	}
	if in.Name != nil {
		if p, err = s.Admin.RenameProduct(r.Context(), p.ID, *in.Name); err != nil {
			return err
		}
	}
	if in.TimeZone != nil {
		if p, err = s.Admin.SetProductTimeZone(r.Context(), p.ID, *in.TimeZone); err != nil {
			return err
		}
	}
	writeJSON(w, http.StatusOK, p)
	return nil
}

// handleListKeys is GET /api/v1/products/{id}/keys.
func (s *Server) handleListKeys(w http.ResponseWriter, r *http.Request) error {
	p, err := s.settingsProduct(r)
	if err != nil {
		return err
	}
	keys, err := s.Admin.ListKeys(r.Context(), p.ID)
	if err != nil {
		return err
	}
	writeItems(w, keys)
	return nil
}

// createKeyRequest is the body of POST /products/{id}/keys.
type createKeyRequest struct {
	Env       analytics.Env `json:"env"`
	RateLimit int           `json:"rateLimit"`
}

// handleCreateKey is POST /api/v1/products/{id}/keys. The answer carries
// the key's plaintext, which is never shown again.
func (s *Server) handleCreateKey(w http.ResponseWriter, r *http.Request) error {
	p, err := s.settingsProduct(r)
	if err != nil {
		return err
	}
	var in createKeyRequest
	if err := decodeBody(w, r, maxSettingsBody, &in); err != nil {
		return err
	}
	secret, k, err := s.Admin.CreateKey(r.Context(), p.ID, in.Env, in.RateLimit)
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusCreated, map[string]any{"secret": secret, "key": k})
	return nil
}

// statusRequest is the body of PATCH on a key or token.
type statusRequest struct {
	Status analytics.KeyStatus `json:"status"`
}

// handleSetKeyStatus is PATCH /api/v1/products/{id}/keys/{keyId}:
// disable, re-enable or revoke (final) a key.
func (s *Server) handleSetKeyStatus(w http.ResponseWriter, r *http.Request) error {
	p, err := s.settingsProduct(r)
	if err != nil {
		return err
	}
	keyID, err := pathID(r, "keyId")
	if err != nil {
		return analytics.Errorf(analytics.KindNotFound, "key_not_found", "There is no such key.")
	}
	var in statusRequest
	if err := decodeBody(w, r, maxSettingsBody, &in); err != nil {
		return err
	}
	k, err := s.Admin.SetProductKeyStatus(r.Context(), p.ID, keyID, in.Status)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, k)
	return nil
}

// handleListTokens is GET /api/v1/products/{id}/tokens.
func (s *Server) handleListTokens(w http.ResponseWriter, r *http.Request) error {
	p, err := s.settingsProduct(r)
	if err != nil {
		return err
	}
	tokens, err := s.Admin.ListTokens(r.Context(), p.ID)
	if err != nil {
		return err
	}
	writeItems(w, tokens)
	return nil
}

// handleCreateToken is POST /api/v1/products/{id}/tokens. The answer
// carries the token's plaintext, which is never shown again.
func (s *Server) handleCreateToken(w http.ResponseWriter, r *http.Request) error {
	p, err := s.settingsProduct(r)
	if err != nil {
		return err
	}
	var in struct{}
	if err := decodeBody(w, r, maxSettingsBody, &in); err != nil {
		return err
	}
	secret, t, err := s.Admin.CreateToken(r.Context(), p.ID)
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusCreated, map[string]any{"secret": secret, "token": t})
	return nil
}

// handleSetTokenStatus is PATCH /api/v1/products/{id}/tokens/{tokenId}.
func (s *Server) handleSetTokenStatus(w http.ResponseWriter, r *http.Request) error {
	p, err := s.settingsProduct(r)
	if err != nil {
		return err
	}
	tokenID, err := pathID(r, "tokenId")
	if err != nil {
		return analytics.Errorf(analytics.KindNotFound, "token_not_found", "There is no such token in this product.")
	}
	var in statusRequest
	if err := decodeBody(w, r, maxSettingsBody, &in); err != nil {
		return err
	}
	t, err := s.Admin.SetProductTokenStatus(r.Context(), p.ID, tokenID, in.Status)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, t)
	return nil
}

// pathID reads a positive integer path segment.
func pathID(r *http.Request, name string) (int64, error) {
	id, err := strconv.ParseInt(r.PathValue(name), 10, 64)
	if err != nil || id < 1 {
		return 0, fmt.Errorf("%s: not a positive integer", name)
	}
	return id, nil
}

// decodeBody reads a JSON object of at most limit bytes into v with the API's
// one strict decoder (jsontext.Decode). An empty body decodes as {}.
func decodeBody(w http.ResponseWriter, r *http.Request, limit int64, v any) error {
	body, err := readLimitedBody(w, r, limit,
		analytics.Errorf(analytics.KindTooLarge, "body_too_large", "The request body is over %d KB (%d bytes).", limit>>10, limit))
	if err != nil {
		return err
	}
	if len(body) == 0 {
		body = []byte("{}")
	}
	return jsontext.Decode(body, v)
}
