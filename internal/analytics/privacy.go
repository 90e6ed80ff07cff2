package analytics

import (
	"context"
	"encoding/json"
	"time"
)

// Privacy operations (docs/privacy.md): deleting every trace of a person
// and exporting what is stored about one, recorded in an audit log.

// MaxPersonDeletionIDs is how many distinct ids one deletion request may
// name. It bounds the request's body and each IN list the stores build
// (the ClickHouse mutation's text is about 40 bytes an id), and is large
// enough for a nightly batch of erasure requests; more ids take more
// requests.
const MaxPersonDeletionIDs = 1000

// MaxDistinctIDLength is the longest distinct id a deletion or an export
// accepts, the ingest contract's own bound on a distinct_id.
const MaxDistinctIDLength = 200

// The states of a person deletion job.
const (
	DeletionPending = "pending"
	DeletionRunning = "running"
	DeletionDone    = "done"
	DeletionFailed  = "failed"
)

// PersonDeletion is one deletion job: the ids are held only until it
// ends (migration 0035), Counts says how many rows of each kind of data
// it deleted.
type PersonDeletion struct {
	ID          int64            `json:"id"`
	ProductID   int64            `json:"productId"`
	Status      string           `json:"status"`
	DistinctIDs []string         `json:"-"`
	IDCount     int              `json:"idCount"`
	Counts      map[string]int64 `json:"counts"`
	Error       string           `json:"error,omitempty"`
	Actor       string           `json:"actor"`
	CreatedAt   time.Time        `json:"createdAt"`
	UpdatedAt   time.Time        `json:"updatedAt"`
}

// The audit log's actions. AuditSetting is the generic kind: a privacy
// setting's change (retention, cookieless), its summary says which.
const (
	AuditDeletionRequested = "person_deletion_requested"
	AuditDeletionDone      = "person_deletion_done"
	AuditDeletionFailed    = "person_deletion_failed"
	AuditExport            = "person_export"
	AuditSetting           = "privacy_setting_changed"
)

// AuditEntry is one row of the audit log. Summary never names a person.
type AuditEntry struct {
	ID        int64     `json:"id"`
	ProductID int64     `json:"productId"`
	Actor     string    `json:"actor"`
	Action    string    `json:"action"`
	Summary   string    `json:"summary"`
	CreatedAt time.Time `json:"createdAt"`
}

// AuditPageSize is how many entries a page of the audit log holds at most.
const AuditPageSize = 100

// PrivacyStore keeps the deletion jobs and the audit log, and deletes and
// reads a person's rows of the metadata store (survey responses, message
// states). Deleting is idempotent: a job run again after a crash deletes
// what is left.
type PrivacyStore interface {
	// CreatePersonDeletion stores d as pending and fills in its ID and
	// times.
	CreatePersonDeletion(ctx context.Context, d *PersonDeletion) error
	// PersonDeletion returns one of a product's jobs, or ErrNotFound.
	PersonDeletion(ctx context.Context, productID, id int64) (PersonDeletion, error)
	// UnfinishedPersonDeletions returns every job pending or running, of
	// every product, oldest first, with their ids.
	UnfinishedPersonDeletions(ctx context.Context) ([]PersonDeletion, error)
	// UpdatePersonDeletion sets a job's status, counts and error; a job
	// done or failed loses its ids.
	UpdatePersonDeletion(ctx context.Context, d *PersonDeletion) error

	// AddAudit appends an entry and fills in its ID and time.
	AddAudit(ctx context.Context, e *AuditEntry) error
	// AuditLog returns a page of a product's entries with ids below
	// before (0: from the newest), newest first, at most limit.
	AuditLog(ctx context.Context, productID, before int64, limit int) ([]AuditEntry, error)

	// DeletePersonSurveyResponses deletes the product's survey responses
	// of the ids and returns how many.
	DeletePersonSurveyResponses(ctx context.Context, productID int64, distinctIDs []string) (int64, error)
	// PersonSurveyResponses calls fn for each survey response of a
	// person, oldest first.
	PersonSurveyResponses(ctx context.Context, productID int64, distinctID string, fn func(SurveyResponse) error) error
	// DeletePersonMessageStates deletes the product's message states and
	// outcomes of the ids and returns how many rows.
	DeletePersonMessageStates(ctx context.Context, productID int64, distinctIDs []string) (int64, error)
	// PersonMessageStates calls fn with a person's states and outcomes.
	PersonMessageStates(ctx context.Context, productID int64, distinctID string, fn func(PersonMessageRow) error) error
}

// PersonMessageRow is a person's message state (Outcome "") or one
// outcome reached, as the export lists them.
type PersonMessageRow struct {
	CampaignID int64           `json:"campaignId,omitempty"`
	States     json.RawMessage `json:"states,omitempty"`
	Outcome    string          `json:"outcome,omitempty"`
	At         time.Time       `json:"at"`
}

// ExportedEvent is an event as a person's export lists it.
type ExportedEvent struct {
	UUID       string          `json:"uuid"`
	Env        string          `json:"env"`
	Timestamp  time.Time       `json:"timestamp"`
	ReceivedAt time.Time       `json:"receivedAt"`
	Event      string          `json:"event"`
	DistinctID string          `json:"distinctId"`
	URL        string          `json:"url,omitempty"`
	Referrer   string          `json:"referrer,omitempty"`
	UserAgent  string          `json:"userAgent,omitempty"`
	Browser    string          `json:"browser,omitempty"`
	OS         string          `json:"os,omitempty"`
	DeviceType string          `json:"deviceType,omitempty"`
	Country    string          `json:"country,omitempty"`
	Region     string          `json:"region,omitempty"`
	City       string          `json:"city,omitempty"`
	Properties json.RawMessage `json:"properties"`
}

// PersonEventStore is an event store's part of the privacy operations.
type PersonEventStore interface {
	// DeletePersons deletes every event of the product whose distinct id
	// is one of distinctIDs, and returns how many (-1 when the store
	// cannot tell, as a ClickHouse mutation).
	DeletePersons(ctx context.Context, productID int64, distinctIDs []string) (int64, error)
	// PersonEvents calls fn for each event of a person, oldest first,
	// streaming: it never holds them all.
	PersonEvents(ctx context.Context, productID int64, distinctID string, fn func(ExportedEvent) error) error
}
