package privacy

import (
	"context"

	"strata/internal/analytics"
)

// CohortMemberships is the cohorts a person is a member of
// (docs/privacy.md): deleted from every generation of every cohort of the
// product; exported as the cohorts whose current members hold the person,
// by id and name.
type CohortMemberships struct {
	Members analytics.CohortMemberStore
	Cohorts analytics.CohortStore
	// Forget drops what this node holds of the product's targeted cohorts
	// (cohorts.Targets), so that the deleted persons leave it at once;
	// nil when nothing is held.
	Forget func(productID int64)
}

func (CohortMemberships) Name() string { return "cohortMemberships" }

// CohortMembership is one row of the export.
type CohortMembership struct {
	CohortID int64  `json:"cohortId"`
	Name     string `json:"name"`
}

// DeletePersons deletes the ids from every cohort; the stores do not
// count the rows (-1).
func (k CohortMemberships) DeletePersons(ctx context.Context, productID int64, ids []string) (int64, error) {
	if err := k.Members.DeleteCohortMemberships(ctx, productID, ids); err != nil {
		return 0, err
	}
	if k.Forget != nil {
		k.Forget(productID)
	}
	return -1, nil
}

func (k CohortMemberships) ExportPerson(ctx context.Context, productID int64, id string, emit func(any) error) error {
	ms, err := k.Members.PersonCohorts(ctx, productID, id)
	if err != nil || len(ms) == 0 {
		return err
	}
	held := map[analytics.CohortMembership]bool{}
	for _, m := range ms {
		held[m] = true
	}
	cs, err := k.Cohorts.Cohorts(ctx, productID)
	if err != nil {
		return err
	}
	for _, c := range cs {
		if c.Generation > 0 && held[analytics.CohortMembership{CohortID: c.ID, Generation: c.Generation}] {
			if err := emit(CohortMembership{CohortID: c.ID, Name: c.Name}); err != nil {
				return err
			}
		}
	}
	return nil
}
