package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"strata/internal/analytics"
)

// testPrivacy checks the metadata half of the privacy operations
// (docs/privacy.md): a deletion job's life (pending with its ids, running,
// done without them), the unfinished jobs a restart resumes, the audit
// log's pages, and a person's survey responses and message states
// exported and deleted — only theirs, only in their product.
func testPrivacy(ctx context.Context, t *testing.T, s Meta, a, b analytics.Product) {
	ps, ok := s.(analytics.PrivacyStore)
	if !ok {
		t.Fatalf("%T does not implement analytics.PrivacyStore", s)
	}
	// Jobs.
	d := analytics.PersonDeletion{ProductID: a.ID, DistinctIDs: []string{"u1", "ü 2"}, Actor: "user:1 a@x"}
	if err := ps.CreatePersonDeletion(ctx, &d); err != nil || d.ID == 0 || d.Status != analytics.DeletionPending || d.IDCount != 2 {
		t.Fatalf("CreatePersonDeletion = %+v, %v", d, err)
	}
	other := analytics.PersonDeletion{ProductID: b.ID, DistinctIDs: []string{"x"}, Actor: "admin-socket"}
	if err := ps.CreatePersonDeletion(ctx, &other); err != nil {
		t.Fatal(err)
	}
	if _, err := ps.PersonDeletion(ctx, b.ID, d.ID); !errors.Is(err, analytics.ErrNotFound) {
		t.Errorf("product B reading A's job: %v, want ErrNotFound", err)
	}
	got, err := ps.PersonDeletion(ctx, a.ID, d.ID)
	if err != nil || got.Status != analytics.DeletionPending || len(got.DistinctIDs) != 2 || got.DistinctIDs[1] != "ü 2" ||
		got.Actor != d.Actor || !got.CreatedAt.Equal(d.CreatedAt) {
		t.Fatalf("PersonDeletion = %+v, %v; want the pending job with its ids", got, err)
	}
	d.Status, d.Counts = analytics.DeletionRunning, map[string]int64{"events": 3}
	if err := ps.UpdatePersonDeletion(ctx, &d); err != nil {
		t.Fatal(err)
	}
	un, err := ps.UnfinishedPersonDeletions(ctx)
	if err != nil || len(un) != 2 || un[0].ID != d.ID || un[0].Status != analytics.DeletionRunning || len(un[0].DistinctIDs) != 2 || un[1].ID != other.ID {
		t.Fatalf("UnfinishedPersonDeletions = %+v, %v; want the running and the pending job, oldest first, with ids", un, err)
	}
	d.Status, d.Counts = analytics.DeletionDone, map[string]int64{"events": 3, "replays": 1}
	if err := ps.UpdatePersonDeletion(ctx, &d); err != nil {
		t.Fatal(err)
	}
	got, err = ps.PersonDeletion(ctx, a.ID, d.ID)
	if err != nil || got.Status != analytics.DeletionDone || len(got.DistinctIDs) != 0 || got.IDCount != 2 || got.Counts["replays"] != 1 {
		t.Fatalf("the done job = %+v, %v; want done, its counts, and no ids kept", got, err)
	}
	if un, err := ps.UnfinishedPersonDeletions(ctx); err != nil || len(un) != 1 || un[0].ID != other.ID {
		t.Errorf("UnfinishedPersonDeletions after done = %+v, %v; want B's job only", un, err)
	}
	if err := ps.UpdatePersonDeletion(ctx, &analytics.PersonDeletion{ProductID: b.ID, ID: d.ID, Status: analytics.DeletionFailed}); !errors.Is(err, analytics.ErrNotFound) {
		t.Errorf("updating A's job as B: %v, want ErrNotFound", err)
	}

	// The audit log: newest first, in pages, per product.
	for i, action := range []string{analytics.AuditDeletionRequested, analytics.AuditExport, analytics.AuditDeletionDone} {
		e := analytics.AuditEntry{ProductID: a.ID, Actor: "user:1 a@x", Action: action, Summary: string(rune('a' + i))}
		if err := ps.AddAudit(ctx, &e); err != nil || e.ID == 0 || e.CreatedAt.IsZero() {
			t.Fatalf("AddAudit = %+v, %v", e, err)
		}
	}
	if err := ps.AddAudit(ctx, &analytics.AuditEntry{ProductID: b.ID, Actor: "x", Action: analytics.AuditSetting, Summary: "b"}); err != nil {
		t.Fatal(err)
	}
	page, err := ps.AuditLog(ctx, a.ID, 0, 2)
	if err != nil || len(page) != 2 || page[0].Action != analytics.AuditDeletionDone || page[1].Action != analytics.AuditExport {
		t.Fatalf("AuditLog page 1 = %+v, %v", page, err)
	}
	rest, err := ps.AuditLog(ctx, a.ID, page[1].ID, 10)
	if err != nil || len(rest) != 1 || rest[0].Action != analytics.AuditDeletionRequested || rest[0].Summary != "a" {
		t.Fatalf("AuditLog page 2 = %+v, %v", rest, err)
	}

	// Survey responses and message states.
	answers := []analytics.SurveyAnswer{{QuestionID: "q1", Value: json.RawMessage(`"yes"`)}}
	for _, r := range []struct {
		product int64
		id      string
	}{{a.ID, "u1"}, {a.ID, "u1"}, {a.ID, "keep"}, {b.ID, "u1"}} {
		if err := s.AddSurveyResponse(ctx, r.product, &analytics.SurveyResponse{CampaignID: 5, DistinctID: r.id, Variant: "control", Answers: answers}); err != nil {
			t.Fatal(err)
		}
		if err := s.PutMessageStates(ctx, r.product, r.id, []analytics.MessageState{{CampaignID: 5, Impressions: 1}}, 5, analytics.MessageDismiss); err != nil {
			t.Fatal(err)
		}
	}
	count := func(product int64, id string) (responses, messages int) {
		t.Helper()
		if err := ps.PersonSurveyResponses(ctx, product, id, func(r analytics.SurveyResponse) error {
			if r.DistinctID != id || len(r.Answers) != 1 || string(r.Answers[0].Value) != `"yes"` {
				t.Errorf("exported response %+v", r)
			}
			responses++
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if err := ps.PersonMessageStates(ctx, product, id, func(analytics.PersonMessageRow) error { messages++; return nil }); err != nil {
			t.Fatal(err)
		}
		return
	}
	if r, m := count(a.ID, "u1"); r != 2 || m != 3 {
		t.Fatalf("u1 before: %d responses, %d message rows; want 2 and 3 (the states and two outcomes)", r, m)
	}
	if n, err := ps.DeletePersonSurveyResponses(ctx, a.ID, []string{"u1", "nobody"}); err != nil || n != 2 {
		t.Errorf("DeletePersonSurveyResponses = %d, %v; want 2", n, err)
	}
	if n, err := ps.DeletePersonMessageStates(ctx, a.ID, []string{"u1", "nobody"}); err != nil || n != 3 {
		t.Errorf("DeletePersonMessageStates = %d, %v; want 3", n, err)
	}
	if r, m := count(a.ID, "u1"); r != 0 || m != 0 {
		t.Errorf("u1 after: %d responses, %d message rows; want none", r, m)
	}
	if r, m := count(a.ID, "keep"); r != 1 || m != 2 {
		t.Errorf("another user after: %d responses, %d message rows; want 1 and 2", r, m)
	}
	if r, m := count(b.ID, "u1"); r != 1 || m != 2 {
		t.Errorf("u1 in product B after: %d responses, %d message rows; want 1 and 2", r, m)
	}
	if states, err := s.MessageStates(ctx, a.ID, []string{"u1"}); err != nil || len(states["u1"]) != 0 {
		t.Errorf("MessageStates of u1 after = %v, %v; want none", states, err)
	}
}
