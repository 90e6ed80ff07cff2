package analytics

import (
	"context"
	"encoding/json"
	"hash/fnv"
	"strings"
	"time"
	"unicode/utf8"
)

// Cohorts (docs/queries.md, "Cohorts"): saved sets of a product's
// persons. A static cohort's members are uploaded; a dynamic cohort's are
// computed from its definition. The definition lives in the metadata
// store; the members live in the event store, one generation a
// computation, so that queries can filter events by them where the
// events are.

// CohortKind is how a cohort gets its members.
type CohortKind string

const (
	CohortStatic  CohortKind = "static"
	CohortDynamic CohortKind = "dynamic"
)

// CohortState is where a cohort's latest computation (or upload) stands.
type CohortState string

const (
	CohortPending   CohortState = "pending"
	CohortComputing CohortState = "computing"
	CohortReady     CohortState = "ready"
	CohortFailed    CohortState = "failed"
)

// Cohort is one saved cohort. Generation names the member set readers
// use (0: none yet); Size is its number of members and ComputedAt when it
// was written.
type Cohort struct {
	ID          int64             `json:"id"`
	ProductID   int64             `json:"productId"`
	Name        string            `json:"name"`
	Description string            `json:"description"`
	Kind        CohortKind        `json:"kind"`
	Definition  *CohortDefinition `json:"definition,omitempty"`
	Generation  int64             `json:"generation"`
	Size        int64             `json:"size"`
	ComputedAt  *time.Time        `json:"computedAt"`
	State       CohortState       `json:"state"`
	Error       string            `json:"error"`
	CreatedBy   string            `json:"createdBy"`
	CreatedAt   time.Time         `json:"createdAt"`
	UpdatedAt   time.Time         `json:"updatedAt"`
}

// CohortDefinition is a dynamic cohort's rule: a person is a member when
// every condition of at least one group holds.
type CohortDefinition struct {
	Groups []CohortGroup `json:"groups"`
}

// CohortGroup is conditions that must all hold.
type CohortGroup struct {
	Conditions []CohortCondition `json:"conditions"`
}

// Cohort condition types.
const (
	CohortProperty = "property"
	CohortBehavior = "behavior"
)

// CohortCondition is a person property condition (Key, Operator, Value:
// a PersonFilter) or a behaviour condition: the person did Event at least
// AtLeast times in the last Days days (Performed true), or did not
// (Performed false).
type CohortCondition struct {
	Type      string   `json:"type"`
	Key       string   `json:"key,omitempty"`
	Operator  Operator `json:"operator,omitempty"`
	Value     string   `json:"value,omitempty"`
	Event     string   `json:"event,omitempty"`
	Performed *bool    `json:"performed,omitempty"`
	AtLeast   int      `json:"atLeast,omitempty"`
	Days      int      `json:"days,omitempty"`
}

// Filter is a property condition as the people list's filter.
func (c CohortCondition) Filter() PersonFilter {
	return PersonFilter{Key: c.Key, Operator: c.Operator, Value: c.Value}
}

// Did reports whether a behaviour condition asks that the event was done.
func (c CohortCondition) Did() bool { return c.Performed == nil || *c.Performed }

// Limits of cohorts (docs/security.md, limits).
const (
	MaxCohorts           = 100 // a product's
	MaxCohortGroups      = 10
	MaxCohortConditions  = 10 // a group's
	MaxCohortBehaviors   = 20 // behaviour conditions, all groups together
	MaxCohortDays        = 365
	MaxCohortNameBytes   = 200
	MaxCohortDescription = 2000
	MaxCohortIDBytes     = 255 // an uploaded member id
	MaxCohortUploadIDs   = 1_000_000
	MaxCohortUploadBytes = 64 << 20
	MaxCohortMemberPage  = 100
)

// CohortsFull is the refusal of a cohort past a product's cap.
func CohortsFull(max int) error {
	return Errorf(KindConflict, "cohorts_full",
		"This product already has %d cohorts, the most it may have; delete one it no longer needs first.", max)
}

// ValidateCohort checks a cohort's fields as a create or an update sends
// them and fills the defaults of its definition (atLeast 1, performed
// true). A static cohort has no definition; a dynamic one needs one.
func ValidateCohort(c *Cohort) error {
	c.Name = strings.TrimSpace(c.Name)
	if c.Name == "" || len(c.Name) > MaxCohortNameBytes || !utf8.ValidString(c.Name) {
		return InvalidField("name", "must be 1 to %d bytes of text", MaxCohortNameBytes)
	}
	if len(c.Description) > MaxCohortDescription || !utf8.ValidString(c.Description) {
		return InvalidField("description", "must be at most %d bytes of text", MaxCohortDescription)
	}
	switch c.Kind {
	case CohortStatic:
		if c.Definition != nil {
			return InvalidField("definition", "a static cohort has no definition: upload its members")
		}
		return nil
	case CohortDynamic:
	default:
		return InvalidField("kind", "must be static or dynamic")
	}
	if c.Definition == nil || len(c.Definition.Groups) == 0 {
		return InvalidField("definition.groups", "a dynamic cohort needs at least one group")
	}
	if len(c.Definition.Groups) > MaxCohortGroups {
		return InvalidField("definition.groups", "at most %d groups", MaxCohortGroups)
	}
	behaviors := 0
	for i := range c.Definition.Groups {
		g := &c.Definition.Groups[i]
		field := func(j int, name string) string {
			f := "definition.groups[" + itoa(i) + "].conditions"
			if j >= 0 {
				f += "[" + itoa(j) + "]"
			}
			if name != "" {
				f += "." + name
			}
			return f
		}
		if len(g.Conditions) == 0 || len(g.Conditions) > MaxCohortConditions {
			return InvalidField(field(-1, ""), "a group needs 1 to %d conditions", MaxCohortConditions)
		}
		for j := range g.Conditions {
			cond := &g.Conditions[j]
			switch cond.Type {
			case CohortProperty:
				if err := ValidatePersonFilter(cond.Filter()); err != nil {
					return InvalidField(field(j, ""), "%s", err.(*Error).Message)
				}
				cond.Event, cond.Performed, cond.AtLeast, cond.Days = "", nil, 0, 0
			case CohortBehavior:
				behaviors++
				if cond.Event == "" || len(cond.Event) > 200 || !utf8.ValidString(cond.Event) {
					return InvalidField(field(j, "event"), "must name an event (1 to 200 bytes)")
				}
				if cond.Days < 1 || cond.Days > MaxCohortDays {
					return InvalidField(field(j, "days"), "must be 1 to %d", MaxCohortDays)
				}
				if cond.AtLeast == 0 {
					cond.AtLeast = 1
				}
				if cond.AtLeast < 1 || cond.AtLeast > 1_000_000 {
					return InvalidField(field(j, "atLeast"), "must be 1 to 1000000")
				}
				if cond.Performed == nil {
					did := true
					cond.Performed = &did
				}
				cond.Key, cond.Operator, cond.Value = "", "", ""
			default:
				return InvalidField(field(j, "type"), "must be property or behavior")
			}
		}
	}
	if behaviors > MaxCohortBehaviors {
		return InvalidField("definition.groups", "at most %d behaviour conditions in all", MaxCohortBehaviors)
	}
	return nil
}

// ValidatePersonFilter checks a person property filter as the people
// list does: a key that is not a JSON path and a known operator.
func ValidatePersonFilter(f PersonFilter) error {
	if f.Key == "" || len(f.Key) > 200 || strings.HasPrefix(f.Key, "$") || strings.HasPrefix(f.Key, "/") {
		return InvalidField("key", "must be a property name that does not start with $ or /")
	}
	if utf8.RuneCountInString(f.Value) > 1000 {
		return InvalidField("value", "at most 1000 characters")
	}
	for _, op := range PersonOperators {
		if f.Operator == op {
			return nil
		}
	}
	return InvalidField("operator", "must be one of eq, neq, contains, is_set, is_not_set")
}

func itoa(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}

// CohortStore keeps cohort definitions and their computation's state.
// Every method is scoped to one product.
type CohortStore interface {
	// CreateCohort stores c (state pending) unless the product has max
	// cohorts.
	CreateCohort(ctx context.Context, c *Cohort, max int) error
	Cohort(ctx context.Context, productID, id int64) (Cohort, error)
	// Cohorts lists a product's cohorts by name, then id.
	Cohorts(ctx context.Context, productID int64) ([]Cohort, error)
	// UpdateCohort replaces name, description and definition; a changed
	// definition makes the state pending.
	UpdateCohort(ctx context.Context, c *Cohort) error
	DeleteCohort(ctx context.Context, productID, id int64) error
	// StartCohort marks the cohort computing and hands out a new
	// generation, unless a computation started after staleBefore is
	// still running (then ok is false).
	StartCohort(ctx context.Context, productID, id int64, staleBefore time.Time) (generation int64, ok bool, err error)
	// FinishCohort makes generation the cohort's members (state ready),
	// unless a later computation finished first (then ok is false).
	FinishCohort(ctx context.Context, productID, id, generation, size int64) (ok bool, err error)
	// AbandonCohort puts back the state a refused upload of generation
	// found (ready, or pending before any members).
	AbandonCohort(ctx context.Context, productID, id, generation int64) error
	// FailCohort records a computation's failure.
	FailCohort(ctx context.Context, productID, id, generation int64, message string) error
	// DueCohorts returns up to limit dynamic cohorts of every product not
	// computed since before (never computed first) and not computing
	// since after staleBefore.
	DueCohorts(ctx context.Context, before, staleBefore time.Time, limit int) ([]Cohort, error)
}

// PersonIDStore streams persons' ids for a cohort's computation. It is
// kept apart from PersonStore, which the profile updater's fakes
// implement; the metadata stores implement both.
type PersonIDStore interface {
	// EachPersonID streams the distinct ids of the product's persons that
	// pass every filter, in byte order.
	EachPersonID(ctx context.Context, productID int64, filters []PersonFilter, fn func(distinctID string) error) error
}

// BehaviorQuery asks for the persons of a product that did Event at least
// AtLeast times since Since, human events of the live environment only.
type BehaviorQuery struct {
	ProductID int64
	Event     string
	AtLeast   int
	Since     time.Time
}

// PersonSetID is the cohort id under which the event store keeps the
// persons that pass one person-property filter of a query (docs/queries.md,
// "Person filters"): below 0, so that no saved cohort has it, and a hash of
// the filter, so that every node names the same filter alike.
func PersonSetID(f PersonFilter) int64 {
	h := fnv.New64a()
	h.Write([]byte(f.Key))
	h.Write([]byte{0})
	h.Write([]byte(f.Operator))
	h.Write([]byte{0})
	h.Write([]byte(f.Value))
	return -int64(h.Sum64()>>2) - 1
}

// CohortMembership is one cohort generation that holds a person.
type CohortMembership struct {
	CohortID   int64
	Generation int64
}

// CohortMemberStore keeps cohort members in the event store, one set per
// (product, cohort, generation), and streams the persons a behaviour
// condition selects. Ids are ordered by their bytes on every store.
type CohortMemberStore interface {
	// AppendCohortMembers adds ids to a generation.
	AppendCohortMembers(ctx context.Context, productID, cohortID, generation int64, ids []string) error
	// CohortSize counts a generation's distinct members.
	CohortSize(ctx context.Context, productID, cohortID, generation int64) (int64, error)
	// CohortMembers returns up to limit distinct members of a generation
	// after the id after, in byte order.
	CohortMembers(ctx context.Context, productID, cohortID, generation int64, after string, limit int) ([]string, error)
	// DropCohortGenerations deletes the cohort's members of every
	// generation but keep (all of them when keep is 0). It may finish
	// after it returns (ClickHouse's mutation); readers name their
	// generation, so none sees it happen.
	DropCohortGenerations(ctx context.Context, productID, cohortID, keep int64) error
	// DropPersonSets deletes the product's person sets (the member sets
	// of person-property filters, cohort ids below 0: PersonSetID) whose
	// generation is below before. It may finish after it returns.
	DropPersonSets(ctx context.Context, productID, before int64) error
	// PersonCohorts lists the cohort generations that hold distinctID.
	PersonCohorts(ctx context.Context, productID int64, distinctID string) ([]CohortMembership, error)
	// DeleteCohortMemberships deletes distinctIDs from every generation
	// of every cohort of the product and waits until they are gone.
	DeleteCohortMemberships(ctx context.Context, productID int64, distinctIDs []string) error
	// EachBehaviorPerson streams the distinct ids q selects in byte order.
	EachBehaviorPerson(ctx context.Context, q BehaviorQuery, fn func(distinctID string) error) error
}
