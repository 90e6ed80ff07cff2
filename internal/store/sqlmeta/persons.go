package sqlmeta

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"strata/internal/analytics"
)

// Person profiles of a product (migration 0041, docs/ingest.md, "Person
// profiles"; docs/queries.md, "People").

var (
	_ analytics.PersonStore   = (*Store)(nil)
	_ analytics.PersonIDStore = (*Store)(nil)
)

const personColumns = `distinct_id, properties, first_seen, last_seen, updated_at`

func scanPerson(productID int64) func(Scanner) (analytics.Person, error) {
	return func(row Scanner) (analytics.Person, error) {
		p := analytics.Person{ProductID: productID}
		var props string
		err := row.Scan(&p.DistinctID, &props, &p.FirstSeen, &p.LastSeen, &p.UpdatedAt)
		p.Properties = json.RawMessage(props)
		p.FirstSeen, p.LastSeen, p.UpdatedAt = p.FirstSeen.UTC(), p.LastSeen.UTC(), p.UpdatedAt.UTC()
		return p, err
	}
}

// Person returns one person of a product, or ErrNotFound.
func (s *Store) Person(ctx context.Context, productID int64, distinctID string) (analytics.Person, error) {
	return queryOne(ctx, s.conn(), fmt.Sprintf("person %q", distinctID), scanPerson(productID),
		`SELECT `+personColumns+` FROM persons WHERE product_id = $1 AND distinct_id = $2`, productID, distinctID)
}

// personProperty is the text form of the property named by the parameter
// key ($n) of a person's row: the same on both databases for a key that
// does not start with $ or / (which DuckDB reads as a JSON path or
// pointer; the API refuses such filter keys).
func personProperty(key string) string {
	return `(CAST(properties AS JSON) ->> CAST(` + key + ` AS VARCHAR))`
}

// ListPersons returns one page of a product's persons, latest seen first.
// Each filter and the search read the properties' JSON, parsed per row
// (eq, contains and is_set only of the rows whose text holds the value):
// the product's rows are scanned, which the benchmark over a million
// persons times (docs/benchmarks.md).
func (s *Store) ListPersons(ctx context.Context, q analytics.PersonQuery) ([]analytics.Person, error) {
	args := []any{q.ProductID}
	param := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	where := []string{"product_id = $1"}
	if q.Search != "" {
		p := param(q.Search)
		// The JSON is parsed only for the rows whose text holds the search
		// text, which is how the stored text (written by mergeProperties,
		// without escapes but of " and \ and control characters) holds it.
		trait := `strpos(lower(CAST(properties AS JSON) ->> 'email'), lower(` + p + `)) > 0
			OR strpos(lower(CAST(properties AS JSON) ->> 'name'), lower(` + p + `)) > 0`
		if !strings.ContainsAny(q.Search, "\"\\") && !hasControl(q.Search) {
			trait = `strpos(lower(properties), lower(` + p + `)) > 0 AND (` + trait + `)`
		}
		where = append(where, `(starts_with(distinct_id, `+p+`) OR (`+trait+`))`)
	}
	for _, f := range q.Filters {
		cond, err := personFilter(f, param)
		if err != nil {
			return nil, err
		}
		where = append(where, cond)
	}
	if q.After != nil {
		at, id := param(q.After.LastSeen.UTC()), param(q.After.DistinctID)
		// last_seen <= at first, a range PostgreSQL reads from its index
		// (the order's two directions allow no row comparison).
		where = append(where, `last_seen <= `+at+` AND (last_seen < `+at+` OR distinct_id > `+id+`)`)
	}
	limit := param(q.Limit)
	return QueryAll(ctx, s.conn(), "listing persons", scanPerson(q.ProductID),
		`SELECT `+personColumns+` FROM persons WHERE `+strings.Join(where, " AND ")+`
		 ORDER BY last_seen DESC, distinct_id LIMIT `+limit, args...)
}

// personFilter is the condition of one filter on a person's row, its
// values bound through param: the people list's and cohorts' semantics.
func personFilter(f analytics.PersonFilter, param func(any) string) (string, error) {
	k := param(f.Key)
	prop := personProperty(k)
	// eq, contains and is_set first look for the value's (or the key's)
	// characters in the stored text, as the search does, and parse the
	// JSON only of the rows that hold them: a filter few persons pass then
	// costs a text scan, not a parse of every row. The profile writer
	// stores strings unescaped (unescaped), so the text holds them.
	plain := func(s string) bool { return !strings.ContainsAny(s, "\"\\") && !hasControl(s) }
	switch f.Operator {
	case analytics.OpEq:
		v := param(f.Value)
		if plain(f.Value) {
			return `strpos(properties, ` + v + `) > 0 AND ` + prop + ` = ` + v, nil
		}
		return prop + ` = ` + v, nil
	case analytics.OpNeq:
		return prop + ` IS DISTINCT FROM ` + param(f.Value), nil
	case analytics.OpContains:
		v := param(f.Value)
		if plain(f.Value) {
			return `strpos(lower(properties), lower(` + v + `)) > 0 AND strpos(lower(` + prop + `), lower(` + v + `)) > 0`, nil
		}
		return `strpos(lower(` + prop + `), lower(` + v + `)) > 0`, nil
	case analytics.OpIsSet:
		if plain(f.Key) {
			return `strpos(properties, '"' || ` + k + ` || '"') > 0 AND ` + prop + ` IS NOT NULL`, nil
		}
		return prop + ` IS NOT NULL`, nil
	case analytics.OpIsNotSet:
		return prop + ` IS NULL`, nil
	}
	return "", fmt.Errorf("person filter operator %q", f.Operator)
}

// hasControl reports whether s holds a character JSON writes escaped.
func hasControl(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x2028 || r == 0x2029 })
}

// DeletePersonProfiles deletes the profiles of distinctIDs in a product.
func (s *Store) DeletePersonProfiles(ctx context.Context, productID int64, distinctIDs []string) (int64, error) {
	var n int64
	for _, id := range distinctIDs {
		res, err := s.conn().ExecContext(ctx, `DELETE FROM persons WHERE product_id = $1 AND distinct_id = $2`, productID, id)
		if err != nil {
			return n, fmt.Errorf("deleting person profiles: %w", err)
		}
		k, err := res.RowsAffected()
		if err != nil {
			return n, err
		}
		n += k
	}
	return n, nil
}

// personChunk is how many persons ApplyPersons reads in one statement and
// writes in one transaction.
const personChunk = 256

type personKey struct {
	product int64
	id      string
}

// ApplyPersons merges updates into the stored profiles. Updates of the
// same person are merged first, in order. Each chunk of persons is read
// in one statement and written in one transaction; as UpsertGroup, a row
// is written only if it still holds what was read (an insert that does
// nothing on a conflict, an update conditioned on the old values), and
// the persons whose write lost to another writer are read and written
// again.
func (s *Store) ApplyPersons(ctx context.Context, updates []analytics.PersonUpdate) error {
	merged := map[personKey]*analytics.PersonUpdate{}
	var order []personKey
	for i := range updates {
		u := &updates[i]
		k := personKey{u.ProductID, u.DistinctID}
		m, ok := merged[k]
		if !ok {
			c := *u
			c.Set, c.SetOnce = map[string]json.RawMessage{}, map[string]json.RawMessage{}
			m = &c
			merged[k], order = m, append(order, k)
		}
		mergeUpdate(m, u)
	}
	for start := 0; start < len(order); start += personChunk {
		pending := order[start:min(start+personChunk, len(order))]
		var lastErr error
		for attempt := 0; len(pending) > 0; attempt++ {
			if attempt == upsertAttempts {
				if lastErr == nil {
					lastErr = errors.New("other writes of the persons kept winning")
				}
				return fmt.Errorf("storing persons: %w", lastErr)
			}
			if attempt > 0 {
				select {
				case <-ctx.Done():
					return ctx.Err()
				case <-time.After(rand.N(time.Duration(attempt) * time.Millisecond)):
				}
			}
			var err error
			pending, err = s.applyChunk(ctx, pending, merged)
			if err != nil {
				lastErr = err
			}
		}
	}
	return nil
}

// mergeUpdate folds u, the later update, into m.
func mergeUpdate(m, u *analytics.PersonUpdate) {
	for k, v := range u.Set {
		m.Set[k] = v
	}
	for k, v := range u.SetOnce {
		if _, ok := m.SetOnce[k]; !ok {
			m.SetOnce[k] = v
		}
	}
	if u.FirstSeen.Before(m.FirstSeen) {
		m.FirstSeen = u.FirstSeen
	}
	if u.LastSeen.After(m.LastSeen) {
		m.LastSeen = u.LastSeen
	}
}

// applyChunk writes the persons keys, at most personChunk of one or more
// products, and returns those it must write again.
func (s *Store) applyChunk(ctx context.Context, keys []personKey, updates map[personKey]*analytics.PersonUpdate) ([]personKey, error) {
	old := map[personKey]analytics.Person{}
	byProduct := map[int64][]string{}
	var seenOnly, seenExisting, withProps []personKey
	for _, k := range keys {
		if u := updates[k]; len(u.Set) == 0 && len(u.SetOnce) == 0 {
			if u.ExistingOnly {
				seenExisting = append(seenExisting, k)
			} else {
				seenOnly = append(seenOnly, k)
			}
			continue
		}
		withProps = append(withProps, k)
		byProduct[k.product] = append(byProduct[k.product], k.id)
	}
	for product, ids := range byProduct {
		args := []any{product}
		marks := make([]string, len(ids))
		for i, id := range ids {
			args = append(args, id)
			marks[i] = "$" + strconv.Itoa(i+2)
		}
		rows, err := QueryAll(ctx, s.conn(), "reading persons", scanPerson(product),
			`SELECT `+personColumns+` FROM persons WHERE product_id = $1 AND distinct_id IN (`+strings.Join(marks, ", ")+`)`, args...)
		if err != nil {
			return keys, err
		}
		for _, p := range rows {
			old[personKey{product, p.DistinctID}] = p
		}
	}
	tx, err := s.begin(ctx)
	if err != nil {
		return keys, fmt.Errorf("starting a transaction: %w", err)
	}
	defer tx.Rollback()
	now := s.stamp()
	if err := upsertSeen(ctx, tx, seenOnly, updates, now); err != nil {
		return keys, err
	}
	if err := updateSeen(ctx, tx, seenExisting, updates); err != nil {
		return keys, err
	}
	var again []personKey
	for _, k := range withProps {
		u := updates[k]
		first, last := u.FirstSeen.UTC().Truncate(time.Microsecond), u.LastSeen.UTC().Truncate(time.Microsecond)
		p, found := old[k]
		if !found && u.ExistingOnly {
			continue // the product is at its cap of persons
		}
		if !found {
			props, err := personProperties(nil, u)
			if err != nil {
				return keys, err
			}
			res, err := tx.ExecContext(ctx,
				`INSERT INTO persons (product_id, distinct_id, properties, first_seen, last_seen, updated_at)
				 VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (product_id, distinct_id) DO NOTHING`,
				k.product, k.id, props, first, last, now)
			var lost error
			if !won(res, err, &lost) {
				if lost != nil {
					return keys, lost
				}
				again = append(again, k)
			}
			continue
		}
		props, err := personProperties(p.Properties, u)
		if err != nil {
			return keys, err
		}
		if first.After(p.FirstSeen) {
			first = p.FirstSeen
		}
		if last.Before(p.LastSeen) {
			last = p.LastSeen
		}
		if props == string(p.Properties) && first.Equal(p.FirstSeen) && last.Equal(p.LastSeen) {
			continue
		}
		res, err := tx.ExecContext(ctx,
			`UPDATE persons SET properties = $3, first_seen = $4, last_seen = $5, updated_at = $6
			 WHERE product_id = $1 AND distinct_id = $2 AND properties = $7 AND first_seen = $8 AND last_seen = $9`,
			k.product, k.id, props, first, last, now, string(p.Properties), p.FirstSeen, p.LastSeen)
		var lost error
		if !won(res, err, &lost) {
			if lost != nil {
				return keys, lost
			}
			again = append(again, k)
		}
	}
	if err := tx.Commit(); err != nil {
		// DuckDB refuses a transaction that conflicts with another one's
		// write: the whole chunk is written again.
		return keys, fmt.Errorf("storing persons: %w", err)
	}
	return again, nil
}

// upsertSeen writes the persons whose updates hold no properties, most
// of them, in one statement: a new person is inserted with no properties,
// a stored one's first seen only moves earlier and last seen only later.
// Those merges do not depend on the order of writes, so no read and no
// condition are needed, unlike properties'.
func upsertSeen(ctx context.Context, tx txn, keys []personKey, updates map[personKey]*analytics.PersonUpdate, now time.Time) error {
	if len(keys) == 0 {
		return nil
	}
	args := make([]any, 0, 5*len(keys)+1)
	args = append(args, now)
	rows := make([]string, len(keys))
	for i, k := range keys {
		u := updates[k]
		n := len(args)
		args = append(args, k.product, k.id, `{}`, u.FirstSeen.UTC().Truncate(time.Microsecond), u.LastSeen.UTC().Truncate(time.Microsecond))
		rows[i] = fmt.Sprintf("($%d, $%d, $%d, $%d, $%d, $1)", n+1, n+2, n+3, n+4, n+5)
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO persons (product_id, distinct_id, properties, first_seen, last_seen, updated_at)
		VALUES `+strings.Join(rows, ", ")+`
		ON CONFLICT (product_id, distinct_id) DO UPDATE SET
			first_seen = LEAST(persons.first_seen, excluded.first_seen),
			last_seen = GREATEST(persons.last_seen, excluded.last_seen)`, args...)
	if err != nil {
		return fmt.Errorf("storing persons' first and last seen: %w", err)
	}
	return nil
}

// updateSeen moves the first and last seen of the persons keys that
// exist, creating none: the updates of a product at its cap of persons.
// One statement a person; a product reaches its cap rarely.
func updateSeen(ctx context.Context, tx txn, keys []personKey, updates map[personKey]*analytics.PersonUpdate) error {
	for _, k := range keys {
		u := updates[k]
		if _, err := tx.ExecContext(ctx, `UPDATE persons SET first_seen = LEAST(first_seen, $3), last_seen = GREATEST(last_seen, $4)
			WHERE product_id = $1 AND distinct_id = $2`,
			k.product, k.id, u.FirstSeen.UTC().Truncate(time.Microsecond), u.LastSeen.UTC().Truncate(time.Microsecond)); err != nil {
			return fmt.Errorf("storing persons' first and last seen: %w", err)
		}
	}
	return nil
}

// CountPersons returns how many profiles the product has.
func (s *Store) CountPersons(ctx context.Context, productID int64) (int64, error) {
	var n int64
	if err := s.conn().QueryRowContext(ctx, `SELECT count(*) FROM persons WHERE product_id = $1`, productID).Scan(&n); err != nil {
		return 0, fmt.Errorf("counting persons: %w", err)
	}
	return n, nil
}

// personProperties returns the stored object old with u's Set keys set
// and its SetOnce keys set where old has none.
func personProperties(old json.RawMessage, u *analytics.PersonUpdate) (string, error) {
	sent := map[string]json.RawMessage{}
	if len(u.SetOnce) > 0 && len(old) > 0 {
		var have map[string]json.RawMessage
		if err := json.Unmarshal(old, &have); err != nil {
			return "", fmt.Errorf("stored person properties: %w", err)
		}
		for k, v := range u.SetOnce {
			if _, ok := have[k]; !ok {
				sent[k] = v
			}
		}
	} else {
		for k, v := range u.SetOnce {
			sent[k] = v
		}
	}
	for k, v := range u.Set {
		sent[k] = v
	}
	for k, v := range sent {
		sent[k] = unescaped(v)
	}
	return mergeProperties(old, sent)
}

// unescaped is v written again without the escapes JSON does not need
// (\u00e4 for ä, \/ for /), so that the stored text holds a string's
// characters as they are, as ListPersons's search expects.
func unescaped(v json.RawMessage) json.RawMessage {
	if !bytes.ContainsRune(v, '\\') {
		return v
	}
	var x any
	dec := json.NewDecoder(bytes.NewReader(v))
	dec.UseNumber()
	if err := dec.Decode(&x); err != nil {
		return v
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(x); err != nil {
		return v
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// EachPersonID streams the distinct ids of a product's persons that pass
// every filter, in byte order (COLLATE "C": PostgreSQL's default collation
// would follow the locale; DuckDB's is already byte order), for a cohort's
// computation (docs/queries.md, "Cohorts"). Only the ids cross over, one
// row at a time.
func (s *Store) EachPersonID(ctx context.Context, productID int64, filters []analytics.PersonFilter, fn func(distinctID string) error) error {
	args := []any{productID}
	param := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	where := []string{"product_id = $1"}
	for _, f := range filters {
		cond, err := personFilter(f, param)
		if err != nil {
			return err
		}
		where = append(where, cond)
	}
	rows, err := s.conn().QueryContext(ctx, `SELECT distinct_id FROM persons WHERE `+strings.Join(where, " AND ")+
		` ORDER BY distinct_id COLLATE "C"`, args...)
	if err != nil {
		return fmt.Errorf("reading persons: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return fmt.Errorf("reading persons: %w", err)
		}
		if err := fn(id); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("reading persons: %w", err)
	}
	return nil
}
