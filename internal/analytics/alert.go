package analytics

import (
	"context"
	"encoding/json"
	"net"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"
)

// Error alerts (docs/errors.md, "Alerts"): each product may have one
// webhook, which the alert job (internal/alerts) calls when an error group
// is new and when a group's hourly count spikes.

// Defaults and limits of an alert webhook.
const (
	DefaultSpikeFactor = 5
	MinSpikeFactor     = 1.5
	MaxSpikeFactor     = 1000
	DefaultSpikeMin    = 10
	MaxSpikeMin        = 1_000_000
	maxWebhookURLChars = 2048
)

// AlertWebhook is a product's alert settings: where alerts go, whether
// they are sent, and the spike rule (a group's count in the last complete
// hour above SpikeFactor times its average hourly count over the seven
// days before, and at least SpikeMin events).
//
// Secret is the key the server signs every delivery with (HMAC-SHA256). It
// is kept as it is, not hashed: the server must compute the HMAC, for
// which it needs the key itself. It is shown once, when the webhook is
// created or the secret rotated; SecretPrefix tells secrets apart after.
type AlertWebhook struct {
	ProductID    int64     `json:"productId"`
	URL          string    `json:"url"`
	Enabled      bool      `json:"enabled"`
	SpikeFactor  float64   `json:"spikeFactor"`
	SpikeMin     int64     `json:"spikeMinCount"`
	Secret       string    `json:"-"`
	SecretPrefix string    `json:"secretPrefix"`
	CreatedAt    time.Time `json:"createdAt"`
	UpdatedAt    time.Time `json:"updatedAt"`
}

// Validate checks a webhook's own fields, in field order.
func (w *AlertWebhook) Validate() error {
	if err := ValidateWebhookURL(w.URL); err != nil {
		return err
	}
	if w.SpikeFactor < MinSpikeFactor || w.SpikeFactor > MaxSpikeFactor || !hundredths(w.SpikeFactor) {
		return InvalidField("spikeFactor", "must be a number from %v to %d with at most two decimals, not %v", MinSpikeFactor, MaxSpikeFactor, w.SpikeFactor)
	}
	if w.SpikeMin < 1 || w.SpikeMin > MaxSpikeMin {
		return InvalidField("spikeMinCount", "must be a whole number from 1 to %d, not %d", MaxSpikeMin, w.SpikeMin)
	}
	return nil
}

// ValidateWebhookURL checks an alert webhook's address: an absolute http
// or https URL with a host, without user information or a fragment, of at
// most 2,048 characters. Strata posts to whatever address the product's
// owner sets, so it refuses what can only be a mistake or an attack on the
// server's own network: other schemes, and addresses that are never a
// receiver (link-local ones, among them the cloud metadata service
// 169.254.169.254; unspecified and multicast ones). Loopback and private
// addresses are allowed: self-hosters run their receivers beside Strata.
// A host name is checked again on every delivery, on the address it
// resolves to (internal/alerts).
func ValidateWebhookURL(raw string) error {
	if n := utf8.RuneCountInString(raw); n < 1 || n > maxWebhookURLChars || !utf8.ValidString(raw) {
		return InvalidField("url", "is required: the address alerts are posted to, 1 to %d characters", maxWebhookURLChars)
	}
	u, err := url.Parse(raw)
	if err != nil || strings.ContainsAny(raw, " \t\r\n") {
		return InvalidField("url", "must be an http or https URL such as https://hooks.example.com/strata")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return InvalidField("url", "must be an http or https URL; the scheme %q is refused", u.Scheme)
	}
	if u.Host == "" || u.Hostname() == "" || u.Opaque != "" {
		return InvalidField("url", "must name a host, as in https://hooks.example.com/strata")
	}
	if u.User != nil {
		return InvalidField("url", "must not carry a user name or password; put a token in the path or query instead")
	}
	if u.Fragment != "" || strings.Contains(raw, "#") {
		return InvalidField("url", "must not have a fragment (#…): it is never sent")
	}
	if ip := net.ParseIP(u.Hostname()); ip != nil && !WebhookAddressAllowed(ip) {
		return InvalidField("url", "names the address %s, which is never a webhook receiver (link-local, unspecified or multicast)", ip)
	}
	return nil
}

// WebhookAddressAllowed reports whether a webhook may be delivered to ip:
// not a link-local address (169.254.0.0/16, fe80::/10: the cloud metadata
// service lives there), nor an unspecified or multicast one.
func WebhookAddressAllowed(ip net.IP) bool {
	return !ip.IsLinkLocalUnicast() && !ip.IsLinkLocalMulticast() && !ip.IsInterfaceLocalMulticast() &&
		!ip.IsMulticast() && !ip.IsUnspecified()
}

// AlertKind says why an alert was sent.
type AlertKind string

// The kinds of alert: a group seen for the first time, and a group whose
// hourly count spiked.
const (
	AlertNew   AlertKind = "new"
	AlertSpike AlertKind = "spike"
)

// MaxAlertAttempts is how many times a delivery is tried.
const MaxAlertAttempts = 5

// Alert is the record of one alert: which group, why, and how its
// delivery went. A group alerts once as new and once per spike hour; the
// record, claimed before the delivery, is what makes that hold on any
// number of nodes.
type Alert struct {
	ID          int64     `json:"id"`
	ProductID   int64     `json:"productId"`
	Fingerprint string    `json:"fingerprint"`
	Kind        AlertKind `json:"kind"`
	// Hour is the spike's hour (its start, UTC); nil for a new group.
	Hour *time.Time `json:"hour"`
	// Payload is the JSON body delivered (without its per-attempt
	// timestamp).
	Payload     json.RawMessage `json:"payload"`
	CreatedAt   time.Time       `json:"createdAt"`
	Status      string          `json:"status"`
	DeliveredAt *time.Time      `json:"deliveredAt"`
	Attempts    int             `json:"attempts"`
	LastError   string          `json:"lastError"`
}

// The states of an alert's delivery: being tried, delivered (the
// receiver answered 2xx), failed (every attempt failed, or the receiver
// refused it with an answer that a retry would not change).
const (
	AlertPending   = "pending"
	AlertDelivered = "delivered"
	AlertFailed    = "failed"
)

// AlertStore keeps the products' alert webhooks and the alerts sent, in
// the metadata store so that every node sees them.
type AlertStore interface {
	// AlertWebhook returns a product's webhook, or ErrNotFound.
	AlertWebhook(ctx context.Context, productID int64) (AlertWebhook, error)
	// CreateAlertWebhook stores w for its product and fills in its
	// times, or returns ErrDuplicate when the product has one.
	CreateAlertWebhook(ctx context.Context, w *AlertWebhook) error
	// UpdateAlertWebhook stores w's fields (its secret too) and sets
	// UpdatedAt, or returns ErrNotFound.
	UpdateAlertWebhook(ctx context.Context, w *AlertWebhook) error
	// DeleteAlertWebhook deletes a product's webhook, or returns
	// ErrNotFound. The alerts sent are kept: a webhook set up again does
	// not alert again for what was alerted.
	DeleteAlertWebhook(ctx context.Context, productID int64) error
	// EnabledAlertWebhooks returns the enabled webhooks of every product.
	EnabledAlertWebhooks(ctx context.Context) ([]AlertWebhook, error)
	// ClaimAlert records a (ProductID, Fingerprint, Kind, Hour, Payload
	// set) as pending unless that product already has an alert of that fingerprint,
	// kind and hour, and reports whether it did; it fills in ID and
	// Status and CreatedAt. Only the caller that claimed an alert delivers it.
	ClaimAlert(ctx context.Context, a *Alert) (bool, error)
	// RecordAlertAttempt stores how a claimed alert's delivery went so
	// far: its Status, Attempts, DeliveredAt and LastError.
	RecordAlertAttempt(ctx context.Context, a *Alert) error
	// ListAlerts returns a product's latest alerts, newest first, at most
	// limit of them.
	ListAlerts(ctx context.Context, productID int64, limit int) ([]Alert, error)
}
