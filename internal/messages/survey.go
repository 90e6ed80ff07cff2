package messages

import (
	"context"

	"strata/internal/analytics"
)

// ReadFunc runs one read of the store under the server's query admission
// (query.Engine.ReadMeta); nil runs it at once.
type ReadFunc func(ctx context.Context, f func(context.Context) error) error

// EachSurveyPage calls fn with each page of a campaign's responses,
// oldest first, read from store analytics.SurveyPageSize at a time. Each
// page is one read under read, so that a slot of the admission is held
// while the store reads a page, never while fn writes it to a slow client.
// What it holds at once is one page, whatever the survey's size.
func EachSurveyPage(ctx context.Context, store analytics.CampaignStore, read ReadFunc, productID, campaignID int64,
	fn func([]analytics.SurveyResponse) error) error {
	if read == nil {
		read = func(ctx context.Context, f func(context.Context) error) error { return f(ctx) }
	}
	var after int64
	for {
		var page []analytics.SurveyResponse
		err := read(ctx, func(ctx context.Context) error {
			var err error
			page, err = store.SurveyResponses(ctx, productID, campaignID, after, analytics.SurveyPageSize)
			return err
		})
		if err != nil || len(page) == 0 {
			return err
		}
		if err := fn(page); err != nil {
			return err
		}
		if len(page) < analytics.SurveyPageSize {
			return nil
		}
		after = page[len(page)-1].ID
	}
}

// SurveyResults tallies a campaign's responses into the results view: how
// many there are and each question's counts, score and latest text
// answers, read a page at a time.
func SurveyResults(ctx context.Context, store analytics.CampaignStore, read ReadFunc, c analytics.Campaign) (int, []analytics.SurveyQuestionResult, error) {
	t := analytics.NewSurveyTally(c)
	err := EachSurveyPage(ctx, store, read, c.ProductID, c.ID, func(page []analytics.SurveyResponse) error {
		for _, r := range page {
			t.Add(r)
		}
		return nil
	})
	if err != nil {
		return 0, nil, err
	}
	return t.Responses(), t.Results(), nil
}
