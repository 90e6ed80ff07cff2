package privacy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"strata/internal/analytics"
	"strata/internal/ingest"
	"strata/internal/store/duckdb"
)

func openStore(t *testing.T, dir string) *duckdb.Store {
	t.Helper()
	s, err := duckdb.Open(context.Background(), dir, duckdb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func events(product int64, users ...string) []analytics.Event {
	var out []analytics.Event
	at := time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)
	for i, u := range users {
		e := analytics.Event{ProductID: product, Env: analytics.EnvLive, Timestamp: at.Add(time.Duration(i) * time.Minute),
			ReceivedAt: at, Name: "$pageview", DistinctID: u, UserID: ingest.UserID(u), Properties: json.RawMessage(`{}`)}
		e.UUID[0], e.UUID[1] = 0x42, byte(i)
		out = append(out, e)
	}
	return out
}

func kinds(s *duckdb.Store) []PersonData {
	return []PersonData{Events{Store: s}, SurveyResponses{Store: s}, MessageStates{Store: s}}
}

func countEvents(t *testing.T, s *duckdb.Store, product int64, user string) int {
	t.Helper()
	n := 0
	if err := s.PersonEvents(context.Background(), product, user, func(analytics.ExportedEvent) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	return n
}

// waitJob polls a job until it ends.
func waitJob(t *testing.T, s analytics.PrivacyStore, product, id int64) analytics.PersonDeletion {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		d, err := s.PersonDeletion(context.Background(), product, id)
		if err != nil {
			t.Fatal(err)
		}
		if d.Status == analytics.DeletionDone || d.Status == analytics.DeletionFailed {
			return d
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %d still %s", id, d.Status)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestJobResumesAfterACrash leaves a job running in the data directory
// (as a crash in the middle of it does, its survey responses already
// deleted), opens the directory again and starts the runner: the job is
// taken up, ends done, alice's events are gone, bob's are not, and the job
// no longer holds the ids.
func TestJobResumesAfterACrash(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openStore(t, dir)
	if err := s.AppendEvents(ctx, events(1, "alice", "alice", "bob")); err != nil {
		t.Fatal(err)
	}
	d := analytics.PersonDeletion{ProductID: 1, DistinctIDs: []string{"alice"}, Actor: "test"}
	if err := s.CreatePersonDeletion(ctx, &d); err != nil {
		t.Fatal(err)
	}
	d.Status = analytics.DeletionRunning
	if err := s.UpdatePersonDeletion(ctx, &d); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s = openStore(t, dir)
	defer s.Close()
	svc := New(s, nil, kinds(s)...)
	run, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); svc.Run(run) }()
	defer func() { stop(); <-done }()
	got := waitJob(t, s, 1, d.ID)
	if got.Status != analytics.DeletionDone || got.Counts["events"] != 2 || len(got.DistinctIDs) != 0 {
		t.Fatalf("the resumed job: %+v", got)
	}
	if a, b := countEvents(t, s, 1, "alice"), countEvents(t, s, 1, "bob"); a != 0 || b != 1 {
		t.Errorf("after the job: alice %d events, bob %d; want 0 and 1", a, b)
	}
	log, err := s.AuditLog(ctx, 1, 0, 10)
	if err != nil || len(log) != 1 || log[0].Action != analytics.AuditDeletionDone || strings.Contains(log[0].Summary, "alice") {
		t.Errorf("audit log: %+v, %v", log, err)
	}
}

// failing is a kind whose store fails, as a full disk makes it.
type failing struct{}

func (failing) Name() string { return "broken" }
func (failing) DeletePersons(context.Context, int64, []string) (int64, error) {
	return 0, errors.New("disk full")
}
func (failing) ExportPerson(context.Context, int64, string, func(any) error) error { return nil }

// TestRequestsAndFailures requests deletions through the service: bad
// lists are refused before a job exists, a kind that fails makes the job
// failed with its reason (and an audit entry saying so), the product's
// unfinished jobs are capped, and an export is one JSON document.
func TestRequestsAndFailures(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, t.TempDir())
	defer s.Close()
	if err := s.AppendEvents(ctx, events(1, "alice", "bob")); err != nil {
		t.Fatal(err)
	}
	svc := New(s, nil, append(kinds(s), failing{})...)
	for _, ids := range [][]string{nil, {""}, {strings.Repeat("x", 201)}, {"\xff"}, make([]string, analytics.MaxPersonDeletionIDs+1)} {
		if _, err := svc.RequestDeletion(ctx, 1, "t", ids); err == nil {
			t.Errorf("RequestDeletion(%d ids, first %q) took the job", len(ids), first(ids))
		}
	}
	d, err := svc.RequestDeletion(ctx, 1, "t", []string{"alice", "alice"})
	if err != nil || d.IDCount != 1 {
		t.Fatalf("RequestDeletion = %+v, %v; want one id", d, err)
	}
	svc.RunPending(ctx)
	got := waitJob(t, s, 1, d.ID)
	if got.Status != analytics.DeletionFailed || !strings.Contains(got.Error, "disk full") || got.Counts["events"] != 1 {
		t.Errorf("the job with a failing kind: %+v", got)
	}
	log, _ := s.AuditLog(ctx, 1, 0, 10)
	if len(log) != 2 || log[0].Action != analytics.AuditDeletionFailed || log[1].Action != analytics.AuditDeletionRequested {
		t.Errorf("audit log: %+v", log)
	}

	for range MaxUnfinished {
		if _, err := svc.RequestDeletion(ctx, 1, "t", []string{"bob"}); err != nil {
			t.Fatal(err)
		}
	}
	var e *analytics.Error
	if _, err := svc.RequestDeletion(ctx, 1, "t", []string{"bob"}); !errors.As(err, &e) || e.Code != "too_many_deletions" {
		t.Errorf("a job past %d unfinished: %v, want too_many_deletions", MaxUnfinished, err)
	}
	if _, err := svc.RequestDeletion(ctx, 2, "t", []string{"bob"}); err != nil {
		t.Errorf("another product's job: %v", err)
	}

	var buf bytes.Buffer
	if err := svc.Export(ctx, 1, "t", "bob", &buf); err != nil {
		t.Fatal(err)
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("export is not JSON: %v\n%s", err, buf.Bytes())
	}
	var evs []analytics.ExportedEvent
	if err := json.Unmarshal(doc["events"], &evs); err != nil || len(evs) != 1 || evs[0].DistinctID != "bob" || string(doc["profile"]) != "null" {
		t.Errorf("bob's export: %s", buf.Bytes())
	}
}

func first(ids []string) string {
	if len(ids) == 0 {
		return ""
	}
	return ids[0]
}

// TestRunnerPollsForPendingJobs stores a job the runner was not woken for
// (another node accepted it) and one left running by another node: the
// runner, already waiting, takes the pending one within its poll and
// leaves the running one to its node.
func TestRunnerPollsForPendingJobs(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, t.TempDir())
	defer s.Close()
	if err := s.AppendEvents(ctx, events(1, "alice", "bob")); err != nil {
		t.Fatal(err)
	}
	svc := New(s, nil, kinds(s)...)
	svc.Poll = 50 * time.Millisecond
	run, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); svc.Run(run) }()
	defer func() { stop(); <-done }()
	time.Sleep(100 * time.Millisecond) // the first round has found nothing

	// Another node's job, which that node's runner has taken: stored as
	// running in one statement, as a claim is, so that this runner's
	// polls never see it pending (created, then updated, it raced them).
	var other analytics.PersonDeletion
	if err := s.DB().QueryRowContext(ctx, `INSERT INTO person_deletions (product_id, status, distinct_ids, id_count, counts, error, actor, created_at, updated_at)
		VALUES (1, 'running', '["bob"]', 1, '{}', '', 'node b', now(), now()) RETURNING id`).Scan(&other.ID); err != nil {
		t.Fatal(err)
	}
	d := analytics.PersonDeletion{ProductID: 1, DistinctIDs: []string{"alice"}, Actor: "node b"}
	if err := s.CreatePersonDeletion(ctx, &d); err != nil {
		t.Fatal(err)
	}
	if got := waitJob(t, s, 1, d.ID); got.Status != analytics.DeletionDone || got.Counts["events"] != 1 {
		t.Fatalf("the pending job: %+v", got)
	}
	time.Sleep(150 * time.Millisecond)
	if got, _ := s.PersonDeletion(ctx, 1, other.ID); got.Status != analytics.DeletionRunning || countEvents(t, s, 1, "bob") != 1 {
		t.Errorf("another node's running job was taken: %+v", got)
	}
}
