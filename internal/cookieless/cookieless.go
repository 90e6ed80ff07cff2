// Package cookieless derives the visitor of an event sent in cookieless
// mode (docs/privacy.md, "Cookieless mode"): a browser SDK that keeps
// nothing in the browser sends analytics.CookielessID, and ingest replaces
// it with an id hashed from the day's salt, the product, the client
// address and the user agent, as Plausible counts visitors. The address
// goes into the hash and nowhere else.
package cookieless

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"strata/internal/analytics"
)

// IDPrefix starts every derived visitor id, so that a reader can tell
// them from the ids clients choose.
const IDPrefix = "cl_"

// saltBytes is the length of a day's salt.
const saltBytes = 32

// Visitors derives visitor ids. The salt of the current day is kept in
// memory; the first event of a new day reads (or creates) it in the
// store, which every node shares. It is safe for concurrent use.
type Visitors struct {
	Salts analytics.SaltStore
	// Timeout bounds the store's answer on the day's first event; 0 is
	// five seconds.
	Timeout time.Duration

	cur atomic.Pointer[daySalt]
	mu  sync.Mutex // one read of the store at a time
}

type daySalt struct {
	day  int64
	salt []byte
}

// ID returns the visitor id of a client at addr with userAgent, for an
// event of product received at now. The same inputs on the same UTC day
// give the same id on every node; on another day, or for another product,
// a different one.
func (v *Visitors) ID(now time.Time, product int64, addr netip.Addr, userAgent string) (string, error) {
	salt, err := v.salt(analytics.SaltDay(now))
	if err != nil {
		return "", err
	}
	// The input is built in a buffer on the stack for the usual user
	// agent (a few hundred bytes), so a derivation allocates only its id.
	var stack [512]byte
	in := append(stack[:0], salt...)
	in = binary.BigEndian.AppendUint64(in, uint64(product))
	a := addr.Unmap().As16()
	in = append(in, a[:]...)
	in = append(in, userAgent...)
	sum := sha256.Sum256(in)
	var out [len(IDPrefix) + 32]byte
	copy(out[:], IDPrefix)
	hex.Encode(out[len(IDPrefix):], sum[:16])
	return string(out[:]), nil
}

// salt returns day's salt, from memory when it is the day kept.
func (v *Visitors) salt(day int64) ([]byte, error) {
	if c := v.cur.Load(); c != nil && c.day == day {
		return c.salt, nil
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if c := v.cur.Load(); c != nil && c.day == day {
		return c.salt, nil
	}
	fresh := make([]byte, saltBytes)
	if _, err := rand.Read(fresh); err != nil {
		return nil, err
	}
	timeout := v.Timeout
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	salt, err := v.Salts.DailySalt(ctx, day, fresh)
	if err != nil {
		return nil, fmt.Errorf("the cookieless salt of the day: %w", err)
	}
	// A node whose clock is a little behind the others' asks for the day
	// before after another has moved on: answer it without replacing the
	// newer day kept.
	if c := v.cur.Load(); c == nil || c.day < day {
		v.cur.Store(&daySalt{day: day, salt: salt})
	}
	return salt, nil
}
