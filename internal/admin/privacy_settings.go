package admin

import (
	"context"
	"errors"

	"strata/internal/analytics"
)

// SetProductPrivacy sets what a product asks of its browser SDKs
// (docs/privacy.md, "Cookieless mode") and returns the product.
func (s *Service) SetProductPrivacy(ctx context.Context, id int64, v analytics.PrivacySettings) (analytics.Product, error) {
	if err := s.Meta.SetProductPrivacy(ctx, id, v); errors.Is(err, analytics.ErrNotFound) {
		return analytics.Product{}, errProductNotFound(id)
	} else if err != nil {
		return analytics.Product{}, err
	}
	return s.Meta.Product(ctx, id)
}
