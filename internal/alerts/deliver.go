package alerts

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
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

// Sender posts signed deliveries. Its client connects only to addresses
// Policy allows (analytics.WebhookPolicy): it resolves a host name once,
// refuses the delivery when any of the addresses is refused, and dials
// the addresses it checked, so that a DNS answer that changes between
// the check and the connection cannot lead elsewhere. It follows no
// redirect and goes through no proxy (HTTP_PROXY is not read), so that
// the check is made on the receiver's own address.
type Sender struct {
	Client *http.Client
	// Attempts and Backoff: how many times a delivery is tried and the
	// first wait between tries (analytics.MaxAlertAttempts, FirstBackoff
	// when zero).
	Attempts int
	Backoff  time.Duration
	Now      func() time.Time
	// OnResult, when set, is told each attempt's result (the metrics).
	OnResult func(Result)

	// dialer makes Client's connections, and holds the policy.
	dialer *dialer
}

// Policy returns the rule the client applies, the dialer's own, so that
// the API checks webhook URLs against the same one when they are set.
func (s *Sender) Policy() analytics.WebhookPolicy { return s.dialer.policy }

// Resolver looks up a host name's addresses; net.DefaultResolver is one.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// NewSender returns a Sender with the delivery defaults that delivers to
// the addresses p allows.
func NewSender(p analytics.WebhookPolicy) *Sender {
	return newSender(p, net.DefaultResolver)
}

// newSender is NewSender with the resolver given, for the tests.
func newSender(p analytics.WebhookPolicy, r Resolver) *Sender {
	d := &dialer{policy: p, resolver: r}
	d.net = net.Dialer{Timeout: AttemptTimeout, Control: d.control}
	transport := &http.Transport{
		Proxy:                 nil,
		DialContext:           d.DialContext,
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
	}, Attempts: analytics.MaxAlertAttempts, Backoff: FirstBackoff, Now: time.Now, dialer: d}
}

// refusedError is the error of a delivery to an address the policy
// refuses; a retry would be refused again.
type refusedError struct {
	ip  netip.Addr
	why string
}

func (e *refusedError) Error() string {
	return fmt.Sprintf("the webhook's host resolves to %s, which is never a receiver: %s", e.ip, e.why)
}

// dialer makes the connections of deliveries.
type dialer struct {
	policy   analytics.WebhookPolicy
	resolver Resolver
	net      net.Dialer
}

// DialContext resolves address's host once (an IP address is taken as
// it is), refuses the connection when the policy refuses any of the
// answers, and dials the answers themselves in turn until one connects,
// each with its share of the time left, as net.Dialer does.
func (d *dialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	var addrs []netip.Addr
	if ip, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{ip}
	} else if addrs, err = d.resolver.LookupNetIP(ctx, "ip", host); err != nil {
		return nil, err
	}
	if len(addrs) == 0 {
		return nil, fmt.Errorf("resolving %s: no address", host)
	}
	for _, ip := range addrs {
		if why := d.policy.Refusal(ip); why != "" {
			return nil, &refusedError{ip, why}
		}
	}
	var first error
	for i, ip := range addrs {
		attempt := ctx
		if deadline, ok := ctx.Deadline(); ok {
			var cancel context.CancelFunc
			attempt, cancel = context.WithTimeout(ctx, time.Until(deadline)/time.Duration(len(addrs)-i))
			defer cancel()
		}
		conn, err := d.net.DialContext(attempt, network, net.JoinHostPort(ip.Unmap().String(), port))
		if err == nil {
			return conn, nil
		}
		if first == nil {
			first = err
		}
		if ctx.Err() != nil {
			break
		}
	}
	return nil, first
}

// control checks, once more, the address a socket is about to connect
// to: the one DialContext checked, whatever led there.
func (d *dialer) control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return err
	}
	if why := d.policy.Refusal(ap.Addr()); why != "" {
		return &refusedError{ap.Addr(), why}
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
	r := s.send(ctx, target, secret, body, at)
	if s.OnResult != nil {
		s.OnResult(r)
	}
	return r
}

func (s *Sender) send(ctx context.Context, target, secret string, body []byte, at time.Time) Result {
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
		var refused *refusedError
		return Result{Error: transportError(err), Retry: !errors.As(err, &refused), Took: time.Since(start)}
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
	var refused *refusedError
	if errors.As(err, &refused) {
		return refused.Error()
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
