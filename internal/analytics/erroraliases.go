package analytics

import (
	"context"
	"maps"
	"slices"
	"time"
)

// ErrorAlias records that the $exception events of one fingerprint belong
// to another's group (docs/errors.md, "One bug, one group"): ingest records
// one when a sourcemap uploaded after a bug's first errors de-minifies its
// frames into a new fingerprint (Reason AliasSourcemap), and a person when
// they merge groups (AliasMerge). Into is never itself an alias.
type ErrorAlias struct {
	Fingerprint string    `json:"fingerprint"`
	Into        string    `json:"into"`
	Reason      string    `json:"reason"`
	CreatedAt   time.Time `json:"createdAt"`
	CreatedBy   string    `json:"createdBy"`
}

// Why an alias was recorded.
const (
	AliasSourcemap = "sourcemap"
	AliasMerge     = "merge"
)

// ErrorAliasStore keeps the aliases of error groups, per product, in the
// metadata store, so that every node reads the same groups.
type ErrorAliasStore interface {
	// ErrorAliases returns a product's aliases: fingerprint → the group
	// its events count in.
	ErrorAliases(ctx context.Context, productID int64) (map[string]string, error)
	// AddErrorAlias records a.Fingerprint → a.Into unless the fingerprint
	// already has an alias, and returns the group it counts in now (the
	// alias recorded first wins, on every node); a.Into that is itself an
	// alias is followed. A product that has max aliases (max > 0) gets
	// ErrorAliasesFull.
	AddErrorAlias(ctx context.Context, productID int64, a ErrorAlias, max int) (string, error)
	// MergeErrorGroups makes every fingerprint of groups an alias of into
	// (followed, when it is an alias itself), in one transaction: the
	// aliases that pointed at a merged group point at into. It returns
	// the group they were merged into. Over max aliases (max > 0), nothing
	// is recorded and the answer is ErrorAliasesFull.
	MergeErrorGroups(ctx context.Context, productID int64, into string, groups []string, by string, max int) (string, error)
	// MergedErrorGroups returns the aliases of the fingerprints merged
	// into the group into (by a person or by ingest), newest first.
	MergedErrorGroups(ctx context.Context, productID int64, into string) ([]ErrorAlias, error)
	// UnmergeErrorGroups deletes the aliases of fingerprints, in one
	// transaction, and returns them as they were, so that each one's
	// events count in its own group again. A fingerprint that is not an
	// alias of the product (another product's included) gets
	// ErrorGroupNotMerged, and nothing is deleted.
	UnmergeErrorGroups(ctx context.Context, productID int64, fingerprints []string) ([]ErrorAlias, error)
}

// ErrorAliasesFull is the refusal of an alias past a product's cap.
func ErrorAliasesFull(max int) error {
	return Errorf(KindForbidden, "error_aliases_full",
		"This product has %d merged error groups, the most the server keeps (--error-alias-limit): no more groups can be merged. Ask the operator to raise the limit.", max)
}

// ErrorGroupNotMerged is the refusal to unmerge a fingerprint that is not
// merged into another group of the product.
func ErrorGroupNotMerged(fingerprint string) error {
	if r := []rune(fingerprint); len(r) > 80 {
		fingerprint = string(r[:79]) + "…"
	}
	return Errorf(KindNotFound, "error_group_not_found",
		"The error group %s is not merged into another group of this product: unmerge only the groups a group's page lists under \"Merged groups\".", fingerprint)
}

// AliasMembers returns the fingerprints whose events count in the group of
// fingerprint, sorted: fingerprint itself unless it is an alias, and the
// fingerprints merged into it.
func AliasMembers(aliases map[string]string, fingerprint string) []string {
	var out []string
	if _, ok := aliases[fingerprint]; !ok {
		out = append(out, fingerprint)
	}
	for fp, into := range aliases {
		if into == fingerprint {
			out = append(out, fp)
		}
	}
	slices.Sort(out)
	return out
}

// SortedAliases returns the aliases' fingerprints in order, so that a
// statement built from them is the same each time.
func SortedAliases(aliases map[string]string) []string {
	return slices.Sorted(maps.Keys(aliases))
}
