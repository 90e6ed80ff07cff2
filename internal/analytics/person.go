package analytics

import (
	"context"
	"encoding/json"
	"time"
)

// Person is one distinct id's profile in a product (docs/ingest.md,
// "Person profiles"): the latest value of each property that identify,
// $set and $set_once sent for it, and when its events were first and last
// seen. There is no stitching: a person is a distinct id.
type Person struct {
	ProductID  int64           `json:"-"`
	DistinctID string          `json:"distinctId"`
	Properties json.RawMessage `json:"properties"`
	FirstSeen  time.Time       `json:"firstSeen"`
	LastSeen   time.Time       `json:"lastSeen"`
	UpdatedAt  time.Time       `json:"updatedAt"`
}

// PersonUpdate is what a run of a person's stored events says about the
// person: Set holds the keys to overwrite (identify's traits and $set, the
// latest event's value of each), SetOnce the keys to set only where the
// profile has none yet (the earliest event's value of each), and the
// events' earliest and latest times.
type PersonUpdate struct {
	ProductID  int64
	DistinctID string
	Set        map[string]json.RawMessage
	SetOnce    map[string]json.RawMessage
	FirstSeen  time.Time
	LastSeen   time.Time
	// ExistingOnly applies the update only to a person whose profile
	// exists: a product at its cap of persons gets no new one
	// (docs/security.md, "Person profiles written from events").
	ExistingOnly bool
}

// PersonFilter keeps the persons whose property Key compares true with
// Value, on the property's text form (a string's characters, a number or
// a boolean as JSON writes it): eq, neq (which also keeps the persons
// without the property), contains (case-insensitive), is_set and
// is_not_set (which ignore Value).
type PersonFilter struct {
	Key      string   `json:"key"`
	Operator Operator `json:"operator"`
	Value    string   `json:"value,omitempty"`
}

// PersonOperators are the operators a PersonFilter takes.
var PersonOperators = []Operator{OpEq, OpNeq, OpContains, OpIsSet, OpIsNotSet}

// PersonQuery asks for one page of a product's persons, latest seen first
// (ties by distinct id): those after the cursor, whose distinct id starts
// with Search or whose email or name property contains it
// (case-insensitively), and that pass every filter.
type PersonQuery struct {
	ProductID int64
	Search    string
	Filters   []PersonFilter
	// After, when set, is the last row of the previous page.
	After *PersonCursor
	Limit int
}

// PersonCursor is where a page of persons ends.
type PersonCursor struct {
	LastSeen   time.Time
	DistinctID string
}

// PersonStore keeps person profiles. Every method is scoped to one
// product: a person of another product is ErrNotFound to it and never
// listed.
type PersonStore interface {
	// ApplyPersons merges updates into the profiles, creating the persons
	// that are new: Set overwrites keys, SetOnce sets keys the profile
	// lacks, first seen only moves earlier and last seen only later. An
	// update applied twice changes nothing the second time.
	ApplyPersons(ctx context.Context, updates []PersonUpdate) error
	// Person returns one person, or ErrNotFound.
	Person(ctx context.Context, productID int64, distinctID string) (Person, error)
	// ListPersons returns one page of persons (PersonQuery).
	ListPersons(ctx context.Context, q PersonQuery) ([]Person, error)
	// DeletePersonProfiles deletes the profiles of distinctIDs, returning
	// how many there were.
	DeletePersonProfiles(ctx context.Context, productID int64, distinctIDs []string) (int64, error)
	// CountPersons returns how many profiles the product has.
	CountPersons(ctx context.Context, productID int64) (int64, error)
}

// PersonCountStore counts events per person.
type PersonCountStore interface {
	// PersonEventCounts returns the number of events (all environments)
	// of each of distinctIDs in the product; an id without events is
	// absent from the map.
	PersonEventCounts(ctx context.Context, productID int64, distinctIDs []string) (map[string]int64, error)
}

// PersonHistoryStore is what an event store gives a rebuild of person
// profiles from the events it holds (persons.Rebuild): both stream, and
// hold nothing of what they return.
type PersonHistoryStore interface {
	// EachPersonSeen calls fn with each distinct id of the product's
	// events (every environment) and the times of its first and last
	// event, in no order.
	EachPersonSeen(ctx context.Context, productID int64, fn func(distinctID string, first, last time.Time) error) error
	// EachTraitEvent calls fn, oldest first, with each of the product's
	// events that may set its person's properties: $identify, and events
	// whose properties' text holds "$set (which the caller parses; the
	// store may return more). Event carries its product, distinct id,
	// name, time and properties.
	EachTraitEvent(ctx context.Context, productID int64, fn func(Event) error) error
}
