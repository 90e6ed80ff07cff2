package main

import (
	"context"
	"os"

	"strata/internal/analytics"
	"strata/internal/store/duckdb"
)

// loader fills a new embedded store in process, for the benchmarks that
// time queries over data they do not need to ingest over HTTP (ingest has
// its own benchmark). Events go to product, in commits of loadBatch.
type loader struct {
	*duckdb.Store
	product analytics.Product
	batch   []analytics.Event
	n       int
	tag     byte
}

// loadBatch is how many events one commit of a loader holds.
const loadBatch = 100_000

// openLoader opens a new store in dataDir with workspace and product
// "Bench". tag goes into every event's uuid, so that two benchmarks'
// events never share one.
func openLoader(ctx context.Context, dataDir string, tag byte) (*loader, error) {
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, err
	}
	st, err := duckdb.Open(ctx, dataDir, duckdb.Options{})
	if err != nil {
		return nil, err
	}
	ws, err := st.CreateWorkspace(ctx, "Bench")
	if err != nil {
		st.Close()
		return nil, err
	}
	p, err := st.CreateProduct(ctx, ws.ID, "Bench")
	if err != nil {
		st.Close()
		return nil, err
	}
	return &loader{Store: st, product: p, tag: tag}, nil
}

// add stores ev (its ProductID and UUID set here) in the next commit.
func (l *loader) add(ctx context.Context, ev analytics.Event) error {
	ev.ProductID = l.product.ID
	ev.UUID[0], ev.UUID[1], ev.UUID[2], ev.UUID[3], ev.UUID[4] = byte(l.n>>24), byte(l.n>>16), byte(l.n>>8), byte(l.n), l.tag
	l.n++
	l.batch = append(l.batch, ev)
	if len(l.batch) < loadBatch {
		return nil
	}
	return l.flush(ctx)
}

func (l *loader) flush(ctx context.Context) error {
	err := l.AppendEvents(ctx, l.batch)
	l.batch = l.batch[:0]
	return err
}

// close commits what is left and closes the store, so that a server can
// open it.
func (l *loader) close(ctx context.Context) error {
	if err := l.flush(ctx); err != nil {
		l.Store.Close()
		return err
	}
	return l.Store.Close()
}
