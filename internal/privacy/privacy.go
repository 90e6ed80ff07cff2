// Package privacy deletes and exports everything Strata stores about a
// person, and records each such operation in the audit log
// (docs/privacy.md).
//
// A person is a product's distinct id. Each kind of data a person leaves
// (events, replays, survey responses, message states, group memberships)
// implements PersonData; Forget and Export run every registered kind, so
// that a new kind joins by adding one implementation to Service.Kinds
// (the person profile, one object rather than rows, is Service.Profiles). Deleting is asynchronous: a request
// stores a job (migration 0035) and answers at once, and the runner (Run)
// deletes, kind after kind, and marks the job done only when every kind
// reports its rows gone — on ClickHouse, once the mutation is done on
// every shard. Every step may be repeated, so a job a crash interrupted
// is simply run again at the next start.
package privacy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"time"
	"unicode/utf8"

	"strata/internal/analytics"
)

// MaxUnfinished is how many deletion jobs a product may have waiting or
// running: each holds up to analytics.MaxPersonDeletionIDs ids in the
// metadata store until it ends, and on ClickHouse each is a mutation that
// rewrites the table's parts, so a flood of small jobs is refused rather
// than queued (one job of many ids costs what one of a few does).
const MaxUnfinished = 20

// PersonData is one kind of data a person leaves.
type PersonData interface {
	// Name is the kind's key in a job's counts and in the export.
	Name() string
	// DeletePersons deletes the product's rows of the ids and returns how
	// many (-1 when the store cannot tell). It must be idempotent: a job
	// a crash interrupted runs it again.
	DeletePersons(ctx context.Context, productID int64, distinctIDs []string) (int64, error)
	// ExportPerson calls emit with each of a person's rows, one at a time
	// (the export streams: nothing may hold all of a person's rows).
	ExportPerson(ctx context.Context, productID int64, distinctID string, emit func(any) error) error
}

// Service runs the privacy operations.
type Service struct {
	// Kinds are the kinds of data a person leaves, deleted and exported
	// in this order.
	Kinds []PersonData
	Store analytics.PrivacyStore
	Log   *slog.Logger
	// Poll is how often Run looks for pending jobs (PollEvery when 0).
	Poll time.Duration
	// Profiles, when set, keeps the person profiles (docs/ingest.md,
	// "Person profiles"): a deletion deletes the ids' profiles after
	// every kind, once Flush has written the updates of the events
	// loaded before (which would otherwise make the profile again), and
	// the export holds the profile as "profile". It is no Kind, since
	// the export's "profile" is one object, not an array.
	Profiles analytics.PersonStore
	Flush    func(context.Context) error

	wake chan struct{}
}

// New returns a service over store and kinds.
func New(store analytics.PrivacyStore, log *slog.Logger, kinds ...PersonData) *Service {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Service{Kinds: kinds, Store: store, Log: log, wake: make(chan struct{}, 1)}
}

// checkIDs refuses an empty or oversized list, and empty, overlong or
// invalid ids, and returns the list without repeats.
func checkIDs(ids []string) ([]string, error) {
	if len(ids) == 0 {
		return nil, analytics.InvalidField("distinctIds", "is required: the distinct ids of the persons to delete")
	}
	if len(ids) > analytics.MaxPersonDeletionIDs {
		return nil, analytics.Errorf(analytics.KindInvalid, "too_many_ids",
			"A deletion names at most %d distinct ids, this one %d. Split the list into several requests.",
			analytics.MaxPersonDeletionIDs, len(ids))
	}
	seen := make(map[string]bool, len(ids))
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		if err := checkID(id); err != nil {
			return nil, err
		}
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out, nil
}

func checkID(id string) error {
	if id == "" || len(id) > analytics.MaxDistinctIDLength || !utf8.ValidString(id) {
		return analytics.InvalidField("distinctId", "must be 1 to %d bytes of UTF-8", analytics.MaxDistinctIDLength)
	}
	return nil
}

// RequestDeletion stores a deletion job for ids, records the request in
// the audit log (the number of ids, not the ids) and wakes the runner.
func (s *Service) RequestDeletion(ctx context.Context, productID int64, actor string, ids []string) (analytics.PersonDeletion, error) {
	ids, err := checkIDs(ids)
	if err != nil {
		return analytics.PersonDeletion{}, err
	}
	unfinished, err := s.Store.UnfinishedPersonDeletions(ctx)
	if err != nil {
		return analytics.PersonDeletion{}, err
	}
	waiting := 0
	for _, j := range unfinished {
		if j.ProductID == productID {
			waiting++
		}
	}
	if waiting >= MaxUnfinished {
		return analytics.PersonDeletion{}, analytics.Errorf(analytics.KindConflict, "too_many_deletions",
			"This product has %d deletion jobs still waiting or running, the most it may have. Wait until one is done, or name more ids (up to %d) in one request.",
			waiting, analytics.MaxPersonDeletionIDs)
	}
	d := analytics.PersonDeletion{ProductID: productID, DistinctIDs: ids, Actor: actor}
	if err := s.Store.CreatePersonDeletion(ctx, &d); err != nil {
		return d, err
	}
	s.audit(ctx, productID, actor, analytics.AuditDeletionRequested, "job "+strconv.FormatInt(d.ID, 10)+": "+plural(len(ids), "distinct id"))
	select {
	case s.wake <- struct{}{}:
	default:
	}
	return d, nil
}

// Deletion returns one of a product's jobs.
func (s *Service) Deletion(ctx context.Context, productID, id int64) (analytics.PersonDeletion, error) {
	d, err := s.Store.PersonDeletion(ctx, productID, id)
	if err != nil {
		return d, analytics.Errorf(analytics.KindNotFound, "deletion_not_found", "There is no such deletion job in this product.")
	}
	return d, nil
}

// Forget deletes every kind of the ids' data in the product and returns
// the counts per kind. It stops at the first kind that fails: the job is
// run again, and the kinds done already find nothing left.
func (s *Service) Forget(ctx context.Context, productID int64, distinctIDs []string) (map[string]int64, error) {
	counts := make(map[string]int64, len(s.Kinds))
	for _, k := range s.Kinds {
		n, err := k.DeletePersons(ctx, productID, distinctIDs)
		if err != nil {
			return counts, fmt.Errorf("deleting %s: %w", k.Name(), err)
		}
		counts[k.Name()] = n
	}
	if s.Profiles != nil {
		if s.Flush != nil {
			if err := s.Flush(ctx); err != nil {
				return counts, fmt.Errorf("writing pending profiles: %w", err)
			}
		}
		n, err := s.Profiles.DeletePersonProfiles(ctx, productID, distinctIDs)
		if err != nil {
			return counts, fmt.Errorf("deleting profiles: %w", err)
		}
		counts["profile"] = n
	}
	return counts, nil
}

// PollEvery is how often the runner looks for pending jobs it was not
// woken for: one another node accepted (several nodes on one metadata
// store), or one whose wake-up a failure lost.
const PollEvery = time.Minute

// Run runs the unfinished jobs until ctx ends: at once every job pending
// or running (a stop left them), then the pending ones whenever a request
// wakes it or every Poll (PollEvery when 0). Jobs another node is running
// are left to it; a job is only taken again as running at a start.
func (s *Service) Run(ctx context.Context) {
	poll := s.Poll
	if poll <= 0 {
		poll = PollEvery
	}
	s.runJobs(ctx, true)
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.wake:
		case <-time.After(poll):
		}
		s.runJobs(ctx, false)
	}
}

// RunPending runs every job pending or running, oldest first: the CLI's
// round on a stopped store.
func (s *Service) RunPending(ctx context.Context) { s.runJobs(ctx, true) }

// runJobs runs the pending jobs, and the running ones too when running,
// oldest first.
func (s *Service) runJobs(ctx context.Context, running bool) {
	jobs, err := s.Store.UnfinishedPersonDeletions(ctx)
	if err != nil {
		if ctx.Err() == nil {
			s.Log.Error("reading person deletions", "err", err)
		}
		return
	}
	for i := range jobs {
		if ctx.Err() != nil {
			return
		}
		if jobs[i].Status == analytics.DeletionRunning && !running {
			continue
		}
		s.runJob(ctx, &jobs[i])
	}
}

// runJob runs one job to done or failed. A failure that is the server
// stopping leaves the job running, to resume at the next start.
func (s *Service) runJob(ctx context.Context, d *analytics.PersonDeletion) {
	d.Status = analytics.DeletionRunning
	if err := s.Store.UpdatePersonDeletion(ctx, d); err != nil {
		s.Log.Error("starting a person deletion", "job", d.ID, "err", err)
		return
	}
	counts, err := s.Forget(ctx, d.ProductID, d.DistinctIDs)
	if err != nil && ctx.Err() != nil {
		return
	}
	d.Counts = counts
	action, summary := analytics.AuditDeletionDone, "job "+strconv.FormatInt(d.ID, 10)+": "+plural(d.IDCount, "distinct id")+countsSummary(counts)
	d.Status, d.Error = analytics.DeletionDone, ""
	if err != nil {
		s.Log.Error("person deletion failed", "job", d.ID, "err", err)
		d.Status, d.Error = analytics.DeletionFailed, err.Error()
		action = analytics.AuditDeletionFailed
	}
	if err := s.Store.UpdatePersonDeletion(ctx, d); err != nil {
		s.Log.Error("finishing a person deletion", "job", d.ID, "err", err)
		return
	}
	s.audit(ctx, d.ProductID, "deletion runner", action, summary)
}

func countsSummary(counts map[string]int64) string {
	b, _ := json.Marshal(counts)
	return " " + string(b)
}

// Export writes the person's data to w as one JSON object, each kind's
// rows as an array under its name, streamed: it holds one row at a time.
// The export is recorded in the audit log (without the id).
func (s *Service) Export(ctx context.Context, productID int64, actor, distinctID string, w io.Writer) error {
	if err := checkID(distinctID); err != nil {
		return err
	}
	s.audit(ctx, productID, actor, analytics.AuditExport, "1 distinct id")
	return s.writeExport(ctx, productID, distinctID, w)
}

// CheckExportID says whether an export of id may start, before the
// caller commits to a status.
func CheckExportID(id string) error { return checkID(id) }

func (s *Service) writeExport(ctx context.Context, productID int64, distinctID string, w io.Writer) error {
	head, _ := json.Marshal(distinctID)
	profile := []byte("null")
	if s.Profiles != nil {
		p, err := s.Profiles.Person(ctx, productID, distinctID)
		switch {
		case err == nil:
			profile, _ = json.Marshal(p)
		case !errors.Is(err, analytics.ErrNotFound):
			return fmt.Errorf("exporting the profile: %w", err)
		}
	}
	if _, err := fmt.Fprintf(w, `{"distinctId":%s,"productId":%d,"profile":%s`, head, productID, profile); err != nil {
		return err
	}
	enc := json.NewEncoder(w)
	for _, k := range s.Kinds {
		if _, err := fmt.Fprintf(w, `,%q:[`, k.Name()); err != nil {
			return err
		}
		first := true
		err := k.ExportPerson(ctx, productID, distinctID, func(v any) error {
			if !first {
				if _, err := io.WriteString(w, ","); err != nil {
					return err
				}
			}
			first = false
			return enc.Encode(v)
		})
		if err != nil {
			return fmt.Errorf("exporting %s: %w", k.Name(), err)
		}
		if _, err := io.WriteString(w, "]"); err != nil {
			return err
		}
	}
	_, err := io.WriteString(w, "}\n")
	return err
}

// Audit records an operation on a product's privacy settings (retention,
// cookieless) in the audit log.
func (s *Service) Audit(ctx context.Context, productID int64, actor, summary string) {
	s.audit(ctx, productID, actor, analytics.AuditSetting, summary)
}

// audit appends an entry; a failure is logged, not returned: the
// operation it records has happened or been accepted already.
func (s *Service) audit(ctx context.Context, productID int64, actor, action, summary string) {
	e := analytics.AuditEntry{ProductID: productID, Actor: actor, Action: action, Summary: summary}
	if err := s.Store.AddAudit(context.WithoutCancel(ctx), &e); err != nil {
		s.Log.Error("writing the audit log", "action", action, "err", err)
	}
}

// AuditLog returns a page of a product's audit log, newest first, before
// the entry id before (0: the newest).
func (s *Service) AuditLog(ctx context.Context, productID, before int64, limit int) ([]analytics.AuditEntry, error) {
	if limit <= 0 || limit > analytics.AuditPageSize {
		limit = analytics.AuditPageSize
	}
	items, err := s.Store.AuditLog(ctx, productID, before, limit)
	if items == nil {
		items = []analytics.AuditEntry{}
	}
	return items, err
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}
