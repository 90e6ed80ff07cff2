package messages

import (
	"context"

	"strata/internal/analytics"
)

// ReadFunc runs one read of the store under the server's query admission
// (query.Engine.ReadMeta); nil runs it at once.
type ReadFunc func(ctx context.Context, f func(context.Context) error) error

// Surveys are the reads of a campaign's survey responses, below every
// door that reads them (the results view and the CSV export of the HTTP
// API today; the CLI calls the same). A survey may hold any number of
// responses, so they are read a page at a time, each page under Read, and
// what a call holds at once is one page, whatever the survey's size.
type Surveys struct {
	Store analytics.CampaignStore
	// Read runs each page's read under the query admission; nil reads at
	// once.
	Read ReadFunc
}

// EachPage calls fn with each page of campaign c's responses, oldest
// first, read analytics.SurveyPageSize at a time. Each page is one read
// under Read, so that a slot of the admission is held while the store
// reads a page, never while fn writes it to a slow client. An error of fn
// stops the reading and is returned.
func (s *Surveys) EachPage(ctx context.Context, c analytics.Campaign, fn func([]analytics.SurveyResponse) error) error {
	read := s.Read
	if read == nil {
		read = func(ctx context.Context, f func(context.Context) error) error { return f(ctx) }
	}
	var after int64
	for {
		var page []analytics.SurveyResponse
		err := read(ctx, func(ctx context.Context) error {
			var err error
			page, err = s.Store.SurveyResponses(ctx, c.ProductID, c.ID, after, analytics.SurveyPageSize)
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

// Results tallies campaign c's responses into the results view: how many
// there are and each question's counts, score and latest text answers,
// folded in a page at a time (analytics.SurveyTally).
func (s *Surveys) Results(ctx context.Context, c analytics.Campaign) (int, []analytics.SurveyQuestionResult, error) {
	t := analytics.NewSurveyTally(c)
	err := s.EachPage(ctx, c, func(page []analytics.SurveyResponse) error {
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

// Add stores a response to a campaign of the product and fills in its ID.
// The caller has checked the response against the campaign's questions
// and written its $survey_response event first: a response stored without
// its event could not be counted in analyses.
func (s *Surveys) Add(ctx context.Context, productID int64, r *analytics.SurveyResponse) error {
	return s.Store.AddSurveyResponse(ctx, productID, r)
}
