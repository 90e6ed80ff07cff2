// Package persons keeps person profiles up to date from the stored events
// (docs/ingest.md, "Person profiles"): the event stores are wrapped so
// that each batch they commit is handed to an Updater, which extracts the
// traits of $identify and the $set and $set_once objects of any event,
// and first and last seen, coalesces them per person and writes them to
// the metadata store from a goroutine of its own. Nothing of it runs
// before an event is stored; with the spool, nothing runs before the 202.
package persons

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"strata/internal/analytics"
)

// Defaults of Options.
const (
	DefaultInterval   = time.Second
	DefaultMaxPending = 100_000
	DefaultSeenStep   = time.Minute
	DefaultSeenCache  = 200_000
)

// Options tunes an Updater.
type Options struct {
	// Interval is how long updates wait, coalescing, before they are
	// written; zero means DefaultInterval.
	Interval time.Duration
	// MaxPending bounds the persons waiting to be written. Past it an
	// update that only moves first or last seen is dropped (the person's
	// next event carries it again) and one with properties waits for the
	// writer.
	MaxPending int
	// SeenStep is how far an event must move a person's last seen (or
	// before its first seen) to be written when it carries no properties:
	// last seen is precise to this step. Zero means DefaultSeenStep.
	SeenStep time.Duration
	// SeenCache bounds the persons whose written first and last seen are
	// remembered for SeenStep; zero means DefaultSeenCache.
	SeenCache int
	// MaxPersons caps each product's persons (0: no cap). A product at
	// the cap gets no new person; its persons' profiles are still
	// updated, and its events are stored as before (docs/security.md,
	// "Person profiles written from events").
	MaxPersons int64
	Logger     *slog.Logger
}

// recountEvery is how often the updater reads a capped product's number
// of persons again; in between it adds the persons it wrote, new or not,
// so that its estimate only errs high.
const recountEvery = time.Minute

// census is what the updater knows of one product's number of persons.
type census struct {
	persons int64
	counted time.Time
	full    bool
}

type key struct {
	product int64
	id      string
}

type seen struct{ first, last time.Time }

// Updater coalesces person updates and writes them in batches.
type Updater struct {
	opt Options
	log *slog.Logger

	mu      sync.Mutex
	room    *sync.Cond // signalled when pending is written
	pending map[key]*analytics.PersonUpdate
	order   []key
	written map[key]seen
	dropped int64
	store   analytics.PersonStore
	closed  bool
	// censuses are the products' numbers of persons, under MaxPersons
	// (capPersons); capMu guards them, since Flush writes beside the
	// writer.
	capMu    sync.Mutex
	censuses map[int64]*census

	wake chan struct{}
	stop chan struct{}
	done chan struct{}
}

// New returns an updater that queues updates; Start starts its writer.
func New(opt Options) *Updater {
	if opt.Interval <= 0 {
		opt.Interval = DefaultInterval
	}
	if opt.MaxPending <= 0 {
		opt.MaxPending = DefaultMaxPending
	}
	if opt.SeenStep <= 0 {
		opt.SeenStep = DefaultSeenStep
	}
	if opt.SeenCache <= 0 {
		opt.SeenCache = DefaultSeenCache
	}
	if opt.Logger == nil {
		opt.Logger = slog.Default()
	}
	u := &Updater{opt: opt, log: opt.Logger, pending: map[key]*analytics.PersonUpdate{}, written: map[key]seen{}, censuses: map[int64]*census{},
		wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	u.room = sync.NewCond(&u.mu)
	return u
}

// Start starts writing to store. Updates observed before it wait.
func (u *Updater) Start(store analytics.PersonStore) {
	u.mu.Lock()
	u.store = store
	u.mu.Unlock()
	go u.run()
}

// Close writes what is pending and stops the writer; it may be called
// more than once. Updates observed after it are dropped.
func (u *Updater) Close() error {
	u.mu.Lock()
	if u.closed {
		u.mu.Unlock()
		return nil
	}
	u.closed = true
	started := u.store != nil
	u.room.Broadcast()
	u.mu.Unlock()
	if !started {
		return nil
	}
	close(u.stop)
	<-u.done
	return nil
}

// Flush writes what is pending now.
func (u *Updater) Flush(ctx context.Context) error {
	u.mu.Lock()
	store := u.store
	u.mu.Unlock()
	if store == nil {
		return nil
	}
	return u.write(ctx, store)
}

// traits reports whether an event may carry properties for its person:
// $identify, or a property object whose text holds "$set (the bytes are
// searched rather than parsed, on the loader's path).
func traits(e *analytics.Event) bool {
	return e.Name == "$identify" || bytes.Contains(e.Properties, []byte(`"$set`))
}

// extract returns the properties e sets on its person: $identify's own
// properties but those whose key starts with $, and the objects of $set
// (overwrite) and $set_once (only where missing).
func extract(e *analytics.Event) (set, once map[string]json.RawMessage) {
	var props map[string]json.RawMessage
	if json.Unmarshal(e.Properties, &props) != nil {
		return nil, nil
	}
	if e.Name == "$identify" {
		for k, v := range props {
			if k != "" && k[0] != '$' {
				if set == nil {
					set = map[string]json.RawMessage{}
				}
				set[k] = v
			}
		}
	}
	object := func(raw json.RawMessage, into *map[string]json.RawMessage) {
		var m map[string]json.RawMessage
		if len(raw) == 0 || json.Unmarshal(raw, &m) != nil {
			return
		}
		for k, v := range m {
			if *into == nil {
				*into = map[string]json.RawMessage{}
			}
			(*into)[k] = v
		}
	}
	object(props["$set"], &set)
	object(props["$set_once"], &once)
	return set, once
}

// Observe takes a batch of stored events. Events that set properties are
// applied in event time order.
func (u *Updater) Observe(events []analytics.Event) {
	var withTraits []int
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.closed {
		return
	}
	for i := range events {
		e := &events[i]
		if e.DistinctID == "" {
			continue
		}
		if traits(e) {
			withTraits = append(withTraits, i)
			continue
		}
		k := key{e.ProductID, e.DistinctID}
		if w, ok := u.written[k]; ok && !e.Timestamp.Before(w.first) && e.Timestamp.Before(w.last.Add(u.opt.SeenStep)) {
			continue
		}
		if _, ok := u.pending[k]; !ok && len(u.pending) >= u.opt.MaxPending {
			u.dropped++
			continue
		}
		u.add(k, analytics.PersonUpdate{FirstSeen: e.Timestamp, LastSeen: e.Timestamp})
	}
	slices.SortStableFunc(withTraits, func(a, b int) int { return events[a].Timestamp.Compare(events[b].Timestamp) })
	for _, i := range withTraits {
		e := &events[i]
		set, once := extract(e)
		k := key{e.ProductID, e.DistinctID}
		for {
			if _, ok := u.pending[k]; ok || len(u.pending) < u.opt.MaxPending || u.store == nil || u.closed {
				break
			}
			u.room.Wait()
		}
		u.add(k, analytics.PersonUpdate{Set: set, SetOnce: once, FirstSeen: e.Timestamp, LastSeen: e.Timestamp})
	}
	if len(u.pending) >= personBatch {
		select {
		case u.wake <- struct{}{}:
		default:
		}
	}
}

// capPersons marks the updates of the products at MaxPersons as
// ExistingOnly. A product's number of persons is read when the writer
// first meets it and every recountEvery after; in between the persons of
// each batch are added as if all were new. So a product may pass the cap
// by what one batch adds, and one whose estimate reached the cap gets no
// new person until the next count says it has room.
func (u *Updater) capPersons(ctx context.Context, store analytics.PersonStore, batch []analytics.PersonUpdate) error {
	if u.opt.MaxPersons <= 0 {
		return nil
	}
	u.capMu.Lock()
	defer u.capMu.Unlock()
	now := time.Now()
	added := map[int64]int64{}
	for i := range batch {
		added[batch[i].ProductID]++
	}
	for product, n := range added {
		c := u.censuses[product]
		if c == nil || now.Sub(c.counted) >= recountEvery {
			persons, err := store.CountPersons(ctx, product)
			if err != nil {
				return err
			}
			if c == nil {
				c = &census{}
				u.censuses[product] = c
			}
			c.persons, c.counted = persons, now
		}
		full := c.persons >= u.opt.MaxPersons
		if full && !c.full {
			u.log.Warn("a product reached its cap of persons: its new distinct ids get no profile", "product", product, "persons", c.persons, "cap", u.opt.MaxPersons)
		}
		c.full = full
		if !full {
			c.persons += n
		}
	}
	for i := range batch {
		batch[i].ExistingOnly = u.censuses[batch[i].ProductID].full
	}
	return nil
}

// personBatch is how many pending persons wake the writer before its
// interval.
const personBatch = 4096

// add merges up, a later update, into k's pending one; u.mu is held.
func (u *Updater) add(k key, up analytics.PersonUpdate) {
	p, ok := u.pending[k]
	if !ok {
		// The id may be a view of the spool's read buffer, which is
		// reused once the batch is stored (spool.view): the key kept
		// must own its bytes.
		k.id = strings.Clone(k.id)
		// Set and SetOnce stay nil until a key needs them: most updates
		// only move first and last seen.
		up.ProductID, up.DistinctID = k.product, k.id
		u.pending[k], u.order = &up, append(u.order, k)
		return
	}
	for name, v := range up.Set {
		if p.Set == nil {
			p.Set = map[string]json.RawMessage{}
		}
		p.Set[name] = v
		delete(p.SetOnce, name) // a $set after a $set_once of the key wins
	}
	for name, v := range up.SetOnce {
		if _, ok := p.SetOnce[name]; !ok {
			if _, set := p.Set[name]; !set {
				if p.SetOnce == nil {
					p.SetOnce = map[string]json.RawMessage{}
				}
				p.SetOnce[name] = v
			}
		}
	}
	if up.FirstSeen.Before(p.FirstSeen) {
		p.FirstSeen = up.FirstSeen
	}
	if up.LastSeen.After(p.LastSeen) {
		p.LastSeen = up.LastSeen
	}
}

func (u *Updater) run() {
	defer close(u.done)
	tick := time.NewTicker(u.opt.Interval)
	defer tick.Stop()
	for {
		select {
		case <-u.stop:
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			u.write(ctx, u.store)
			cancel()
			return
		case <-tick.C:
		case <-u.wake:
		}
		u.write(context.Background(), u.store)
	}
}

// write writes the pending updates. A batch the store refuses is logged
// and dropped: the persons' next events carry first and last seen again,
// their properties are lost (docs/ingest.md, "Person profiles").
func (u *Updater) write(ctx context.Context, store analytics.PersonStore) error {
	u.mu.Lock()
	batch := make([]analytics.PersonUpdate, 0, len(u.order))
	for _, k := range u.order {
		batch = append(batch, *u.pending[k])
	}
	keys := u.order
	u.pending, u.order = map[key]*analytics.PersonUpdate{}, nil
	dropped := u.dropped
	u.dropped = 0
	u.room.Broadcast()
	u.mu.Unlock()
	if dropped > 0 {
		u.log.Warn("person updates dropped: the writer is behind", "updates", dropped)
	}
	if len(batch) == 0 {
		return nil
	}
	if err := u.capPersons(ctx, store, batch); err != nil {
		u.log.Error("counting persons", "err", err)
		return err
	}
	if err := store.ApplyPersons(ctx, batch); err != nil {
		u.log.Error("writing person profiles", "persons", len(batch), "err", err)
		return err
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.written)+len(keys) > u.opt.SeenCache {
		// Forget an arbitrary part: those persons' next events are
		// written again, which costs writes, never precision.
		n := len(u.written) + len(keys) - u.opt.SeenCache + u.opt.SeenCache/10
		for k := range u.written {
			if n <= 0 {
				break
			}
			delete(u.written, k)
			n--
		}
	}
	for i, k := range keys {
		w, ok := u.written[k]
		if !ok || batch[i].FirstSeen.Before(w.first) {
			w.first = batch[i].FirstSeen
		}
		if batch[i].LastSeen.After(w.last) {
			w.last = batch[i].LastSeen
		}
		u.written[k] = w
	}
	return nil
}
