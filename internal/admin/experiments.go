package admin

import (
	"context"

	"strata/internal/analytics"
)

// Actor names the CLI in the flags' audit trail: a winner applied from the
// command line is recorded as cli's change, whichever door it went
// through (the socket or the store).
const Actor = "cli"

// The flag and experiment operations the CLI runs. Service runs them with
// the same experiment.Flags and experiment.Service the HTTP API calls, so
// their rules and errors are the API's; Client asks the running server to.

// ListFlags lists a product's flags, oldest first.
func (s *Service) ListFlags(ctx context.Context, productID int64) ([]analytics.Flag, error) {
	if err := s.productExists(ctx, productID); err != nil {
		return nil, err
	}
	return s.Flags.List(ctx, productID)
}

// ListExperiments lists a product's experiments, oldest first.
func (s *Service) ListExperiments(ctx context.Context, productID int64) ([]analytics.Experiment, error) {
	if err := s.productExists(ctx, productID); err != nil {
		return nil, err
	}
	return s.Experiments.List(ctx, productID)
}

// ActExperiment starts, pauses or resumes the product's experiment id
// (experiment.Service.Act), and has the server serve the change at once.
func (s *Service) ActExperiment(ctx context.Context, productID, id int64, action string) (analytics.Experiment, error) {
	switch action {
	case "start", "pause", "resume":
	default:
		return analytics.Experiment{}, analytics.Errorf(analytics.KindInvalid, "invalid_request", "An experiment's action is start, pause or resume, not %q.", action)
	}
	if err := s.productExists(ctx, productID); err != nil {
		return analytics.Experiment{}, err
	}
	e, err := s.Experiments.Act(ctx, productID, id, action)
	if err != nil {
		return e, err
	}
	s.flagsChanged(productID)
	return e, nil
}

// ApplyWinner completes the product's experiment id with variant as its
// winner (experiment.Service.ApplyWinner), as Actor's change, and has the
// server serve the change at once.
func (s *Service) ApplyWinner(ctx context.Context, productID, id int64, variant string) (analytics.Experiment, error) {
	if err := s.productExists(ctx, productID); err != nil {
		return analytics.Experiment{}, err
	}
	e, err := s.Experiments.ApplyWinner(ctx, Actor, productID, id, &variant)
	if err != nil {
		return e, err
	}
	s.flagsChanged(productID)
	return e, nil
}

func (s *Service) flagsChanged(productID int64) {
	if s.FlagsChanged != nil {
		s.FlagsChanged(productID)
	}
}
