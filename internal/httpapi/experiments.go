package httpapi

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"strata/internal/analytics"
	"strata/internal/auth"
	"strata/internal/experiment"
)

// The experiment API: /api/v1/experiments, for a query token or a
// dashboard session, like flags. An experiment tests the arms of one flag;
// its life is draft → running ⇄ paused → completed (docs/flags.md,
// "Experiments").

var errExperimentNotFound = experiment.ErrNotFound

// experimentRequest is the body of POST /experiments and PUT
// /experiments/{id}. Pointers tell a field that was left out.
type experimentRequest struct {
	Name            *string                 `json:"name"`
	FlagID          *int64                  `json:"flagId"`
	Variants        []analytics.FlagVariant `json:"variants"`
	Holdout         *float64                `json:"holdout"`
	PrimaryEvent    *string                 `json:"primaryEvent"`
	SecondaryEvents []string                `json:"secondaryEvents"`
	StartDate       *string                 `json:"startDate"`
	EndDate         *string                 `json:"endDate"`
}

// apply sets e's fields from the request; fields left out keep theirs.
func (req *experimentRequest) apply(e *analytics.Experiment) error {
	if req.Name != nil {
		e.Name = *req.Name
	}
	if req.Holdout != nil {
		e.Holdout = *req.Holdout
	}
	if req.PrimaryEvent != nil {
		e.PrimaryEvent = *req.PrimaryEvent
	}
	if req.SecondaryEvents != nil {
		e.SecondaryEvents = req.SecondaryEvents
	}
	if e.SecondaryEvents == nil {
		e.SecondaryEvents = []string{}
	}
	for _, d := range []struct {
		field string
		in    *string
		out   **time.Time
	}{{"startDate", req.StartDate, &e.StartDate}, {"endDate", req.EndDate, &e.EndDate}} {
		if d.in == nil {
			continue
		}
		if *d.in == "" {
			*d.out = nil
			continue
		}
		t, err := time.Parse("2006-01-02", *d.in)
		if err != nil {
			return analytics.InvalidField(d.field, "must be a date in the form YYYY-MM-DD, not %q", *d.in)
		}
		*d.out = &t
	}
	return e.Validate()
}

// experimentID reads the {id} of an experiment path.
func experimentID(r *http.Request) (int64, error) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id < 1 {
		return 0, errExperimentNotFound
	}
	return id, nil
}

// experimentTarget authenticates a request on /experiments/{id} and reads
// the experiment.
func (s *Server) experimentTarget(r *http.Request) (auth.Principal, analytics.Experiment, error) {
	p, err := s.principal(r)
	if err != nil {
		return p, analytics.Experiment{}, err
	}
	e, err := s.experimentOf(r, p.ProductID)
	return p, e, err
}

// experimentOf reads the experiment of r's path in the product.
func (s *Server) experimentOf(r *http.Request, productID int64) (analytics.Experiment, error) {
	id, err := experimentID(r)
	if err != nil {
		return analytics.Experiment{}, err
	}
	return s.ExperimentOps.Get(r.Context(), productID, id)
}

// handleCreateExperiment is POST /api/v1/experiments. Without flagId it
// also creates the experiment's flag: its key made from the name, enabled
// for every user, with the arms sent (control and treatment, 50/50, when
// none are). With flagId, the flag must be the product's and have 2 to 4
// arms. Everything is checked before anything is stored.
func (s *Server) handleCreateExperiment(w http.ResponseWriter, r *http.Request) error {
	p, err := s.principal(r)
	if err != nil {
		return err
	}
	var req experimentRequest
	if err := readJSON(w, r, &req); err != nil {
		return err
	}
	e := analytics.Experiment{ProductID: p.ProductID}
	if err := req.apply(&e); err != nil {
		return err
	}
	if err := s.ExperimentOps.Create(r.Context(), p.Describe(), &e, req.FlagID, req.Variants); err != nil {
		return err
	}
	s.FlagsChanged(p.ProductID)
	writeJSON(w, http.StatusCreated, e)
	return nil
}

// handleListExperiments is GET /api/v1/experiments.
func (s *Server) handleListExperiments(w http.ResponseWriter, r *http.Request) error {
	p, err := s.principal(r)
	if err != nil {
		return err
	}
	list, err := readMeta(s, r, func(ctx context.Context) ([]analytics.Experiment, error) {
		return s.ExperimentOps.List(ctx, p.ProductID)
	})
	if err != nil {
		return err
	}
	writeItems(w, list)
	return nil
}

// handleGetExperiment is GET /api/v1/experiments/{id}.
func (s *Server) handleGetExperiment(w http.ResponseWriter, r *http.Request) error {
	_, e, err := s.experimentTarget(r)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, e)
	return nil
}

// handleUpdateExperiment is PUT /api/v1/experiments/{id}: name, holdout,
// metrics and dates. The holdout of a running experiment cannot change:
// it would move users between the holdout and the arms mid-test.
func (s *Server) handleUpdateExperiment(w http.ResponseWriter, r *http.Request) error {
	p, err := s.principal(r)
	if err != nil {
		return err
	}
	id, err := experimentID(r)
	if err != nil {
		return err
	}
	var req experimentRequest
	if err := readJSON(w, r, &req); err != nil {
		return err
	}
	e, err := s.ExperimentOps.Update(r.Context(), p.ProductID, id, func(e *analytics.Experiment) error {
		if req.FlagID != nil && *req.FlagID != e.FlagID {
			return analytics.InvalidField("flagId", "cannot change: an experiment stays on its flag")
		}
		if req.Variants != nil {
			return analytics.InvalidField("variants", "are the flag's: change them on the flag")
		}
		return req.apply(e)
	})
	if err != nil {
		return err
	}
	s.FlagsChanged(p.ProductID)
	writeJSON(w, http.StatusOK, e)
	return nil
}

// experimentAction serves POST /api/v1/experiments/{id}/start, /pause and
// /resume (experiment.Service.Act).
func (s *Server) experimentAction(action string) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		p, err := s.principal(r)
		if err != nil {
			return err
		}
		id, err := experimentID(r)
		if err != nil {
			return err
		}
		e, err := s.ExperimentOps.Act(r.Context(), p.ProductID, id, action)
		if err != nil {
			return err
		}
		s.FlagsChanged(p.ProductID)
		writeJSON(w, http.StatusOK, e)
		return nil
	}
}

// handleApplyWinner is POST /api/v1/experiments/{id}/apply-winner
// {"variant": key}: the flag goes to every user (rollout 100) with the
// winner's weight 100 and the others' 0, audited as a flag change, and the
// experiment is completed, so its holdout no longer applies.
func (s *Server) handleApplyWinner(w http.ResponseWriter, r *http.Request) error {
	p, err := s.principal(r)
	if err != nil {
		return err
	}
	id, err := experimentID(r)
	if err != nil {
		return err
	}
	var req struct {
		Variant *string `json:"variant"`
	}
	if err := readJSON(w, r, &req); err != nil {
		return err
	}
	e, err := s.ExperimentOps.ApplyWinner(r.Context(), p.Describe(), p.ProductID, id, req.Variant)
	if err != nil {
		return err
	}
	s.FlagsChanged(p.ProductID)
	writeJSON(w, http.StatusOK, e)
	return nil
}

// handleExperimentResults is GET /api/v1/experiments/{id}/results: exposed
// users per arm and each metric's conversions with their statistics
// (docs/experiments.md). It reads events, so it counts against the
// credential's query budget and waits for a query slot like any query.
func (s *Server) handleExperimentResults(w http.ResponseWriter, r *http.Request) error {
	sc, err := s.readScope(r)
	if err != nil {
		return err
	}
	e, err := s.experimentOf(r, sc.ProductID)
	if err != nil {
		return err
	}
	f, err := s.FlagOps.Get(r.Context(), sc.ProductID, e.FlagID)
	if err != nil {
		return err
	}
	sc.From, sc.To = experiment.Range(e, s.Now(), sc.Location())
	rows, err := s.Queries.RunExperiment(r.Context(), analytics.ExperimentQuery{EventRange: sc, ExperimentID: e.ID, Metrics: experiment.Metrics(e)})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, experiment.Analyse(e, f, rows, sc.From, sc.To, sc.Location()))
	return nil
}
