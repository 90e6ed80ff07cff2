package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"strata/internal/analytics"
)

// testCampaigns checks message campaigns and what hangs off them: every
// field round-trips exactly, every method is scoped to its product, the
// auto-render setting is off until set, a user's state with a campaign is
// replaced by a later one and read back per user, outcome counts, survey
// responses, and that deleting a campaign takes its states and responses
// with it.
func testCampaigns(ctx context.Context, t *testing.T, s Meta, a, b analytics.Product) {

	exp := int64(7)
	c := analytics.Campaign{ProductID: a.ID, Name: "Welcome tour ✨", Status: analytics.CampaignActive,
		Trigger: analytics.Trigger{Event: "$pageview"}, PathRegex: `^/app/(dashboard|settings)$`,
		Audience: analytics.Audience{Identified: true, Percentage: 33.33, Conditions: []analytics.TraitCondition{{Trait: "plan", Op: "eq", Value: "pro"}}},
		Cap:      analytics.FrequencyCap{Kind: analytics.CapPerDay, Count: 2},
		Variants: []analytics.CampaignVariant{
			{Key: "control", Weight: 50, Steps: []analytics.Step{
				{Kind: "tooltip", Title: "Here", Body: "**Bold** *it*", BodyFormat: "markdown", Selector: "#nav > a[href='/x']"},
				{Kind: "survey", BodyFormat: "text", Question: &analytics.Question{ID: "nps", Type: "nps", Prompt: "Recommend us?", Choices: []string{}}},
			}},
			{Key: "treatment", Weight: 50, Steps: []analytics.Step{
				{Kind: "banner", Title: "Hi", BodyFormat: "text", Placement: "bottom", CTA: &analytics.CTA{Label: "Go", URL: "https://example.com/ü"}},
			}},
		},
		ExperimentID: &exp, FlagKey: "message_welcome_tour"}
	if err := s.CreateCampaign(ctx, &c); err != nil || c.ID == 0 || c.CreatedAt.IsZero() {
		t.Fatalf("create: %v %+v", err, c)
	}
	got, err := s.Campaign(ctx, a.ID, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(c)
	have, _ := json.Marshal(got)
	if string(want) != string(have) {
		t.Errorf("read back:\n got %s\nwant %s", have, want)
	}
	if _, err := s.Campaign(ctx, b.ID, c.ID); !errors.Is(err, analytics.ErrNotFound) {
		t.Errorf("another product's campaign: %v, want ErrNotFound", err)
	}
	plain := analytics.Campaign{ProductID: a.ID, Name: "Plain", Status: analytics.CampaignDraft, Trigger: analytics.Trigger{Event: "signup"},
		Audience: analytics.Audience{Percentage: 100, Conditions: []analytics.TraitCondition{}}, Cap: analytics.FrequencyCap{Kind: "once", Count: 1},
		Variants: []analytics.CampaignVariant{{Key: "control", Weight: 100, Steps: []analytics.Step{{Kind: "modal", Title: "T", BodyFormat: "text"}}}}}
	if err := s.CreateCampaign(ctx, &plain); err != nil {
		t.Fatal(err)
	}
	list, err := s.ListCampaigns(ctx, a.ID)
	if err != nil || len(list) != 2 || list[0].ID != c.ID || list[1].ID != plain.ID || list[1].ExperimentID != nil {
		t.Errorf("list: %v %+v", err, list)
	}
	if list, _ := s.ListCampaigns(ctx, b.ID); len(list) != 0 {
		t.Errorf("another product lists %d campaigns", len(list))
	}

	// Updates replace the fields; through another product they find nothing.
	up := got
	up.Status, up.ExperimentID, up.FlagKey, up.Name = analytics.CampaignPaused, nil, "", "Renamed"
	if err := s.UpdateCampaign(ctx, &up); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Campaign(ctx, a.ID, c.ID); got.Status != analytics.CampaignPaused || got.ExperimentID != nil || got.Name != "Renamed" || !got.CreatedAt.Equal(c.CreatedAt) {
		t.Errorf("after update: %+v", got)
	}
	wrong := up
	wrong.ProductID = b.ID
	if err := s.UpdateCampaign(ctx, &wrong); !errors.Is(err, analytics.ErrNotFound) {
		t.Errorf("update through another product: %v, want ErrNotFound", err)
	}

	// The auto-render setting is off until set, per product.
	if on, err := s.AutoRender(ctx, a.ID); err != nil || on {
		t.Errorf("auto-render before any setting: %v %v", on, err)
	}
	for _, on := range []bool{true, false, true} {
		if err := s.SetAutoRender(ctx, a.ID, on); err != nil {
			t.Fatal(err)
		}
		if got, err := s.AutoRender(ctx, a.ID); err != nil || got != on {
			t.Errorf("auto-render after setting %v: %v %v", on, got, err)
		}
	}
	if on, _ := s.AutoRender(ctx, b.ID); on {
		t.Error("another product's auto-render is on")
	}

	// A user's states: the list is replaced whole; outcomes are appended
	// and counted once a user.
	u1 := []analytics.MessageState{
		{CampaignID: c.ID, Impressions: 1, Day: 20417, DayImpressions: 1, Variant: "control"},
		{CampaignID: plain.ID, Impressions: 1, Day: 20417, DayImpressions: 1, Ended: analytics.MessageDismiss, Variant: "control"},
	}
	puts := []struct {
		user     string
		states   []analytics.MessageState
		campaign int64
		outcome  string
	}{
		{"u1", u1[:1], c.ID, analytics.OutcomeShown},
		{"u1", u1, plain.ID, analytics.OutcomeShown},
		{"u1", u1, plain.ID, analytics.MessageDismiss},
		{"u1", []analytics.MessageState{{CampaignID: c.ID, Impressions: 2, Day: 20418, DayImpressions: 1, Ended: analytics.MessageCTAClick, Variant: "control"}, u1[1]}, c.ID, analytics.MessageCTAClick},
		{"u2", []analytics.MessageState{{CampaignID: c.ID, Impressions: 1, Variant: "treatment"}}, c.ID, analytics.OutcomeShown},
		{"u2", []analytics.MessageState{{CampaignID: c.ID, Impressions: 1, Ended: analytics.MessageComplete, Variant: "treatment"}}, c.ID, analytics.MessageComplete},
		{"u3", []analytics.MessageState{{CampaignID: c.ID, Impressions: 3, Variant: "treatment"}}, c.ID, analytics.OutcomeShown},
		{"u3", []analytics.MessageState{{CampaignID: c.ID, Impressions: 4, Variant: "treatment"}}, 0, ""},
		{"u3", []analytics.MessageState{{CampaignID: c.ID, Impressions: 4, Variant: "treatment"}}, c.ID, analytics.OutcomeShown}, // twice: one user
		{"user/with/slashes ü", []analytics.MessageState{{CampaignID: plain.ID, Impressions: 1, Variant: "control"}}, 0, ""},
	}
	for _, p := range puts {
		if err := s.PutMessageStates(ctx, a.ID, p.user, p.states, p.campaign, p.outcome); err != nil {
			t.Fatal(err)
		}
	}
	users, err := s.MessageStates(ctx, a.ID, []string{"u1", "user/with/slashes ü", "nobody", "u3"})
	if err != nil || len(users) != 3 {
		t.Fatalf("states: %v %+v", err, users)
	}
	if st := users["u1"]; len(st) != 2 || st[0] != puts[3].states[0] || st[1] != u1[1] {
		t.Errorf("u1's states: %+v", st)
	}
	if st := users["user/with/slashes ü"]; len(st) != 1 || st[0].CampaignID != plain.ID {
		t.Errorf("a distinct_id with slashes: %+v", st)
	}
	if st := users["u3"]; len(st) != 1 || st[0].Impressions != 4 {
		t.Errorf("u3's states: %+v", st)
	}
	if users, err := s.MessageStates(ctx, a.ID, []string{"nobody"}); err != nil || len(users) != 0 {
		t.Errorf("a user without states: %v %+v", err, users)
	}
	if users, _ := s.MessageStates(ctx, b.ID, []string{"u1", "u2"}); len(users) != 0 {
		t.Errorf("another product reads the states: %+v", users)
	}
	stats, err := s.CampaignStats(ctx, a.ID)
	if err != nil || stats[c.ID] != (analytics.CampaignStats{Shown: 3, CTAClicks: 1, Completed: 1}) || stats[plain.ID] != (analytics.CampaignStats{Shown: 1, Dismissed: 1}) {
		t.Errorf("stats: %v %+v", err, stats)
	}
	if stats, _ := s.CampaignStats(ctx, b.ID); len(stats) != 0 {
		t.Errorf("another product's stats: %+v", stats)
	}

	// Survey responses, per campaign and product.
	r := analytics.SurveyResponse{CampaignID: c.ID, DistinctID: "u2", Variant: "control",
		Answers: []analytics.SurveyAnswer{{QuestionID: "nps", Value: json.RawMessage(`9`)}, {QuestionID: "why", Value: json.RawMessage(`"fast, \"really\""`)}}}
	if err := s.AddSurveyResponse(ctx, a.ID, &r); err != nil || r.ID == 0 {
		t.Fatalf("add response: %v %+v", err, r)
	}
	rs, err := s.SurveyResponses(ctx, a.ID, c.ID, 0, 10)
	if err != nil || len(rs) != 1 || rs[0].DistinctID != "u2" || len(rs[0].Answers) != 2 || string(rs[0].Answers[1].Value) != `"fast, \"really\""` || !rs[0].At.Equal(r.At) {
		t.Errorf("responses: %v %+v", err, rs)
	}
	if rs, _ := s.SurveyResponses(ctx, b.ID, c.ID, 0, 10); len(rs) != 0 {
		t.Errorf("another product reads the responses: %+v", rs)
	}
	// Pages: oldest first, after an id, at most the limit; another
	// campaign's responses are not among them.
	ids := []int64{r.ID}
	for i := range 6 {
		campaign := c.ID
		if i == 2 {
			campaign = plain.ID
		}
		more := analytics.SurveyResponse{CampaignID: campaign, DistinctID: fmt.Sprint("p", i), Variant: "control",
			Answers: []analytics.SurveyAnswer{{QuestionID: "nps", Value: json.RawMessage(`7`)}}}
		if err := s.AddSurveyResponse(ctx, a.ID, &more); err != nil {
			t.Fatal(err)
		}
		if campaign == c.ID {
			ids = append(ids, more.ID)
		}
	}
	var paged []int64
	for after := int64(0); ; {
		page, err := s.SurveyResponses(ctx, a.ID, c.ID, after, 2)
		if err != nil || len(page) > 2 {
			t.Fatalf("a page after %d: %v, %d responses", after, err, len(page))
		}
		if len(page) == 0 {
			break
		}
		for _, x := range page {
			paged = append(paged, x.ID)
		}
		after = page[len(page)-1].ID
	}
	if fmt.Sprint(paged) != fmt.Sprint(ids) {
		t.Errorf("paged ids %v, want %v", paged, ids)
	}

	// Deleting takes the states and responses along; through another product it finds nothing.
	if err := s.DeleteCampaign(ctx, b.ID, c.ID); !errors.Is(err, analytics.ErrNotFound) {
		t.Errorf("delete through another product: %v", err)
	}
	if err := s.DeleteCampaign(ctx, a.ID, c.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Campaign(ctx, a.ID, c.ID); !errors.Is(err, analytics.ErrNotFound) {
		t.Errorf("deleted campaign: %v", err)
	}
	stats, _ = s.CampaignStats(ctx, a.ID)
	rs, _ = s.SurveyResponses(ctx, a.ID, c.ID, 0, 100)
	if _, ok := stats[c.ID]; ok || stats[plain.ID].Shown != 1 || len(rs) != 0 {
		t.Errorf("after delete: stats %+v, responses %+v", stats, rs)
	}
}
