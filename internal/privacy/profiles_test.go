package privacy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"strata/internal/analytics"
)

// TestProfiles checks that a deletion writes the pending profile updates
// (Flush), then deletes the ids' profiles, counted as "profile", and that
// the export holds the person's profile.
func TestProfiles(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, t.TempDir())
	defer s.Close()
	ws, err := s.CreateWorkspace(ctx, "W")
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.CreateProduct(ctx, ws.ID, "A")
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)
	set := map[string]json.RawMessage{"email": json.RawMessage(`"ann@x.example"`)}
	if err := s.ApplyPersons(ctx, []analytics.PersonUpdate{{ProductID: p.ID, DistinctID: "ann", Set: set, FirstSeen: at, LastSeen: at},
		{ProductID: p.ID, DistinctID: "bob", FirstSeen: at, LastSeen: at}}); err != nil {
		t.Fatal(err)
	}
	svc := New(s, nil, kinds(s)...)
	svc.Profiles = s
	flushed := false
	svc.Flush = func(context.Context) error { flushed = true; return nil }

	var buf bytes.Buffer
	if err := svc.Export(ctx, p.ID, "t", "ann", &buf); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Profile *analytics.Person `json:"profile"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil || doc.Profile == nil || doc.Profile.DistinctID != "ann" ||
		string(doc.Profile.Properties) != `{"email":"ann@x.example"}` {
		t.Errorf("ann's export: %s", buf.Bytes())
	}

	counts, err := svc.Forget(ctx, p.ID, []string{"ann"})
	if err != nil || counts["profile"] != 1 || !flushed {
		t.Errorf("Forget = %v, %v (flushed %v)", counts, err, flushed)
	}
	if _, err := s.Person(ctx, p.ID, "ann"); !errors.Is(err, analytics.ErrNotFound) {
		t.Errorf("ann's profile after the deletion: %v", err)
	}
	if _, err := s.Person(ctx, p.ID, "bob"); err != nil {
		t.Errorf("bob's profile: %v", err)
	}
	buf.Reset()
	if err := svc.Export(ctx, p.ID, "t", "ann", &buf); err != nil || !bytes.Contains(buf.Bytes(), []byte(`"profile":null`)) {
		t.Errorf("export after the deletion: %s, %v", buf.Bytes(), err)
	}
}
