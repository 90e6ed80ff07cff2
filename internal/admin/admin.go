// Package admin holds the management operations behind the CLI (and the
// dashboard's settings): products, API keys and query tokens, and the
// CLI's flag and experiment commands, which call the experiment services. The same operations
// run either directly on a store, when no server holds the data directory,
// or through the running server's admin socket, because the embedded
// database admits one process at a time. The socket is a Unix socket in the
// data directory, readable only by its owner.
package admin

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"strata/internal/analytics"
	"strata/internal/auth"
	"strata/internal/backup"
	"strata/internal/experiment"
)

// SocketName is the admin socket's file name inside the data directory.
const SocketName = "admin.sock"

// Admin is the set of management operations. Service implements it on a
// store; Client implements it over the admin socket.
type Admin interface {
	// CreateProduct creates a product in the first workspace.
	CreateProduct(ctx context.Context, name string) (analytics.Product, error)
	// ListProducts lists the products of every workspace, oldest first.
	ListProducts(ctx context.Context) ([]analytics.Product, error)
	// CreateKey creates an API key and returns its plaintext, shown once.
	// rateLimit is requests per minute; zero means the server default.
	CreateKey(ctx context.Context, productID int64, env analytics.Env, rateLimit int) (string, analytics.APIKey, error)
	// ListKeys lists a product's keys.
	ListKeys(ctx context.Context, productID int64) ([]analytics.APIKey, error)
	// SetKeyStatus disables, re-enables or revokes a key named by its
	// plaintext or its numeric ID. Revocation is final.
	SetKeyStatus(ctx context.Context, ref string, status analytics.KeyStatus) (analytics.APIKey, error)
	// CreateToken creates a query token and returns its plaintext.
	CreateToken(ctx context.Context, productID int64) (string, analytics.QueryToken, error)
	// ListTokens lists a product's query tokens. Only their hashes are
	// stored, so a listed token carries its prefix, never its secret.
	ListTokens(ctx context.Context, productID int64) ([]analytics.QueryToken, error)

	// ListFlags lists a product's feature flags, oldest first.
	ListFlags(ctx context.Context, productID int64) ([]analytics.Flag, error)
	// ListExperiments lists a product's experiments, oldest first.
	ListExperiments(ctx context.Context, productID int64) ([]analytics.Experiment, error)
	// ActExperiment starts, pauses or resumes (action) one of a product's
	// experiments, under the rules of experiment.Service.Act; another
	// product's experiment is experiment.ErrNotFound.
	ActExperiment(ctx context.Context, productID, id int64, action string) (analytics.Experiment, error)
	// ApplyWinner completes one of a product's experiments with the arm
	// variant as its winner (experiment.Service.ApplyWinner), recorded in
	// the flag's history as Actor's change.
	ApplyWinner(ctx context.Context, productID, id int64, variant string) (analytics.Experiment, error)

	// ListUsers lists the dashboard's current users with their roles.
	ListUsers(ctx context.Context) ([]analytics.UserAccount, error)
	// AddUser creates a dashboard user with role in every workspace.
	AddUser(ctx context.Context, email, password string, role analytics.Role) (analytics.UserAccount, error)
	// ResetPassword sets a user's password and ends all their sessions.
	ResetPassword(ctx context.Context, email, password string) error
	// RemoveUser removes a user and ends all their sessions.
	RemoveUser(ctx context.Context, email string) error
	// Backup takes an online backup of the data directory into dir, an
	// absolute path that must be absent or an empty directory
	// (docs/operations.md, "Backup and restore").
	Backup(ctx context.Context, dir string) (backup.Manifest, error)
}

// Service implements Admin on a metadata store.
type Service struct {
	Meta analytics.MetaStore
	// Users keeps the dashboard's users, their roles and invites: the
	// same store as Meta, which every metadata store implements.
	Users analytics.UserStore
	// OnChange, when set, is called after a credential changed, so that the
	// server's caches drop what they knew.
	OnChange func()
	// Flags and Experiments are the flag and experiment services, the
	// same the HTTP API calls. FlagsChanged, when set, is called after
	// one of a product's flags or experiments changed, so that the
	// server's SDK configuration and message engine drop what they knew.
	Flags        *experiment.Flags
	Experiments  *experiment.Service
	FlagsChanged func(productID int64)
	// Backups takes the backups of the embedded stores; nil when the
	// server keeps its data in ClickHouse or PostgreSQL, which are backed
	// up with their own tools.
	Backups *backup.Runner
}

var _ Admin = (*Service)(nil)

const maxProductName = 100

// CreateProduct creates a product in the first workspace.
func (s *Service) CreateProduct(ctx context.Context, name string) (analytics.Product, error) {
	if _, err := productName(name); err != nil {
		return analytics.Product{}, err
	}
	ws, err := s.Meta.ListWorkspaces(ctx)
	if err != nil {
		return analytics.Product{}, err
	}
	if len(ws) == 0 {
		return analytics.Product{}, analytics.Errorf(analytics.KindConflict, "no_workspace",
			"There is no workspace yet; start the server once to create the default one.")
	}
	return s.CreateProductIn(ctx, ws[0].ID, name)
}

// ListProducts lists the products of every workspace: workspaces oldest
// first, and each one's products oldest first.
func (s *Service) ListProducts(ctx context.Context) ([]analytics.Product, error) {
	ws, err := s.Meta.ListWorkspaces(ctx)
	if err != nil {
		return nil, err
	}
	products := []analytics.Product{}
	for _, w := range ws {
		ps, err := s.Meta.ListProducts(ctx, w.ID)
		if err != nil {
			return nil, err
		}
		products = append(products, ps...)
	}
	return products, nil
}

// productName trims a product name and checks its length.
func productName(name string) (string, error) {
	name = strings.TrimSpace(name)
	if n := utf8.RuneCountInString(name); n < 1 || n > maxProductName {
		return "", analytics.Errorf(analytics.KindInvalid, "invalid_request",
			"name must be 1 to %d characters long.", maxProductName)
	}
	return name, nil
}

// CreateKey creates an API key for a product.
func (s *Service) CreateKey(ctx context.Context, productID int64, env analytics.Env, rateLimit int) (string, analytics.APIKey, error) {
	if env != analytics.EnvLive && env != analytics.EnvTest {
		return "", analytics.APIKey{}, analytics.Errorf(analytics.KindInvalid, "invalid_request", "env must be live or test.")
	}
	if rateLimit < 0 {
		return "", analytics.APIKey{}, analytics.Errorf(analytics.KindInvalid, "invalid_request", "rateLimit must not be negative.")
	}
	if err := s.productExists(ctx, productID); err != nil {
		return "", analytics.APIKey{}, err
	}
	secret := auth.NewAPIKey(env)
	k := analytics.APIKey{ProductID: productID, Hash: secret.Hash, Prefix: secret.Prefix, Env: env, RateLimit: rateLimit}
	if err := s.Meta.CreateAPIKey(ctx, &k); err != nil {
		return "", k, err
	}
	s.changed()
	return secret.Plaintext, k, nil
}

// ListKeys lists a product's keys.
func (s *Service) ListKeys(ctx context.Context, productID int64) ([]analytics.APIKey, error) {
	if err := s.productExists(ctx, productID); err != nil {
		return nil, err
	}
	return s.Meta.ListAPIKeys(ctx, productID)
}

// SetKeyStatus changes a key's status, refusing to bring back a revoked key.
func (s *Service) SetKeyStatus(ctx context.Context, ref string, status analytics.KeyStatus) (analytics.APIKey, error) {
	switch status {
	case analytics.KeyActive, analytics.KeyDisabled, analytics.KeyRevoked:
	default:
		return analytics.APIKey{}, analytics.Errorf(analytics.KindInvalid, "invalid_request", "status must be active, disabled or revoked.")
	}
	k, err := s.findKey(ctx, ref)
	if err != nil {
		return k, err
	}
	if k.Status == analytics.KeyRevoked && status != analytics.KeyRevoked {
		return k, analytics.Errorf(analytics.KindConflict, "key_revoked", "The key is revoked; revocation cannot be undone.")
	}
	if err := s.Meta.SetAPIKeyStatus(ctx, k.ID, status); err != nil {
		return k, err
	}
	k.Status = status
	s.changed()
	return k, nil
}

// CreateToken creates a query token for a product.
func (s *Service) CreateToken(ctx context.Context, productID int64) (string, analytics.QueryToken, error) {
	if err := s.productExists(ctx, productID); err != nil {
		return "", analytics.QueryToken{}, err
	}
	secret := auth.NewQueryToken()
	t := analytics.QueryToken{ProductID: productID, Hash: secret.Hash, Prefix: secret.Prefix}
	if err := s.Meta.CreateQueryToken(ctx, &t); err != nil {
		return "", t, err
	}
	s.changed()
	return secret.Plaintext, t, nil
}

// ListTokens lists a product's query tokens.
func (s *Service) ListTokens(ctx context.Context, productID int64) ([]analytics.QueryToken, error) {
	if err := s.productExists(ctx, productID); err != nil {
		return nil, err
	}
	return s.Meta.ListQueryTokens(ctx, productID)
}

// Bootstrap makes a fresh data directory usable: when no workspace exists it
// creates workspace "Default", product "Default" and a live key, and returns
// the key's plaintext so the caller can show it once. On a directory that
// is already set up it returns "".
func (s *Service) Bootstrap(ctx context.Context) (string, analytics.Product, error) {
	ws, err := s.Meta.ListWorkspaces(ctx)
	if err != nil || len(ws) > 0 {
		return "", analytics.Product{}, err
	}
	w, err := s.Meta.CreateWorkspace(ctx, "Default")
	if err != nil {
		return "", analytics.Product{}, err
	}
	p, err := s.Meta.CreateProduct(ctx, w.ID, "Default")
	if err != nil {
		return "", p, err
	}
	key, _, err := s.CreateKey(ctx, p.ID, analytics.EnvLive, 0)
	return key, p, err
}

func (s *Service) productExists(ctx context.Context, id int64) error {
	if _, err := s.Meta.Product(ctx, id); err != nil {
		if errors.Is(err, analytics.ErrNotFound) {
			return analytics.Errorf(analytics.KindNotFound, "product_not_found", "There is no product %d.", id)
		}
		return err
	}
	return nil
}

// findKey resolves a key named by its plaintext or its numeric ID.
func (s *Service) findKey(ctx context.Context, ref string) (analytics.APIKey, error) {
	var k analytics.APIKey
	var err error
	if id, perr := strconv.ParseInt(ref, 10, 64); perr == nil {
		k, err = s.Meta.APIKey(ctx, id)
	} else if _, ok := auth.ParseAPIKey(ref); ok {
		k, err = s.Meta.APIKeyByHash(ctx, auth.Hash(ref))
	} else {
		return k, analytics.Errorf(analytics.KindInvalid, "invalid_request", "Name the key by its full value (st_live_… or st_test_…) or its numeric id.")
	}
	if errors.Is(err, analytics.ErrNotFound) {
		return k, analytics.Errorf(analytics.KindNotFound, "key_not_found", "There is no such key.")
	}
	if err != nil {
		return k, fmt.Errorf("finding key: %w", err)
	}
	return k, nil
}

func (s *Service) changed() {
	if s.OnChange != nil {
		s.OnChange()
	}
}
