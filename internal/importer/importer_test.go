package importer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"strata/internal/analytics"
	"strata/internal/enrich/bots"
	"strata/internal/enrich/ua"
	"strata/internal/ingest"
	"strata/internal/store/duckdb"
	"strata/internal/store/duckdb/duckdbtest"
)

// importFixture is a real DuckDB store with one product, and a target
// that writes into it as `strata import --fast` does.
type importFixture struct {
	db      *duckdb.Store
	product int64
	sink    Local
	writes  int
}

func newImportFixture(t testing.TB) *importFixture {
	t.Helper()
	db := duckdbtest.Open(t)
	ctx := context.Background()
	ws, err := db.CreateWorkspace(ctx, "W")
	if err != nil {
		t.Fatal(err)
	}
	p, err := db.CreateProduct(ctx, ws.ID, "P")
	if err != nil {
		t.Fatal(err)
	}
	f := &importFixture{db: db, product: p.ID}
	target := &Target{
		Pipeline: &ingest.Pipeline{UA: ua.NewParser(1000, bots.Default())},
		Stored:   db,
		Write: func(ctx context.Context, ps []ingest.Pending) error {
			f.writes++
			events := make([]analytics.Event, len(ps))
			for i := range ps {
				events[i] = ps[i].Event
			}
			return db.AppendEvents(ctx, events)
		},
		Now: time.Now,
	}
	f.sink = Local{Target: target, Product: p.ID, Env: analytics.EnvLive}
	return f
}

// stored reads the product's events as name → count, and the
// $migrated_from of each.
func (f *importFixture) stored(t *testing.T) (names map[string]int, sources map[string]int) {
	t.Helper()
	rows, err := f.db.DB().Query(`SELECT event, json_extract_string(properties, '$."$migrated_from"') FROM events WHERE product_id = $1`, f.product)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	names, sources = map[string]int{}, map[string]int{}
	for rows.Next() {
		var name string
		var src *string
		if err := rows.Scan(&name, &src); err != nil {
			t.Fatal(err)
		}
		names[name]++
		if src != nil {
			sources[*src]++
		} else {
			sources[""]++
		}
	}
	return names, sources
}

// postHogFile writes n PostHog JSON lines: page views by a browser, a few
// by GPTBot, one event whose name ingest refuses, and one line that is not
// an event.
func postHogFile(t *testing.T, n int) string {
	t.Helper()
	var b strings.Builder
	for i := 0; i < n; i++ {
		rec := map[string]any{"uuid": fmt.Sprintf("u-%d", i), "event": "$pageview", "distinct_id": fmt.Sprintf("user-%d", i%7),
			"timestamp":  time.Date(2026, 10, 1+i%20, i%24, 0, 0, 0, time.UTC).Format(time.RFC3339),
			"properties": map[string]any{"$current_url": fmt.Sprintf("https://ex.com/p%d", i%3), "$raw_user_agent": "Mozilla/5.0 (X11; Linux x86_64; rv:120.0) Gecko/20100101 Firefox/120.0"}}
		if i%10 == 9 {
			rec["properties"].(map[string]any)["$raw_user_agent"] = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)"
		}
		b.WriteString(vendorJSONLine(t, rec))
	}
	b.WriteString(vendorJSONLine(t, map[string]any{"uuid": "long", "event": strings.Repeat("e", 300), "distinct_id": "x", "timestamp": "2026-10-01T00:00:00Z"}))
	b.WriteString("[]\n")
	path := filepath.Join(t.TempDir(), "export.jsonl")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestImportStoresEachEventOnce(t *testing.T) {
	f := newImportFixture(t)
	file := postHogFile(t, 100)
	opt := Options{Source: PostHog{}, Batch: 30}
	rep, err := Run(context.Background(), f.sink, opt, file)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Imported != 100 || rep.Duplicates != 0 || rep.Refused["invalid_event_name"] != 1 || rep.Unmapped[vendorBadJSON] != 1 {
		t.Fatalf("first import: %+v", rep.Result)
	}
	names, sources := f.stored(t)
	// Every tenth page view is GPTBot's: a bot's page view, as at ingest.
	if names["$pageview"] != 90 || names["$bot_pageview"] != 10 || len(names) != 2 {
		t.Errorf("stored events %v", names)
	}
	if sources["posthog"] != 100 || len(sources) != 1 {
		t.Errorf("$migrated_from %v", sources)
	}
	if rep.Examples["invalid_event_name"] == "" {
		t.Error("no example of the refusal")
	}

	// The same file again (no checkpoints): nothing is stored twice, each
	// event is reported as stored before.
	rep, err = Run(context.Background(), f.sink, opt, file)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Imported != 0 || rep.Duplicates != 100 {
		t.Errorf("second import: %+v", rep.Result)
	}
	if names, _ := f.stored(t); names["$pageview"]+names["$bot_pageview"] != 100 {
		t.Errorf("after importing twice: %v", names)
	}
}

// failingSink fails the batch after ok batches, as a server that stops
// mid-import does.
type failingSink struct {
	Sink
	ok int
}

func (s *failingSink) ImportBatch(ctx context.Context, batch []json.RawMessage) (Result, error) {
	if s.ok == 0 {
		return Result{}, errors.New("the server went away")
	}
	s.ok--
	return s.Sink.ImportBatch(ctx, batch)
}

func TestImportResumes(t *testing.T) {
	f := newImportFixture(t)
	file := postHogFile(t, 100)
	opt := Options{Source: PostHog{}, Batch: 25, Checkpoints: t.TempDir()}
	rep, err := Run(context.Background(), &failingSink{Sink: f.sink, ok: 2}, opt, file)
	if err == nil || !strings.Contains(err.Error(), "went away") || rep.Imported != 50 {
		t.Fatalf("interrupted import: %+v, %v", rep.Result, err)
	}
	writes := f.writes
	rep, err = Run(context.Background(), f.sink, opt, file)
	if err != nil {
		t.Fatal(err)
	}
	// The rerun reads on from the 51st record: nothing stored before is
	// sent again.
	if rep.Skipped != 50 || rep.Imported != 50 || rep.Duplicates != 0 || f.writes-writes != 2 {
		t.Errorf("resumed import: %+v skipped %d, %d writes", rep.Result, rep.Skipped, f.writes-writes)
	}
	if names, _ := f.stored(t); names["$pageview"]+names["$bot_pageview"] != 100 {
		t.Errorf("after the resume: %v", names)
	}
	// A third run finds the file done.
	rep, err = Run(context.Background(), f.sink, opt, file)
	if err != nil || len(rep.Done) != 1 || rep.Imported != 0 {
		t.Errorf("third run: %+v %v, %v", rep.Result, rep.Done, err)
	}
	// A changed file is not mistaken for the one imported.
	if err := os.WriteFile(file, []byte(vendorJSONLine(t, map[string]any{"event": "new", "distinct_id": "a", "timestamp": "2026-10-02T00:00:00Z"})), 0o600); err != nil {
		t.Fatal(err)
	}
	rep, err = Run(context.Background(), f.sink, opt, file)
	if err != nil || rep.Imported != 1 || len(rep.Done) != 0 {
		t.Errorf("a changed file: %+v %v, %v", rep.Result, rep.Done, err)
	}
}

func TestImportDryRunWritesNothing(t *testing.T) {
	f := newImportFixture(t)
	file := postHogFile(t, 40)
	rep, err := Run(context.Background(), f.sink, Options{Source: PostHog{}, Batch: 500, DryRun: true, Checkpoints: t.TempDir()}, file)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Imported != 41 || rep.Unmapped[vendorBadJSON] != 1 || rep.Names["$pageview"] != 40 {
		t.Errorf("dry run: %+v %v", rep.Result, rep.Names)
	}
	if names, _ := f.stored(t); len(names) != 0 || f.writes != 0 {
		t.Errorf("a dry run stored %v", names)
	}
}

func TestEventUUIDIsStable(t *testing.T) {
	a, b := EventUUID("posthog", "x"), EventUUID("posthog", "x")
	if a != b || a == EventUUID("mixpanel", "x") || a == EventUUID("posthog", "y") {
		t.Errorf("uuids %v %v", a, b)
	}
	// The namespace is part of the format (the value is Python's uuid.uuid5
	// of the same name, computed apart): a changed one would store every
	// file imported before a second time.
	if got := EventUUID("posthog", "0191f0c4-0000-7000-8000-000000000001").String(); got != "2e8c23cf-6dd6-562a-9352-f00adbf6c5e4" {
		t.Errorf("EventUUID = %s", got)
	}
}
