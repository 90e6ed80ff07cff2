package messages

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"strata/internal/analytics"
	"strata/internal/store/duckdb/duckdbtest"
)

// TestSurveys reads a survey of more than two pages of responses through
// Surveys on a real DuckDB store: every response comes once, oldest first,
// in pages of at most analytics.SurveyPageSize, each read under Read and
// handed on after the read ends (no admission slot is held while a page is
// written); the results count every response; an error of the callback or
// of the admission stops the reading and is returned.
func TestSurveys(t *testing.T) {
	ctx := context.Background()
	st, p := duckdbtest.Product(t)
	c := analytics.Campaign{ProductID: p.ID, Name: "Survey", Status: analytics.CampaignActive,
		Trigger: analytics.Trigger{Event: "$pageview"}, Cap: analytics.FrequencyCap{Kind: analytics.CapOnce, Count: 1},
		Variants: []analytics.CampaignVariant{{Key: "control", Weight: 100, Steps: []analytics.Step{
			{Kind: analytics.StepSurvey, Question: &analytics.Question{ID: "pick", Type: analytics.QuestionSingle, Choices: []string{"a", "b"}, Prompt: "Pick"}},
		}}}}
	if err := st.CreateCampaign(ctx, &c); err != nil {
		t.Fatal(err)
	}
	total, as := 2*analytics.SurveyPageSize+5, 0
	for i := range total {
		choice := "b"
		if i%3 == 0 {
			choice, as = "a", as+1
		}
		v, _ := json.Marshal(choice)
		r := analytics.SurveyResponse{CampaignID: c.ID, DistinctID: "u", Variant: "control",
			Answers: []analytics.SurveyAnswer{{QuestionID: "pick", Value: v}}}
		if err := st.AddSurveyResponse(ctx, p.ID, &r); err != nil {
			t.Fatal(err)
		}
	}

	reads, inRead := 0, false
	var readErr error
	s := &Surveys{Store: st, Read: func(ctx context.Context, f func(context.Context) error) error {
		if readErr != nil {
			return readErr
		}
		reads++
		inRead = true
		defer func() { inRead = false }()
		return f(ctx)
	}}
	var last int64
	seen := 0
	err := s.EachPage(ctx, c, func(page []analytics.SurveyResponse) error {
		if inRead {
			t.Error("a page was handed on inside its read")
		}
		if len(page) > analytics.SurveyPageSize {
			t.Errorf("a page of %d responses; at most %d", len(page), analytics.SurveyPageSize)
		}
		for _, r := range page {
			if r.ID <= last {
				t.Errorf("response %d after %d", r.ID, last)
			}
			last = r.ID
			seen++
		}
		return nil
	})
	if err != nil || seen != total || reads != 3 {
		t.Errorf("EachPage: %d responses in %d reads, %v; want %d in 3", seen, reads, err, total)
	}

	n, results, err := s.Results(ctx, c)
	if err != nil || n != total || len(results) != 1 || results[0].Answers != total {
		t.Fatalf("Results: %d responses, %+v, %v; want %d", n, results, err, total)
	}
	if counts := results[0].Counts; len(counts) != 2 || counts[0].Count != as || counts[1].Count != total-as {
		t.Errorf("Results counts %+v; want a %d, b %d", counts, as, total-as)
	}

	stop := errors.New("client gone")
	reads = 0
	if err := s.EachPage(ctx, c, func([]analytics.SurveyResponse) error { return stop }); !errors.Is(err, stop) || reads != 1 {
		t.Errorf("EachPage with a failing callback: %v after %d reads; want its error after 1", err, reads)
	}
	readErr = errors.New("server busy")
	if _, _, err := s.Results(ctx, c); !errors.Is(err, readErr) {
		t.Errorf("Results with the admission refusing: %v; want its error", err)
	}
}
