package analytics

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Limits of a flag (docs/flags.md, "Flags").
const (
	MaxFlagKey          = 64
	MaxFlagName         = 120
	MaxFlagDescription  = 2000
	MaxFlagVariants     = 4
	MaxVariantPayload   = 4096 // bytes of JSON
	MaxFlagConditions   = 20
	maxBasisPoints      = 10000
	hundredthsTolerance = 1e-9
)

// slugRE is what a flag or variant key may be: lower-case letters and
// digits, with single underscores or hyphens between them.
var slugRE = regexp.MustCompile(`^[a-z0-9]+(?:[_-][a-z0-9]+)*$`)

// Flag is a feature flag of a product: on for a percentage of users
// (Rollout), and, with Variants, splitting them between arms. The SDKs
// evaluate it where the user is (docs/flags.md).
type Flag struct {
	ID        int64 `json:"id"`
	ProductID int64 `json:"productId"`
	// Key names the flag in code (getVariant("key")); unique in the
	// product and unchangeable once created.
	Key         string `json:"key"`
	Name        string `json:"name"`
	Description string `json:"description"`
	Enabled     bool   `json:"enabled"`
	// Rollout is the percentage of users who get the flag, 0–100 with at
	// most two decimals.
	Rollout float64 `json:"rollout"`
	// Variants are the arms in order, with weights summing to 100; none
	// for a flag that is only on or off.
	Variants []FlagVariant `json:"variants"`
	// Conditions target the flag (docs/flags.md, "Targeting"): a user
	// whose properties fail one gets control and is excluded from the
	// flag's experiment. None targets every user.
	Conditions []FlagCondition `json:"conditions"`
	CreatedAt  time.Time       `json:"createdAt"`
	UpdatedAt  time.Time       `json:"updatedAt"`
}

// FlagCondition is one targeting condition of a flag (docs/flags.md,
// "Targeting"), of one of two types:
//   - "trait": the user property Trait compared by Op with Value, with the
//     operators and the text form of a message audience's trait condition;
//   - "cohort": the user is (Op "in") or is not ("not_in") a member of
//     the product's cohort CohortID, as the server computed it. Trait is
//     empty and Value "".
//
// Every evaluator fails a condition of a type it does not know, so that
// an SDK older than a type never shows a flag to users it does not target.
type FlagCondition struct {
	Type     string `json:"type"`
	Trait    string `json:"trait,omitempty"`
	CohortID int64  `json:"cohortId,omitempty"`
	Op       string `json:"op"`
	Value    string `json:"value"`
}

// The types of a targeting condition: a user property, a cohort.
const (
	FlagConditionTrait  = "trait"
	FlagConditionCohort = "cohort"
)

// FlagVariant is one arm of a flag: its key, its share of the flag's users
// in percent (two decimals at most) and an optional JSON payload the SDK
// hands to the page with it.
type FlagVariant struct {
	Key     string          `json:"key"`
	Weight  float64         `json:"weight"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

// hundredths reports whether x has at most two decimals.
func hundredths(x float64) bool {
	return math.Abs(x*100-math.Round(x*100)) < hundredthsTolerance
}

// validPercent checks a percentage from 0 to max with at most two
// decimals: a rollout, an arm's weight, an audience, a holdout.
func validPercent(field string, x float64, max int) error {
	if x < 0 || x > float64(max) || !hundredths(x) {
		return InvalidField(field, "must be a percentage from 0 to %d with at most two decimals, not %v", max, x)
	}
	return nil
}

// ReservedVariants are the variants an $exposure names for a user who is
// in no arm: the experiment's holdout, and a user outside the flag's
// rollout. No arm may take these keys, or its users would be counted with
// the users who are not in the experiment.
var ReservedVariants = []string{"holdout", "excluded"}

// validArm checks an arm's key (a slug, not reserved, not one of seen,
// which it joins) and weight, and returns the weight in basis points; of
// says whose arm a repeated key already is ("an arm of this flag").
func validArm(field, key string, weight float64, seen map[string]bool, of string) (int, error) {
	if err := validSlug(field+".key", key); err != nil {
		return 0, err
	}
	if slices.Contains(ReservedVariants, key) {
		return 0, InvalidField(field+".key", "%q names the users who are in no arm (the holdout, or users outside the rollout); give the arm another key", key)
	}
	if seen[key] {
		return 0, InvalidField(field+".key", "%q is already %s", key, of)
	}
	seen[key] = true
	if err := validPercent(field+".weight", weight, 100); err != nil {
		return 0, err
	}
	return BasisPoints(weight), nil
}

// BasisPoints is a percentage with at most two decimals as a whole number
// of hundredths of a percent: what the stores keep, exactly.
func BasisPoints(percent float64) int { return int(math.Round(percent * 100)) }

// Validate checks every rule a flag's own fields must meet before it is
// stored, in field order, and returns the first fault as an InvalidField
// error. Whether the key is free in the product is the store's check.
func (f *Flag) Validate() error {
	if err := validSlug("key", f.Key); err != nil {
		return err
	}
	if err := validName(f.Name); err != nil {
		return err
	}
	if n := utf8.RuneCountInString(f.Description); n > MaxFlagDescription {
		return InvalidField("description", "must be at most %d characters, not %d", MaxFlagDescription, n)
	}
	if strings.ContainsRune(f.Description, 0) {
		return InvalidField("description", "must not contain NUL characters")
	}
	if err := validPercent("rollout", f.Rollout, 100); err != nil {
		return err
	}
	if err := validVariants(f.Variants); err != nil {
		return err
	}
	return validFlagConditions(f.Conditions)
}

// validFlagConditions checks a flag's targeting conditions, and sets the
// type of a condition that left it out to trait: at most
// MaxFlagConditions, each by the rules of a message audience's condition
// (validCondition). Whether a cohort exists is the caller's check
// (CheckCohorts).
func validFlagConditions(conds []FlagCondition) error {
	if len(conds) > MaxFlagConditions {
		return InvalidField("conditions", "must list at most %d conditions, not %d", MaxFlagConditions, len(conds))
	}
	for i := range conds {
		c := &conds[i]
		if c.Type == "" {
			c.Type = FlagConditionTrait
		}
		tc := TraitCondition{Type: c.Type, Trait: c.Trait, CohortID: c.CohortID, Op: c.Op, Value: c.Value}
		if err := validCondition("conditions["+strconv.Itoa(i)+"]", tc); err != nil {
			return err
		}
	}
	return nil
}

// validName checks a flag's or an experiment's name: one line of 1 to
// MaxFlagName characters.
func validName(name string) error {
	switch n := utf8.RuneCountInString(name); {
	case strings.TrimSpace(name) == "":
		return InvalidField("name", "is required")
	case n > MaxFlagName:
		return InvalidField("name", "must be at most %d characters, not %d", MaxFlagName, n)
	case strings.IndexFunc(name, unicode.IsControl) >= 0:
		return InvalidField("name", "must not contain control characters such as line breaks")
	}
	return nil
}

// validSlug checks a flag or variant key.
func validSlug(field, key string) error {
	if key == "" {
		return InvalidField(field, "is required")
	}
	if len(key) > MaxFlagKey || !slugRE.MatchString(key) {
		return InvalidField(field, "must be 1 to %d lower-case letters and digits, with single _ or - between them (pricing_copy_test), not %q", MaxFlagKey, key)
	}
	return nil
}

// validVariants checks a flag's arms: none, or 2 to MaxFlagVariants with
// distinct keys and weights that sum to exactly 100.
func validVariants(vs []FlagVariant) error {
	if len(vs) == 0 {
		return nil
	}
	if len(vs) < 2 || len(vs) > MaxFlagVariants {
		return InvalidField("variants", "must list 2 to %d arms, or none for an on/off flag, not %d", MaxFlagVariants, len(vs))
	}
	seen := map[string]bool{}
	total := 0
	for i, v := range vs {
		field := "variants[" + strconv.Itoa(i) + "]"
		w, err := validArm(field, v.Key, v.Weight, seen, "an arm of this flag")
		if err != nil {
			return err
		}
		total += w
		if len(v.Payload) > MaxVariantPayload {
			return InvalidField(field+".payload", "must be at most %d bytes of JSON, not %d", MaxVariantPayload, len(v.Payload))
		}
		if len(v.Payload) > 0 && !json.Valid(v.Payload) {
			return InvalidField(field+".payload", "must be JSON")
		}
	}
	if total != maxBasisPoints {
		return InvalidField("variants", "the weights must sum to 100, not %v", float64(total)/100)
	}
	return nil
}

// FlagChange is one entry of a flag's audit trail: who changed it, when,
// and each field's value before and after.
type FlagChange struct {
	ID        int64  `json:"id"`
	ProductID int64  `json:"-"`
	FlagID    int64  `json:"flagId"`
	FlagKey   string `json:"flagKey"`
	// Action is created, updated or deleted.
	Action string `json:"action"`
	// Actor describes the credential that made the change, as an
	// annotation's createdBy does, never its secret.
	Actor   string        `json:"actor"`
	Changes []FieldChange `json:"changes"`
	At      time.Time     `json:"at"`
}

// FieldChange is one field of a flag before and after a change; From is
// null for a created flag, To for a deleted one.
type FieldChange struct {
	Field string `json:"field"`
	From  any    `json:"from"`
	To    any    `json:"to"`
}

// ChangesFrom lists the fields in which f differs from old, in field
// order; for a created flag old is nil and every field is listed.
func (f *Flag) ChangesFrom(old *Flag) []FieldChange {
	fields := func(x *Flag) []any {
		if x == nil {
			return make([]any, 7)
		}
		variants := x.Variants
		if variants == nil {
			variants = []FlagVariant{}
		}
		conditions := x.Conditions
		if conditions == nil {
			conditions = []FlagCondition{}
		}
		return []any{x.Key, x.Name, x.Description, x.Enabled, x.Rollout, variants, conditions}
	}
	names := []string{"key", "name", "description", "enabled", "rollout", "variants", "conditions"}
	before, after := fields(old), fields(f)
	var out []FieldChange
	for i, name := range names {
		b, _ := json.Marshal(before[i])
		a, _ := json.Marshal(after[i])
		if old == nil || string(a) != string(b) {
			out = append(out, FieldChange{Field: name, From: before[i], To: after[i]})
		}
	}
	return out
}

// SameSplit reports whether two lists of arms split users the same way:
// the same keys in the same order with the same weights (payloads aside).
func SameSplit(a, b []FlagVariant) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Key != b[i].Key || BasisPoints(a[i].Weight) != BasisPoints(b[i].Weight) {
			return false
		}
	}
	return true
}

// ErrDuplicate is returned by a store when a row's unique name (a flag's
// key in its product) is taken.
var ErrDuplicate = errors.New("already exists")

// FlagStore keeps the flags of products and their audit trail. Every
// method is scoped to one product: a flag of another product is
// ErrNotFound to it. Every write records its change in the same

// ErrFlagNotFound and ErrFlagKeyTaken are the answers for a flag id the
// product does not have and for a key it has already.
var (
	ErrFlagNotFound = Errorf(KindNotFound, "flag_not_found", "There is no flag with this id in this product.")
	ErrFlagKeyTaken = Errorf(KindConflict, "flag_key_taken", "This product already has a flag with this key; pick another key.")
)

// transaction, so the trail holds exactly what was stored.
type FlagStore interface {
	// CreateFlag stores f (ProductID and the validated fields set), fills
	// in its ID and times, and records the creation by actor. A key taken
	// in the product is ErrDuplicate, and nothing is stored.
	CreateFlag(ctx context.Context, f *Flag, actor string) error
	// Flag returns one flag of a product, or ErrNotFound.
	Flag(ctx context.Context, productID, id int64) (Flag, error)
	// ListFlags returns a product's flags, oldest first.
	ListFlags(ctx context.Context, productID int64) ([]Flag, error)
	// UpdateFlag replaces a flag's name, description, enabled, rollout and
	// variants (never its key), sets UpdatedAt and records what changed,
	// or returns ErrNotFound. A change that changes nothing records
	// nothing.
	UpdateFlag(ctx context.Context, f *Flag, actor string) error
	// DeleteFlag removes a flag and records it, or returns ErrNotFound.
	// Its trail stays.
	DeleteFlag(ctx context.Context, productID, id int64, actor string) error
	// FlagChanges returns a product's trail of one flag, newest first, or
	// of all its flags when flagID is 0.
	FlagChanges(ctx context.Context, productID, flagID int64) ([]FlagChange, error)
}

// Slug makes a flag key from a name, as an experiment's flag key is made
// from the experiment's name: lower case, every run of other characters
// one underscore, at most MaxFlagKey bytes ("Pricing copy test" →
// "pricing_copy_test"). Letters outside a–z are dropped, not transliterated;
// a name with none left gives "", which Validate refuses.
func Slug(name string) string {
	var b strings.Builder
	gap := false
	for _, r := range strings.ToLower(name) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			if gap && b.Len() > 0 {
				b.WriteByte('_')
			}
			gap = false
			b.WriteRune(r)
			continue
		}
		gap = true
	}
	s := b.String()
	if len(s) > MaxFlagKey {
		s = strings.TrimRight(s[:MaxFlagKey], "_")
	}
	return s
}
