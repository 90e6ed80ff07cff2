// Package sqlbuild holds what Strata's SQL stores share to write and read
// statements: a Builder that accumulates SQL text with its parameters, and
// Collect, which scans every row of an answer. The DuckDB and ClickHouse
// event stores write their dialects' SQL with it, and the metadata SQL
// (package sqlmeta) reads its rows with it. Only parameters carry values;
// the text is the store's own constants and names it checked.
package sqlbuild

import (
	"fmt"
	"strings"
)

// Builder accumulates a statement's SQL text and its parameters. It writes
// no placeholder itself, since the dialects differ ($1 in DuckDB and
// PostgreSQL, ? in ClickHouse): Bind returns the parameter's number and the
// store writes the placeholder.
type Builder struct {
	sql  strings.Builder
	args []any
}

// Bind adds v as the next parameter and returns its number, from 1.
func (b *Builder) Bind(v any) int {
	b.args = append(b.args, v)
	return len(b.args)
}

// Write appends parts to the text.
func (b *Builder) Write(parts ...string) {
	for _, p := range parts {
		b.sql.WriteString(p)
	}
}

// Printf appends formatted text, for names the store numbers (s1, a2).
func (b *Builder) Printf(format string, args ...any) {
	fmt.Fprintf(&b.sql, format, args...)
}

// Append appends o's text and parameters, in that order, to b's.
func (b *Builder) Append(o *Builder) {
	b.sql.WriteString(o.sql.String())
	b.args = append(b.args, o.args...)
}

// SQL returns the text.
func (b *Builder) SQL() string { return b.sql.String() }

// Args returns the parameters, in the order they were bound.
func (b *Builder) Args() []any { return b.args }

// Rows is what database/sql's rows and the ClickHouse driver's share.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close() error
}

// Collect scans every row of rows with scan and closes them; what names the
// operation in errors.
func Collect[T any, R Rows](what string, rows R, scan func(R) (T, error)) ([]T, error) {
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return out, nil
}
