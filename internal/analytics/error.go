package analytics

import (
	"errors"
	"fmt"
	"time"
)

// ErrorKind classifies an error for the edge that reports it. The HTTP layer maps
// each kind to one status code in one place; the store and ingest packages
// only say what went wrong, never which status that is.
type ErrorKind int

// The kinds of error Strata reports to clients.
const (
	KindInternal        ErrorKind = iota // a bug or an unexpected failure; the cause is logged, not shown
	KindInvalid                          // the request is malformed or breaks a rule (400)
	KindUnauthenticated                  // missing, unknown or revoked credential (401)
	KindForbidden                        // the credential is known but may not do this (403)
	KindNotFound                         // the named thing does not exist (404)
	KindConflict                         // the request clashes with the current state (409)
	KindTooLarge                         // the body or batch is over a limit (413)
	KindRateLimited                      // too many requests; RetryAfter says when to retry (429)
	KindUnavailable                      // storage is failing, the server is stopping or busy (503)
	KindTimeout                          // the request did not arrive in time (408)
	KindMisdirected                      // the request names a host this server does not answer for (421)
)

// Error is Strata's error vocabulary: a stable snake_case Code for programs,
// a Message safe to show to clients, and an optional wrapped cause that is
// logged but never sent.
type Error struct {
	Kind    ErrorKind
	Code    string
	Message string
	// RetryAfter, when non-zero, is sent as the Retry-After header.
	RetryAfter time.Duration
	// Detail is extra structured data for the response body, such as the
	// per-event rejections of a batch in which every event was rejected.
	Detail map[string]any
	Err    error
	// Logged says the cause was logged where it happened, once for all the
	// requests it fails (a group commit), so the edge does not log it again
	// for each of them.
	Logged bool
}

// Error implements the error interface with the code, message and cause.
func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code, e.Message, e.Err)
	}
	return e.Code + ": " + e.Message
}

// Unwrap exposes the cause to errors.Is and errors.As.
func (e *Error) Unwrap() error { return e.Err }

// Errorf builds an Error of the given kind and code with a formatted message.
func Errorf(kind ErrorKind, code, format string, args ...any) *Error {
	return &Error{Kind: kind, Code: code, Message: fmt.Sprintf(format, args...)}
}

// CodeStorageFull is the code of every refusal for lack of room on the
// server's disk: ingest and any other write get it while the data
// directory is below its free-space or free-inode floor, and reads go on.
const CodeStorageFull = "storage_full"

// IsStorageFull reports whether err is such a refusal.
func IsStorageFull(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == CodeStorageFull
}

// ErrNotFound is returned by stores when a looked-up row does not exist.
// Callers usually translate it into a more specific *Error.
var ErrNotFound = errors.New("not found")

// AsError returns err as an *Error, or wraps an unknown error as an internal
// one whose message reveals nothing of the cause.
func AsError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Kind: KindInternal, Code: "internal", Message: "An internal error occurred.", Err: err}
}

// InvalidField is the error of every request that breaks a rule about one
// field: 400 invalid_request, with the field named first in the message
// ("steps[1]: must not be empty"), so that a client can point at it. Nested
// fields are named as paths: series[0].event, ids[2].
func InvalidField(field, format string, args ...any) *Error {
	return &Error{Kind: KindInvalid, Code: "invalid_request", Message: field + ": " + fmt.Sprintf(format, args...)}
}
