// Package cohorts holds the operations on cohorts (docs/queries.md,
// "Cohorts"): saved sets of a product's persons, static (uploaded as CSV)
// or dynamic (computed from groups of property and behaviour conditions,
// on demand and every hour by a leased job). Definitions and their state
// live in the metadata store, members in the event store, one generation a
// computation or upload. Who the caller is, the roles and the wire forms
// are the transport's (internal/httpapi/cohorts.go).
package cohorts

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"strata/internal/analytics"
)

// Bounds of the operations (docs/security.md, the limits table).
const (
	// RecomputeEvery is how old a dynamic cohort's members may grow
	// before the job computes them again.
	RecomputeEvery = time.Hour
	// StaleAfter is when a computation that has not finished is taken to
	// have died with its node, and another may start.
	StaleAfter = 15 * time.Minute
	// batchIDs is how many members a computation or upload writes at once:
	// all the memory a computation holds besides its streams' rows.
	batchIDs = 10_000
)

// Refusals of the operations, in the API's vocabulary.
var (
	ErrNotFound = analytics.Errorf(analytics.KindNotFound, "cohort_not_found",
		"There is no cohort with this id in this product.")
	ErrNotStatic = analytics.Errorf(analytics.KindInvalid, "cohort_not_static",
		"Only a static cohort's members are uploaded; a dynamic cohort computes its own.")
	ErrNotDynamic = analytics.Errorf(analytics.KindInvalid, "cohort_not_dynamic",
		"Only a dynamic cohort is computed; upload a static cohort's members.")
	ErrKindChange = analytics.Errorf(analytics.KindInvalid, "invalid_request",
		"kind: a cohort's kind cannot change; create another cohort.")
	ErrBusy = analytics.Errorf(analytics.KindConflict, "cohort_busy",
		"This cohort's members are being computed or uploaded; try again when it is done.")
)

// Meta is what the service reads and writes in the metadata store.
type Meta interface {
	analytics.CohortStore
	analytics.PersonIDStore
}

// Service runs the operations on cohorts.
type Service struct {
	Meta   Meta
	Events analytics.CohortMemberStore
	// MaxCohorts is how many cohorts a product may have.
	MaxCohorts int
	Now        func() time.Time
	Log        *slog.Logger

	// background computations started by Compute; Wait waits for them.
	running sync.WaitGroup
	// ctx ends the background computations (Close).
	mu     sync.Mutex
	ctx    context.Context
	cancel context.CancelFunc
}

func (s *Service) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func (s *Service) background() context.Context {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ctx == nil {
		s.ctx, s.cancel = context.WithCancel(context.Background())
	}
	return s.ctx
}

// Close stops the background computations and waits for them; their
// cohorts are computed again by the job later.
func (s *Service) Close() {
	s.background()
	s.cancel()
	s.running.Wait()
}

// Wait waits for the background computations started so far (tests).
func (s *Service) Wait() { s.running.Wait() }

func notFound(err error) error {
	if errors.Is(err, analytics.ErrNotFound) {
		return ErrNotFound
	}
	return err
}

// Input is what a create or an update sets.
type Input struct {
	Name        string                      `json:"name"`
	Description string                      `json:"description"`
	Kind        analytics.CohortKind        `json:"kind"`
	Definition  *analytics.CohortDefinition `json:"definition"`
}

// Create stores a cohort; a dynamic one starts computing.
func (s *Service) Create(ctx context.Context, productID int64, in Input, by string) (analytics.Cohort, error) {
	c := analytics.Cohort{ProductID: productID, Name: in.Name, Description: in.Description, Kind: in.Kind,
		Definition: in.Definition, CreatedBy: by}
	if err := analytics.ValidateCohort(&c); err != nil {
		return c, err
	}
	if err := s.Meta.CreateCohort(ctx, &c, s.MaxCohorts); err != nil {
		return c, err
	}
	if c.Kind == analytics.CohortDynamic {
		return s.Compute(ctx, productID, c.ID)
	}
	return c, nil
}

// Get returns one cohort.
func (s *Service) Get(ctx context.Context, productID, id int64) (analytics.Cohort, error) {
	c, err := s.Meta.Cohort(ctx, productID, id)
	return c, notFound(err)
}

// List returns a product's cohorts.
func (s *Service) List(ctx context.Context, productID int64) ([]analytics.Cohort, error) {
	cs, err := s.Meta.Cohorts(ctx, productID)
	if cs == nil {
		cs = []analytics.Cohort{}
	}
	return cs, err
}

// Update replaces a cohort's name, description and definition; a dynamic
// cohort whose definition changed starts computing.
func (s *Service) Update(ctx context.Context, productID, id int64, in Input) (analytics.Cohort, error) {
	old, err := s.Get(ctx, productID, id)
	if err != nil {
		return old, err
	}
	if in.Kind == "" {
		in.Kind = old.Kind
	}
	if in.Kind != old.Kind {
		return old, ErrKindChange
	}
	c := old
	c.Name, c.Description, c.Definition = in.Name, in.Description, in.Definition
	if err := analytics.ValidateCohort(&c); err != nil {
		return c, err
	}
	if err := s.Meta.UpdateCohort(ctx, &c); err != nil {
		return c, notFound(err)
	}
	if c.Kind == analytics.CohortDynamic {
		return s.Compute(ctx, productID, id)
	}
	return s.Get(ctx, productID, id)
}

// Delete removes a cohort and its members.
func (s *Service) Delete(ctx context.Context, productID, id int64) error {
	if err := s.Meta.DeleteCohort(ctx, productID, id); err != nil {
		return notFound(err)
	}
	return s.Events.DropCohortGenerations(ctx, productID, id, 0)
}

// Compute starts computing a dynamic cohort in the background and returns
// it computing; when a computation already runs, it returns the cohort as
// it is (one computation a cohort at a time).
func (s *Service) Compute(ctx context.Context, productID, id int64) (analytics.Cohort, error) {
	c, err := s.Get(ctx, productID, id)
	if err != nil {
		return c, err
	}
	if c.Kind != analytics.CohortDynamic {
		return c, ErrNotDynamic
	}
	gen, ok, err := s.Meta.StartCohort(ctx, productID, id, s.now().Add(-StaleAfter))
	if err != nil || !ok {
		if err == nil {
			c, err = s.Get(ctx, productID, id)
		}
		return c, notFound(err)
	}
	bg := s.background()
	s.running.Add(1)
	go func() {
		defer s.running.Done()
		if err := s.compute(bg, c, gen); err != nil && s.Log != nil {
			s.Log.Warn("computing a cohort failed", "product", productID, "cohort", id, "err", err)
		}
	}()
	return s.Get(ctx, productID, id)
}

// ComputeNow computes a dynamic cohort and returns when it is done (the
// job, the benchmark). ok is false when another computation runs.
func (s *Service) ComputeNow(ctx context.Context, c analytics.Cohort) (bool, error) {
	gen, ok, err := s.Meta.StartCohort(ctx, c.ProductID, c.ID, s.now().Add(-StaleAfter))
	if err != nil || !ok {
		return false, err
	}
	return true, s.compute(ctx, c, gen)
}

// compute writes generation gen of a dynamic cohort and makes it current,
// or records the failure and drops what it wrote.
func (s *Service) compute(ctx context.Context, c analytics.Cohort, gen int64) error {
	w := s.writer(ctx, c.ProductID, c.ID, gen)
	err := Evaluate(ctx, s.Meta, s.Events, c.ProductID, *c.Definition, s.now(), w.add)
	if err == nil {
		err = w.flush()
	}
	return s.finish(ctx, c.ProductID, c.ID, gen, w.size, err)
}

// finish makes gen current and drops the other generations, or on err
// records the failure and drops gen.
func (s *Service) finish(ctx context.Context, productID, id, gen, size int64, err error) error {
	// The bookkeeping runs even when ctx ended (a stop): it is short.
	bk := context.WithoutCancel(ctx)
	if err != nil {
		msg := err.Error()
		if len(msg) > 500 {
			msg = msg[:500]
		}
		if ferr := s.Meta.FailCohort(bk, productID, id, gen, msg); ferr != nil {
			err = errors.Join(err, ferr)
		}
		return errors.Join(err, s.dropAllBut(bk, productID, id))
	}
	if _, err := s.Meta.FinishCohort(bk, productID, id, gen, size); err != nil {
		return err
	}
	return s.dropAllBut(bk, productID, id)
}

// dropAllBut drops every generation of a cohort but its current one (all
// of them when it was deleted meanwhile).
func (s *Service) dropAllBut(ctx context.Context, productID, id int64) error {
	keep := int64(0)
	c, err := s.Meta.Cohort(ctx, productID, id)
	switch {
	case err == nil:
		keep = c.Generation
	case !errors.Is(err, analytics.ErrNotFound):
		return err
	}
	return s.Events.DropCohortGenerations(ctx, productID, id, keep)
}

// writer batches members into a generation.
type writer struct {
	ctx                  context.Context
	store                analytics.CohortMemberStore
	product, cohort, gen int64
	batch                []string
	size                 int64
}

func (s *Service) writer(ctx context.Context, productID, id, gen int64) *writer {
	return &writer{ctx: ctx, store: s.Events, product: productID, cohort: id, gen: gen, batch: make([]string, 0, batchIDs)}
}

func (w *writer) add(id string) error {
	w.batch = append(w.batch, id)
	w.size++
	if len(w.batch) == batchIDs {
		return w.flush()
	}
	return nil
}

func (w *writer) flush() error {
	if len(w.batch) == 0 {
		return nil
	}
	if err := w.store.AppendCohortMembers(w.ctx, w.product, w.cohort, w.gen, w.batch); err != nil {
		return err
	}
	w.batch = w.batch[:0]
	return nil
}

// MembersPage is one page of a cohort's members; NextCursor is set when
// more may follow (the last id of this page).
type MembersPage struct {
	Generation int64    `json:"generation"`
	Items      []string `json:"items"`
	NextCursor *string  `json:"nextCursor"`
}

// Members returns a page of a cohort's current members in id order.
func (s *Service) ListMembers(ctx context.Context, productID, id int64, after string, limit int) (MembersPage, error) {
	if limit <= 0 || limit > analytics.MaxCohortMemberPage {
		return MembersPage{}, analytics.InvalidField("limit", "must be 1 to %d", analytics.MaxCohortMemberPage)
	}
	c, err := s.Get(ctx, productID, id)
	if err != nil {
		return MembersPage{}, err
	}
	page := MembersPage{Generation: c.Generation, Items: []string{}}
	if c.Generation == 0 {
		return page, nil
	}
	ids, err := s.Events.CohortMembers(ctx, productID, id, c.Generation, after, limit)
	if err != nil {
		return page, err
	}
	page.Items = ids
	if len(ids) == limit {
		next := ids[len(ids)-1]
		page.NextCursor = &next
	}
	return page, nil
}

// PersonCohorts lists the cohorts a person is a current member of (the
// person's export).
func (s *Service) PersonCohorts(ctx context.Context, productID int64, distinctID string) ([]analytics.Cohort, error) {
	ms, err := s.Events.PersonCohorts(ctx, productID, distinctID)
	if err != nil || len(ms) == 0 {
		return nil, err
	}
	cs, err := s.Meta.Cohorts(ctx, productID)
	if err != nil {
		return nil, err
	}
	in := map[analytics.CohortMembership]bool{}
	for _, m := range ms {
		in[m] = true
	}
	var out []analytics.Cohort
	for _, c := range cs {
		if c.Generation > 0 && in[analytics.CohortMembership{CohortID: c.ID, Generation: c.Generation}] {
			out = append(out, c)
		}
	}
	return out, nil
}
