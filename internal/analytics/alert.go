package analytics

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
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

// Validate checks a webhook's own fields, in field order; p decides which
// addresses the URL may name.
func (w *AlertWebhook) Validate(p WebhookPolicy) error {
	if err := ValidateWebhookURL(w.URL, p); err != nil {
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
// server's own network: other schemes, and an address that p refuses
// (400 webhook_address_refused). Loopback and private addresses are
// allowed: self-hosters run their receivers beside Strata. A host name is
// checked again on every delivery, on each address it resolves to
// (internal/alerts).
func ValidateWebhookURL(raw string, p WebhookPolicy) error {
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
	if ip, err := netip.ParseAddr(u.Hostname()); err == nil {
		if why := p.Refusal(ip); why != "" {
			return Errorf(KindInvalid, "webhook_address_refused",
				"url: names the address %s, which is never a webhook receiver: %s. An operator whose receiver is there can allow it with --alert-webhook-allow.", ip, why)
		}
	}
	return nil
}

// WebhookPolicy says which addresses alert webhooks may be delivered to:
// the rule the URL is checked against when it is set, and every address
// it resolves to when a delivery connects. It refuses
//
//   - link-local addresses (169.254.0.0/16, fe80::/10), where cloud
//     providers serve instance metadata and credentials (169.254.169.254);
//   - the metadata services that are not link-local: fd00:ec2::254 (AWS's
//     instance metadata over IPv6), 100.100.100.200 (Alibaba Cloud) and
//     192.0.0.192 (Oracle Cloud);
//   - unspecified and multicast addresses;
//   - an IPv6 address that carries an IPv4 address one of these rules
//     refuses: IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d),
//     IPv4-translated (::ffff:0:a.b.c.d), NAT64 (64:ff9b::/96, and the
//     local-use 64:ff9b:1::/48 at each RFC 6052 position), 6to4 (2002::/16)
//     and Teredo (2001::/32, its server and its client), since a gateway
//     on the way may deliver to the IPv4 address inside.
//
// Allow lists the prefixes an operator allows although these rules refuse
// them (--alert-webhook-allow), such as a receiver on a link-local
// network, or one of the metadata addresses where it is no metadata
// service. An address is allowed when it, or the IPv4 address a rule
// finds inside it, is in one of them.
type WebhookPolicy struct {
	Allow []netip.Prefix
}

// metadataAddresses are the cloud metadata services outside the
// link-local ranges, and whose they are.
var metadataAddresses = map[netip.Addr]string{
	netip.MustParseAddr("fd00:ec2::254"):   "AWS's instance metadata service over IPv6",
	netip.MustParseAddr("100.100.100.200"): "Alibaba Cloud's metadata service",
	netip.MustParseAddr("192.0.0.192"):     "Oracle Cloud's metadata service",
}

// Refusal returns why a webhook may not be delivered to ip, in words for
// the person who set it, or "" when it may.
func (p WebhookPolicy) Refusal(ip netip.Addr) string {
	ip = ip.WithZone("")
	if p.allowed(ip) {
		return ""
	}
	if why := refusedAddress(ip); why != "" {
		return why
	}
	for _, in := range embeddedIPv4(ip) {
		// 0.0.0.0 inside an IPv6 address is no address a gateway
		// forwards to, and is what the zero bits of a local-use NAT64
		// address give at the positions its prefix does not use.
		if p.allowed(in.addr) || in.addr.IsUnspecified() {
			continue
		}
		if why := refusedAddress(in.addr); why != "" {
			return fmt.Sprintf("the IPv4 address %s inside it (%s) is %s", in.addr, in.form, why)
		}
	}
	return ""
}

func (p WebhookPolicy) allowed(ip netip.Addr) bool {
	for _, prefix := range p.Allow {
		if prefix.Contains(ip) {
			return true
		}
	}
	return false
}

// refusedAddress applies the rules to ip itself.
func refusedAddress(ip netip.Addr) string {
	switch {
	case ip.IsUnspecified():
		return "unspecified"
	case ip.IsLinkLocalUnicast():
		return "link-local, where cloud providers serve instance metadata (169.254.169.254)"
	case ip.IsMulticast():
		return "multicast"
	}
	if whose, ok := metadataAddresses[ip]; ok {
		return whose
	}
	return ""
}

// embedded is an IPv4 address carried in an IPv6 one, and the form that
// carries it.
type embedded struct {
	addr netip.Addr
	form string
}

// The prefixes of the IPv6 forms that carry an IPv4 address.
var (
	nat64Prefix      = netip.MustParsePrefix("64:ff9b::/96")
	nat64LocalPrefix = netip.MustParsePrefix("64:ff9b:1::/48")
	sixToFourPrefix  = netip.MustParsePrefix("2002::/16")
	teredoPrefix     = netip.MustParsePrefix("2001::/32")
	compatPrefix     = netip.MustParsePrefix("::/96")
	translatedPrefix = netip.MustParsePrefix("::ffff:0:0:0/96")
)

// embeddedIPv4 returns the IPv4 addresses an IPv6 address carries.
func embeddedIPv4(ip netip.Addr) []embedded {
	if !ip.Is6() {
		return nil
	}
	b := ip.As16()
	v4 := func(i, j, k, l int) netip.Addr { return netip.AddrFrom4([4]byte{b[i], b[j], b[k], b[l]}) }
	switch {
	case ip.Is4In6():
		return []embedded{{ip.Unmap(), "IPv4-mapped"}}
	case nat64Prefix.Contains(ip):
		return []embedded{{v4(12, 13, 14, 15), "NAT64"}}
	case nat64LocalPrefix.Contains(ip):
		// RFC 6052: the IPv4 address follows the prefix, whose length the
		// network chose (48 to 96 bits here), skipping bits 64 to 71.
		return []embedded{
			{v4(6, 7, 9, 10), "local-use NAT64, /48"},
			{v4(7, 9, 10, 11), "local-use NAT64, /56"},
			{v4(9, 10, 11, 12), "local-use NAT64, /64"},
			{v4(12, 13, 14, 15), "local-use NAT64, /96"},
		}
	case sixToFourPrefix.Contains(ip):
		return []embedded{{v4(2, 3, 4, 5), "6to4"}}
	case teredoPrefix.Contains(ip):
		client := netip.AddrFrom4([4]byte{^b[12], ^b[13], ^b[14], ^b[15]})
		return []embedded{{v4(4, 5, 6, 7), "Teredo server"}, {client, "Teredo client"}}
	case translatedPrefix.Contains(ip):
		return []embedded{{v4(12, 13, 14, 15), "IPv4-translated"}}
	case compatPrefix.Contains(ip) && ip != netip.IPv6Loopback() && !ip.IsUnspecified():
		return []embedded{{v4(12, 13, 14, 15), "IPv4-compatible"}}
	}
	return nil
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
