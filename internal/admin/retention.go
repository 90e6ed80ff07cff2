package admin

import (
	"context"
	"errors"

	"strata/internal/analytics"
)

// SetProductRetention sets a product's retention periods
// (docs/privacy.md, "Retention") and returns the product. A period
// outside the bounds is refused with invalid_retention, and nothing is
// written.
func (s *Service) SetProductRetention(ctx context.Context, id int64, r analytics.DataRetention) (analytics.Product, error) {
	if err := r.Check(); err != nil {
		return analytics.Product{}, err
	}
	if err := s.Meta.SetProductRetention(ctx, id, r); errors.Is(err, analytics.ErrNotFound) {
		return analytics.Product{}, errProductNotFound(id)
	} else if err != nil {
		return analytics.Product{}, err
	}
	return s.Meta.Product(ctx, id)
}
