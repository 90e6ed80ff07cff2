package httpapi

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strconv"

	"strata/internal/admin"
	"strata/internal/analytics"
)

// AdminHandler serves the admin socket that the CLI uses while a server
// holds the data directory. It is only ever served on a Unix socket whose
// file permissions admit the owner alone, so it has no further auth.
// extra adds routes of other services (AdminPrivacyRoutes).
func AdminHandler(svc *admin.Service, log *slog.Logger, extra ...func(*http.ServeMux)) http.Handler {
	mux := http.NewServeMux()
	h := func(f handlerFunc) http.Handler { return wrap(log, f) }
	mux.Handle("GET /ping", h(func(w http.ResponseWriter, r *http.Request) error {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
		return nil
	}))
	mux.Handle("POST /products", h(func(w http.ResponseWriter, r *http.Request) error {
		var in admin.CreateProductRequest
		if err := decodeJSON(r, &in); err != nil {
			return err
		}
		p, err := svc.CreateProduct(r.Context(), in.Name)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusCreated, p)
		return nil
	}))
	mux.Handle("GET /products", h(func(w http.ResponseWriter, r *http.Request) error {
		products, err := svc.ListProducts(r.Context())
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, products)
		return nil
	}))
	mux.Handle("POST /keys", h(func(w http.ResponseWriter, r *http.Request) error {
		var in admin.CreateKeyRequest
		if err := decodeJSON(r, &in); err != nil {
			return err
		}
		secret, k, err := svc.CreateKey(r.Context(), in.ProductID, in.Env, in.RateLimit)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusCreated, admin.SecretResponse[analytics.APIKey]{Secret: secret, Record: k})
		return nil
	}))
	mux.Handle("GET /keys", h(productList(svc.ListKeys)))
	mux.Handle("POST /keys/status", h(func(w http.ResponseWriter, r *http.Request) error {
		var in admin.KeyStatusRequest
		if err := decodeJSON(r, &in); err != nil {
			return err
		}
		k, err := svc.SetKeyStatus(r.Context(), in.Key, in.Status)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, k)
		return nil
	}))
	mux.Handle("POST /tokens", h(func(w http.ResponseWriter, r *http.Request) error {
		var in admin.CreateTokenRequest
		if err := decodeJSON(r, &in); err != nil {
			return err
		}
		secret, t, err := svc.CreateToken(r.Context(), in.ProductID)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusCreated, admin.SecretResponse[analytics.QueryToken]{Secret: secret, Record: t})
		return nil
	}))
	mux.Handle("GET /tokens", h(productList(svc.ListTokens)))
	// The flag and experiment commands: the same services as the HTTP
	// API's (admin.Service calls them), whose changes the server serves
	// at once (FlagsChanged).
	mux.Handle("GET /flags", h(productList(svc.ListFlags)))
	mux.Handle("GET /experiments", h(productList(svc.ListExperiments)))
	mux.Handle("POST /experiments/{action}", h(func(w http.ResponseWriter, r *http.Request) error {
		var in admin.ExperimentRequest
		if err := decodeJSON(r, &in); err != nil {
			return err
		}
		var e analytics.Experiment
		var err error
		if action := r.PathValue("action"); action == "apply-winner" {
			e, err = svc.ApplyWinner(r.Context(), in.ProductID, in.ID, in.Variant)
		} else {
			e, err = svc.ActExperiment(r.Context(), in.ProductID, in.ID, action)
		}
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, e)
		return nil
	}))
	// The user commands. Passwords cross the socket, which only the data
	// directory's owner can open.
	mux.Handle("GET /users", h(func(w http.ResponseWriter, r *http.Request) error {
		users, err := svc.ListUsers(r.Context())
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, users)
		return nil
	}))
	mux.Handle("POST /users", h(func(w http.ResponseWriter, r *http.Request) error {
		var in admin.UserRequest
		if err := decodeJSON(r, &in); err != nil {
			return err
		}
		u, err := svc.AddUser(r.Context(), in.Email, in.Password, in.Role)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusCreated, u)
		return nil
	}))
	mux.Handle("POST /users/password", h(func(w http.ResponseWriter, r *http.Request) error {
		var in admin.UserRequest
		if err := decodeJSON(r, &in); err != nil {
			return err
		}
		if err := svc.ResetPassword(r.Context(), in.Email, in.Password); err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, map[string]string{})
		return nil
	}))
	mux.Handle("POST /users/remove", h(func(w http.ResponseWriter, r *http.Request) error {
		var in admin.UserRequest
		if err := decodeJSON(r, &in); err != nil {
			return err
		}
		if err := svc.RemoveUser(r.Context(), in.Email); err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, map[string]string{})
		return nil
	}))
	mux.Handle("POST /backups", h(func(w http.ResponseWriter, r *http.Request) error {
		var in admin.BackupRequest
		if err := decodeJSON(r, &in); err != nil {
			return err
		}
		m, err := svc.Backup(r.Context(), in.To)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusCreated, m)
		return nil
	}))
	for _, add := range extra {
		add(mux)
	}
	return mux
}

// productList serves a list of one product's records, named by the query
// parameter product; an empty list is [], never null.
func productList[T any](list func(ctx context.Context, productID int64) ([]T, error)) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := productParam(r)
		if err != nil {
			return err
		}
		items, err := list(r.Context(), id)
		if err != nil {
			return err
		}
		if items == nil {
			items = []T{}
		}
		writeJSON(w, http.StatusOK, items)
		return nil
	}
}

// productParam reads the product id of an admin-socket list request, the
// query parameter product.
func productParam(r *http.Request) (int64, error) {
	id, err := strconv.ParseInt(r.URL.Query().Get("product"), 10, 64)
	if err != nil {
		return 0, analytics.Errorf(analytics.KindInvalid, "invalid_request", "product must be a product id.")
	}
	return id, nil
}

// decodeJSON reads a JSON request body of at most 1 MB into v, refusing
// unknown fields.
func decodeJSON(r *http.Request, v any) error {
	dec := json.NewDecoder(http.MaxBytesReader(nil, r.Body, 1<<20))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return analytics.Errorf(analytics.KindInvalid, "invalid_request", "The request body is not valid: %s.", err.Error())
	}
	return nil
}
