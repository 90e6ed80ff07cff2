package alerts

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"syscall"
	"time"

	"strata/internal/analytics"
)

// Delivery defaults (docs/errors.md, "Alerts").
const (
	// AttemptTimeout bounds one attempt, from the connection to the
	// receiver's answer.
	AttemptTimeout = 5 * time.Second
	// FirstBackoff is the wait after the first failed attempt; each wait
	// after it doubles (1 s, 2 s, 4 s, 8 s).
	FirstBackoff = time.Second
)

// Sender posts signed deliveries. Its client refuses, when it connects,
// the addresses analytics.WebhookAddressAllowed refuses (a host name that
// resolves to 169.254.169.254 included), follows no redirect and goes
// through no proxy, so that the check is made on the receiver's own
// address.
type Sender struct {
	Client *http.Client
	// Attempts and Backoff: how many times a delivery is tried and the
	// first wait between tries (analytics.MaxAlertAttempts, FirstBackoff
	// when zero).
	Attempts int
	Backoff  time.Duration
	Now      func() time.Time
}

// NewSender returns a Sender with the delivery defaults.
func NewSender() *Sender {
	dialer := &net.Dialer{Timeout: AttemptTimeout, Control: refuseAddress}
	transport := &http.Transport{
		Proxy:                 nil,
		DialContext:           dialer.DialContext,
		TLSHandshakeTimeout:   AttemptTimeout,
		ResponseHeaderTimeout: AttemptTimeout,
		MaxIdleConns:          16,
		IdleConnTimeout:       30 * time.Second,
	}
	return &Sender{Client: &http.Client{
		Transport: transport,
		Timeout:   AttemptTimeout,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}, Attempts: analytics.MaxAlertAttempts, Backoff: FirstBackoff, Now: time.Now}
}

// errRefusedAddress is the error of a connection to a refused address.
var errRefusedAddress = errors.New("the webhook's host resolves to an address that is never a receiver (link-local, unspecified or multicast)")

// refuseAddress is the dialer's check of the address it is about to
// connect to, after name resolution.
func refuseAddress(_, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return err
	}
	if ip := net.ParseIP(host); ip == nil || !analytics.WebhookAddressAllowed(ip) {
		return errRefusedAddress
	}
	return nil
}

// Result is how one attempt went.
type Result struct {
	// Status is the receiver's HTTP status, 0 when none came.
	Status int `json:"status"`
	// Delivered: the receiver answered 2xx.
	Delivered bool `json:"delivered"`
	// Error says why it was not delivered, "" when it was.
	Error string `json:"error"`
	// Retry: a later attempt may succeed (no answer, 408, 429 or 5xx).
	Retry bool `json:"-"`
	// Took is how long the attempt took.
	Took time.Duration `json:"-"`
}

// Send makes one attempt: a POST of body to target with the signature and
// the timestamp headers. The receiver's answer body is read (at most 4 KB)
// and dropped: what Strata reports of an attempt is the status, never what
// the receiver wrote, so that a webhook pointed at an internal service is
// no way to read it.
func (s *Sender) Send(ctx context.Context, target, secret string, body []byte, at time.Time) Result {
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, AttemptTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return Result{Error: "the webhook URL cannot be used: " + err.Error()}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "Strata-Alerts/1")
	req.Header.Set(SignatureHeader, Sign(secret, body))
	req.Header.Set(TimestampHeader, strconv.FormatInt(at.Unix(), 10))
	resp, err := s.Client.Do(req)
	if err != nil {
		return Result{Error: transportError(err), Retry: !errors.Is(err, errRefusedAddress), Took: time.Since(start)}
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
	resp.Body.Close()
	r := Result{Status: resp.StatusCode, Took: time.Since(start)}
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		r.Delivered = true
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		r.Error = fmt.Sprintf("HTTP %d: the receiver redirected, and alerts follow no redirect; set the final URL", resp.StatusCode)
	default:
		r.Error = "HTTP " + strconv.Itoa(resp.StatusCode)
		r.Retry = resp.StatusCode >= 500 || resp.StatusCode == http.StatusRequestTimeout || resp.StatusCode == http.StatusTooManyRequests
	}
	return r
}

// transportError words a failed request without the URL, which
// http.Client puts in its errors.
func transportError(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return "no answer within " + AttemptTimeout.String()
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return "no answer within " + AttemptTimeout.String()
	}
	if errors.Is(err, errRefusedAddress) {
		return errRefusedAddress.Error()
	}
	return err.Error()
}

// Deliver tries a delivery up to Attempts times, waiting Backoff, then
// twice as long before each next try, while the failure is one a retry may
// mend. body makes the body of each attempt from its time (the timestamp
// is part of what is signed); after each attempt, attempted is told how it
// went. It returns the last attempt's result and how many were made; it
// stops early when ctx ends.
func (s *Sender) Deliver(ctx context.Context, target, secret string, body func(at time.Time) []byte,
	attempted func(n int, r Result)) (Result, int) {
	attempts, wait := s.Attempts, s.Backoff
	if attempts < 1 {
		attempts = analytics.MaxAlertAttempts
	}
	if wait <= 0 {
		wait = FirstBackoff
	}
	now := s.Now
	if now == nil {
		now = time.Now
	}
	var r Result
	for n := 1; ; n++ {
		at := now()
		r = s.Send(ctx, target, secret, body(at), at)
		if attempted != nil {
			attempted(n, r)
		}
		if r.Delivered || !r.Retry || n >= attempts {
			return r, n
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return r, n
		case <-t.C:
		}
		wait *= 2
	}
}
