package analytics

import "context"

// MetaTx is the metadata a change that writes several entities makes in
// one transaction (docs/architecture.md, "One transaction per change"):
// a campaign with its flag and experiment, a winner applied with its
// flag's change and the flag's history.
type MetaTx interface {
	FlagStore
	ExperimentStore
	CampaignStore
}

// Transactor runs fn with stores whose writes all commit when fn returns
// nil and none of which does when it returns an error. A failed statement
// fails the whole transaction, so fn returns on its first error.
type Transactor interface {
	InTx(ctx context.Context, fn func(MetaTx) error) error
}
