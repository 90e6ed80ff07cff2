package errtrack

import (
	"context"
	"unicode/utf8"

	"strata/internal/analytics"
)

// MaxUnmerged bounds the fingerprints one unmerge names, as a merge's.
const MaxUnmerged = 50

// Unmerge takes fingerprints out of the groups they were merged into
// (docs/errors.md, "Unmerging"): their aliases are deleted in one
// transaction, whoever recorded them (a person's merge, or ingest for a
// sourcemap uploaded late), so that every event of each fingerprint, those
// stored while it was merged too, counts in its own group again, with the
// status that group had before the merge. It returns the aliases as they
// were. A fingerprint that is not an alias of the product is
// error_group_not_found, and nothing is unmerged.
//
// A fingerprint merged into a group that was then merged into another (A
// into B, B into C) was moved to C by the second merge: unmerging A makes
// it its own group again, not part of B; unmerging B leaves A in C.
func Unmerge(ctx context.Context, aliases analytics.ErrorAliasStore, productID int64, fingerprints []string) ([]analytics.ErrorAlias, error) {
	if len(fingerprints) == 0 || len(fingerprints) > MaxUnmerged {
		return nil, analytics.InvalidField("groups", "must name 1 to %d merged groups to unmerge", MaxUnmerged)
	}
	for _, fp := range fingerprints {
		if fp == "" || utf8.RuneCountInString(fp) > 200 {
			return nil, analytics.InvalidField("groups", "must be fingerprints of groups, 1 to 200 characters each")
		}
	}
	return aliases.UnmergeErrorGroups(ctx, productID, fingerprints)
}
