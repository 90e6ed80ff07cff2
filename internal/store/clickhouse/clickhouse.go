// Package clickhouse is Strata's event store at scale: events in a
// ClickHouse MergeTree table, written in batches over the native protocol,
// and every query of the query engine compiled to ClickHouse SQL. It
// implements the same contracts as the embedded DuckDB store, so handlers
// and the query engine do not know which one they talk to.
//
// The SQL runs on ClickHouse 18.16 (what Debian ships) and on current
// releases, which rules out a few newer conveniences: DateTime64 (times are
// Int64 microseconds), JSON functions (properties are also stored as
// parallel key and value arrays, flattened at insert), WITH subqueries, and
// server-side query parameters (values are bound by the driver, which
// quotes and escapes them; nothing from a request is spliced as SQL text).
//
// On a cluster (URL parameter cluster=NAME) each shard holds a local table
// events_local and Strata reads and writes a Distributed table events over
// them, sharded by user, so that all of one user's events live on one shard.
// Every query aggregates per user in a single GROUP BY, which a
// Distributed table merges correctly whatever the sharding.
package clickhouse

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"strata/internal/analytics"
)

// Store implements analytics.EventStore and analytics.QueryStore.
type Store struct {
	conn    driver.Conn
	db      string
	cluster string
	// table is the table reads and writes name: events, quoted with its
	// database. It is built from the URL's validated database name.
	table string
	// opts is how Open connected, for the connections to each shard of a
	// cluster that the retention job's mutations need (retention.go).
	opts *clickhouse.Options

	// traceSQL, set only by tests, sees every query's statement and
	// parameters before it runs (the golden SQL files in testdata/sql).
	traceSQL func(sql string, args []any)
}

var (
	_ analytics.EventStore = (*Store)(nil)
	_ analytics.QueryStore = (*Store)(nil)
)

// identRE is what a database or cluster name may be; they are spliced into
// DDL as identifiers, so they are checked, not escaped.
var identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,62}$`)

// Open connects to the ClickHouse server of rawURL,
// clickhouse://[user:password@]host:port[,host:port…]/database[?cluster=NAME],
// creates the database and tables if missing and checks they answer. Other
// query parameters are the driver's (dial_timeout, compress, …).
func Open(ctx context.Context, rawURL string) (*Store, error) {
	u, err := url.Parse(rawURL)
	if err != nil || u.Scheme != "clickhouse" {
		return nil, fmt.Errorf("events URL: want clickhouse://host:port/database, got %q", redact(rawURL))
	}
	db := strings.Trim(u.Path, "/")
	if db == "" {
		db = "strata"
	}
	q := u.Query()
	cluster := q.Get("cluster")
	q.Del("cluster")
	if !identRE.MatchString(db) || (cluster != "" && !identRE.MatchString(cluster)) {
		return nil, fmt.Errorf("events URL: database and cluster names must be identifiers")
	}
	// The driver's DSN names a database that must exist; connect to the
	// default one and qualify every table instead.
	u.Path, u.RawQuery = "/default", q.Encode()
	opts, err := clickhouse.ParseDSN(u.String())
	if err != nil {
		return nil, fmt.Errorf("events URL: %w", err)
	}
	conn, err := clickhouse.Open(opts)
	if err != nil {
		return nil, fmt.Errorf("connecting to ClickHouse: %w", err)
	}
	s := &Store{conn: conn, db: db, cluster: cluster, table: "`" + db + "`.events", opts: opts}
	if err := conn.Ping(ctx); err != nil {
		conn.Close()
		return nil, fmt.Errorf("connecting to ClickHouse at %s: %w", strings.Join(opts.Addr, ","), err)
	}
	if err := s.migrate(ctx, opts); err != nil {
		conn.Close()
		return nil, err
	}
	return s, nil
}

// redact drops the password from a URL for error messages.
func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}

// Close releases the connections.
func (s *Store) Close() error { return s.conn.Close() }

// migrate brings the database's tables to this binary's schema
// (migrations.go, migrations/*.sql). Every node may run it at every start.
func (s *Store) migrate(ctx context.Context, opts *clickhouse.Options) error {
	now := time.Now()
	if s.cluster == "" {
		return migrateTable(ctx, s.conn, s.db, tableSet{"events", mergeTree, "cohort_members", cohortMergeTree}, now)
	}
	// On a cluster every shard needs the local table. Distributed DDL (ON
	// CLUSTER) needs ZooKeeper, which a small cluster may not run, so Strata
	// connects to each shard the server's configuration lists.
	shards, err := s.shards(ctx)
	if err != nil {
		return err
	}
	// Every shard also gets the Distributed table, so that any of them can
	// be the one a node connects to.
	distributed := tableSet{"events", "ENGINE = Distributed(" + s.cluster + ", " + s.db + ", events_local, user_id)",
		"cohort_members", "ENGINE = Distributed(" + s.cluster + ", " + s.db + ", cohort_members_local, cityHash64(distinct_id))"}
	for _, addr := range shards {
		o := *opts
		o.Addr = []string{addr}
		conn, err := clickhouse.Open(&o)
		if err != nil {
			return fmt.Errorf("connecting to shard %s: %w", addr, err)
		}
		err = migrateTable(ctx, conn, s.db, tableSet{"events_local", mergeTree, "cohort_members_local", cohortMergeTree}, now)
		if err == nil {
			err = migrateTable(ctx, conn, s.db, distributed, now)
		}
		conn.Close()
		if err != nil {
			return fmt.Errorf("creating tables on shard %s: %w", addr, err)
		}
	}
	// The server Strata talks to may be a query node outside the shards.
	if err := migrateTable(ctx, s.conn, s.db, distributed, now); err != nil {
		return fmt.Errorf("creating the distributed table: %w", err)
	}
	return nil
}

// insertColumns lists the columns AppendEvents writes, in order. Naming
// them is also what lets ClickHouse 18.16 describe the insert block.
const insertColumns = "uuid, product_id, env, ts, received_at, event, distinct_id, user_id, url, path, referrer, user_agent, browser, os, device_type, is_bot, bot_name, bot_category, properties, prop_keys, prop_values, source, channel, utm_source, utm_medium, utm_campaign, country, region, city, screen_class"

// AppendEvents inserts events as one block. A block of one insert is
// atomic on a MergeTree table. On a cluster the insert waits until every
// shard has its part (insert_distributed_sync), so 202 still means stored;
// a failure on one shard can leave the other's part in place, and the
// caller's retry then stores those events twice unless the tables are
// Replicated*, whose block deduplication drops the repeat (docs/deploy.md).
func (s *Store) AppendEvents(ctx context.Context, events []analytics.Event) error {
	if len(events) == 0 {
		return nil
	}
	if s.cluster != "" {
		ctx = clickhouse.Context(ctx, clickhouse.WithSettings(clickhouse.Settings{"insert_distributed_sync": 1}))
	}
	batch, err := s.conn.PrepareBatch(ctx, "INSERT INTO "+s.table+" ("+insertColumns+")")
	if err != nil {
		return fmt.Errorf("preparing insert: %w", err)
	}
	defer batch.Abort()
	for i := range events {
		e := &events[i]
		keys, values, err := flatten(e.Properties)
		if err != nil {
			return fmt.Errorf("event %d: %w", i, err)
		}
		var bot uint8
		if e.IsBot {
			bot = 1
		}
		err = batch.Append(e.UUID[:], e.ProductID, string(e.Env), e.Timestamp.UnixMicro(), e.ReceivedAt.UnixMicro(),
			e.Name, e.DistinctID, e.UserID, e.URL, e.Path, e.Referrer, e.UserAgent, e.Browser, e.OS, e.DeviceType,
			bot, e.BotName, e.BotCategory, string(e.Properties), keys, values,
			e.Source, e.Channel, e.UTMSource, e.UTMMedium, e.UTMCampaign, e.Country, e.Region, e.City, e.ScreenClass)
		if err != nil {
			return fmt.Errorf("appending event %d: %w", i, err)
		}
	}
	if err := batch.Send(); err != nil {
		return fmt.Errorf("inserting %d events: %w", len(events), err)
	}
	return nil
}

// flatten returns the top-level properties of a JSON object as keys and
// text forms: strings unquoted, numbers as written, booleans as true or
// false, objects and arrays as their compact JSON. Keys whose value is null
// are left out, as DuckDB's json_extract_string reads them as unset.
func flatten(props json.RawMessage) ([]string, []string, error) {
	if len(props) == 0 || string(props) == "{}" {
		return []string{}, []string{}, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(props, &m); err != nil {
		return nil, nil, fmt.Errorf("properties: %w", err)
	}
	keys := make([]string, 0, len(m))
	values := make([]string, 0, len(m))
	for k, raw := range m {
		switch {
		case string(raw) == "null":
			continue
		case len(raw) > 0 && raw[0] == '"':
			var str string
			if err := json.Unmarshal(raw, &str); err != nil {
				return nil, nil, fmt.Errorf("property %q: %w", k, err)
			}
			keys, values = append(keys, k), append(values, str)
		default:
			keys, values = append(keys, k), append(values, string(raw))
		}
	}
	return keys, values, nil
}

// RecentUUIDs streams the uuids of events received since a moment, newest
// first, for the ingest writer's deduplication window.
func (s *Store) RecentUUIDs(ctx context.Context, since time.Time, limit int, fn func(productID int64, uuid [16]byte) error) error {
	rows, err := s.conn.Query(ctx, "SELECT product_id, uuid FROM "+s.table+
		" WHERE received_at >= ? ORDER BY received_at DESC LIMIT ?", since.UnixMicro(), limit)
	if err != nil {
		return fmt.Errorf("reading recent uuids: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var pid int64
		var u string
		if err := rows.Scan(&pid, &u); err != nil {
			return fmt.Errorf("reading recent uuids: %w", err)
		}
		if len(u) != 16 {
			return errors.New("reading recent uuids: uuid is not 16 bytes")
		}
		if err := fn(pid, [16]byte([]byte(u))); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("reading recent uuids: %w", err)
	}
	return nil
}
