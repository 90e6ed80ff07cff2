// Package duckdbtest opens real embedded stores for the tests of the
// packages that run on one: services, handlers, jobs. Each store lives in
// a directory of the test's own and is closed when the test ends.
package duckdbtest

import (
	"context"
	"testing"

	"strata/internal/analytics"
	"strata/internal/store/duckdb"
)

// Open opens a store in a fresh directory, closed when the test ends.
func Open(t testing.TB) *duckdb.Store {
	t.Helper()
	st, err := duckdb.Open(context.Background(), t.TempDir(), duckdb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// Product opens a store (Open) with one workspace, "W", and one product in
// it, "P".
func Product(t testing.TB) (*duckdb.Store, analytics.Product) {
	t.Helper()
	st := Open(t)
	return st, NewProduct(t, st, "P")
}

// NewProduct creates a product named name in a new workspace of st.
func NewProduct(t testing.TB, st *duckdb.Store, name string) analytics.Product {
	t.Helper()
	ctx := context.Background()
	ws, err := st.CreateWorkspace(ctx, "W")
	if err != nil {
		t.Fatal(err)
	}
	p, err := st.CreateProduct(ctx, ws.ID, name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TxWrapped is a store whose transactions hand each change Wrap(tx) in
// place of tx: a test wraps the transaction to make one of a change's
// writes fail, as a failing disk would, and checks what is left.
type TxWrapped struct {
	*duckdb.Store
	Wrap func(analytics.MetaTx) analytics.MetaTx
}

// InTx runs fn in one of the store's transactions, through Wrap.
func (s TxWrapped) InTx(ctx context.Context, fn func(analytics.MetaTx) error) error {
	return s.Store.InTx(ctx, func(tx analytics.MetaTx) error { return fn(s.Wrap(tx)) })
}
