package analytics

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"
)

// Groups are what users belong to (a company, a team): the SDK's
// group(type, key) sends a group's properties to the groups endpoint and
// tags every later event with the property GroupsProperty, an object from
// group type to group key. Trends and funnels can then count groups
// instead of users (docs/queries.md, "Counting groups").

// GroupsProperty is the event property holding an event's groups:
// {"company": "acme", "team": "data"}.
const GroupsProperty = "$groups"

// Limits of groups (docs/ingest.md, "Groups"). A type is a short
// identifier, since queries name it and DuckDB reads it as part of a JSON
// path; a key is any text.
const (
	MaxGroupsPerEvent = 5
	MaxGroupKeyChars  = 200
	DefaultGroupList  = 100
	MaxGroupList      = 1000
)

// groupTypeRE is the form of a group type.
var groupTypeRE = regexp.MustCompile(`^[a-z][a-z0-9_]{0,31}$`)

// ValidGroupType reports whether t is a group type: a lower-case letter,
// then at most 31 lower-case letters, digits or underscores.
func ValidGroupType(t string) bool { return groupTypeRE.MatchString(t) }

// ValidGroupKey reports whether k is a group key: 1 to MaxGroupKeyChars
// characters of valid UTF-8 without NUL.
func ValidGroupKey(k string) bool {
	n := utf8.RuneCountInString(k)
	return n >= 1 && n <= MaxGroupKeyChars && utf8.ValidString(k) && !strings.ContainsRune(k, 0)
}

// CheckGroupType validates a group type named by a request field.
func CheckGroupType(field, t string) error {
	if !ValidGroupType(t) {
		return InvalidField(field, "a group type is a lower-case letter then up to 31 lower-case letters, digits or underscores, not %q", t)
	}
	return nil
}

// CheckGroupKey validates a group key named by a request field.
func CheckGroupKey(field, k string) error {
	if !ValidGroupKey(k) {
		return InvalidField(field, "a group key is 1 to %d characters of text without NUL", MaxGroupKeyChars)
	}
	return nil
}

// Group is one group's profile: the properties last sent for it, merged
// key by key over the ones sent before.
type Group struct {
	ProductID  int64           `json:"-"`
	Type       string          `json:"type"`
	Key        string          `json:"key"`
	Properties json.RawMessage `json:"properties"`
	CreatedAt  time.Time       `json:"createdAt"`
	UpdatedAt  time.Time       `json:"updatedAt"`
}

// GroupStore keeps group profiles. Every method is scoped to one product:
// a group of another product is ErrNotFound to it and never listed.
type GroupStore interface {
	// UpsertGroup creates the group (productID, groupType, key) with
	// properties, a JSON object, or merges them into the stored ones: a
	// key sent replaces the stored value, a key not sent stays. It
	// returns the group as stored. The caller validates the type, the key
	// and that properties is an object.
	UpsertGroup(ctx context.Context, productID int64, groupType, key string, properties json.RawMessage) (Group, error)
	// Group returns one group, or ErrNotFound.
	Group(ctx context.Context, productID int64, groupType, key string) (Group, error)
	// ListGroups returns a product's groups of one type, or of every type
	// when groupType is "", most recently updated first (ties by type and
	// key), at most limit of them.
	ListGroups(ctx context.Context, productID int64, groupType string, limit int) ([]Group, error)
	// GroupTypes returns the group types a product has groups of, in
	// order.
	GroupTypes(ctx context.Context, productID int64) ([]string, error)
}
