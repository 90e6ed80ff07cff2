package admin

import (
	"context"
	"errors"
	"strconv"

	"strata/internal/analytics"
)

// The operations below serve the dashboard's settings pages. They are
// methods of Service only, not of the Admin interface the CLI shares with
// the admin socket: the dashboard runs inside the server, next to the
// store. Each names its product explicitly and refuses a key or token of
// another product as not found, so that a caller who may manage one
// product cannot reach another's credentials by guessing ids.

// CreateProductIn creates a product in the given workspace.
func (s *Service) CreateProductIn(ctx context.Context, workspaceID int64, name string) (analytics.Product, error) {
	name, err := productName(name)
	if err != nil {
		return analytics.Product{}, err
	}
	return s.Meta.CreateProduct(ctx, workspaceID, name)
}

// RenameProduct gives a product a new name and returns it.
func (s *Service) RenameProduct(ctx context.Context, id int64, name string) (analytics.Product, error) {
	name, err := productName(name)
	if err != nil {
		return analytics.Product{}, err
	}
	if err := s.Meta.RenameProduct(ctx, id, name); errors.Is(err, analytics.ErrNotFound) {
		return analytics.Product{}, errProductNotFound(id)
	} else if err != nil {
		return analytics.Product{}, err
	}
	return s.Meta.Product(ctx, id)
}

// SetProductTimeZone sets the IANA time zone a product's dates and
// buckets follow and returns the product. An unknown name is refused with
// invalid_time_zone.
func (s *Service) SetProductTimeZone(ctx context.Context, id int64, zone string) (analytics.Product, error) {
	loc, err := analytics.LoadZone(zone)
	if err != nil {
		return analytics.Product{}, err
	}
	if err := s.Meta.SetProductTimeZone(ctx, id, loc.String()); errors.Is(err, analytics.ErrNotFound) {
		return analytics.Product{}, errProductNotFound(id)
	} else if err != nil {
		return analytics.Product{}, err
	}
	return s.Meta.Product(ctx, id)
}

// SetProductKeyStatus disables, re-enables or revokes key keyID of a
// product, with the rules of SetKeyStatus.
func (s *Service) SetProductKeyStatus(ctx context.Context, productID, keyID int64, status analytics.KeyStatus) (analytics.APIKey, error) {
	k, err := s.Meta.APIKey(ctx, keyID)
	if errors.Is(err, analytics.ErrNotFound) || err == nil && k.ProductID != productID {
		return analytics.APIKey{}, errKeyNotFound
	} else if err != nil {
		return k, err
	}
	return s.SetKeyStatus(ctx, strconv.FormatInt(keyID, 10), status)
}

// SetProductTokenStatus disables, re-enables or revokes query token
// tokenID of a product. Revocation is final, as for keys.
func (s *Service) SetProductTokenStatus(ctx context.Context, productID, tokenID int64, status analytics.KeyStatus) (analytics.QueryToken, error) {
	if err := checkStatus(status); err != nil {
		return analytics.QueryToken{}, err
	}
	tokens, err := s.ListTokens(ctx, productID)
	if err != nil {
		return analytics.QueryToken{}, err
	}
	for _, t := range tokens {
		if t.ID != tokenID {
			continue
		}
		if t.Status == analytics.KeyRevoked && status != analytics.KeyRevoked {
			return t, analytics.Errorf(analytics.KindConflict, "token_revoked", "The token is revoked; revocation cannot be undone.")
		}
		if err := s.Meta.SetQueryTokenStatus(ctx, t.ID, status); err != nil {
			return t, err
		}
		t.Status = status
		s.changed()
		return t, nil
	}
	return analytics.QueryToken{}, analytics.Errorf(analytics.KindNotFound, "token_not_found", "There is no such token in this product.")
}

// checkStatus accepts the three credential states.
func checkStatus(status analytics.KeyStatus) error {
	switch status {
	case analytics.KeyActive, analytics.KeyDisabled, analytics.KeyRevoked:
		return nil
	}
	return analytics.Errorf(analytics.KindInvalid, "invalid_request", "status must be active, disabled or revoked.")
}

var errKeyNotFound = analytics.Errorf(analytics.KindNotFound, "key_not_found", "There is no such key.")

func errProductNotFound(id int64) error {
	return analytics.Errorf(analytics.KindNotFound, "product_not_found", "There is no product %d.", id)
}
