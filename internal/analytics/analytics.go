// Package analytics holds Strata's domain types, its error vocabulary and the
// storage contracts every backend implements, each beside the type it
// stores, and the rules a value must meet before it is stored (such as
// Annotation.Validate). It performs no I/O: the store packages (duckdb,
// clickhouse, postgres and the SQL they share) depend on it, never the other
// way round, so a new storage engine is a new folder, not edits across
// handlers.
package analytics
