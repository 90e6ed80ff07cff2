package duckdb

/*
#include <stdint.h>

// Declarations from duckdb.h, DuckDB's C API, which duckdb-go-bindings
// links into the binary; repeated here so that this file need not find the
// header in the module cache.
typedef uint64_t idx_t;
typedef struct _duckdb_vector { void *internal_ptr; } *duckdb_vector;
void duckdb_vector_assign_string_element_len(duckdb_vector vector, idx_t index, const char *str, idx_t str_len);

// strata_assign_strings sets rows 0 to n-1 of a VARCHAR vector to the
// strings laid end to end in buf, row i ending at ends[i]: one call into C
// for a whole column of a chunk instead of one per value. With valid set
// (the vector's validity mask, already written), a NULL row is skipped: its
// value is never read, as DuckDB's own appender leaves it unwritten too.
static void strata_assign_strings(duckdb_vector vec, const char *buf, const uint32_t *ends, idx_t n, const uint64_t *valid) {
	uint32_t start = 0;
	for (idx_t i = 0; i < n; i++) {
		if (!valid || valid[i / 64] >> (i % 64) & 1) {
			duckdb_vector_assign_string_element_len(vec, i, buf + start, ends[i] - start);
		}
		start = ends[i];
	}
}
*/
import "C"

import (
	"context"
	"database/sql/driver"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"reflect"
	"unsafe"

	bindings "github.com/duckdb/duckdb-go-bindings"

	"strata/internal/analytics"
)

// eventAppender appends events to a table shaped like events (the events
// table, or the spool's replay table) by filling DuckDB data chunks
// directly through the C API.
//
// Why not duckdb-go's Appender: AppendRow boxes every value in an
// interface, and each string value costs a C allocation, a copy, a free and
// a cgo call. Under batch ingest that was a quarter of the server's CPU
// (docs/benchmarks.md). Here fixed-width values are written straight into
// the chunk's vectors, and each string column takes one cgo call per chunk
// of 2,048 rows. Rows reach the table only through flush, which commits
// them; on any failure the appender is discarded with its buffered rows.
type eventAppender struct {
	table string // a constant of this package, never caller input
	con   driver.Conn
	app   bindings.Appender
	chunk bindings.DataChunk
	buf   []byte   // one string column of a chunk, end to end
	ends  []uint32 // where each row's string ends in buf
}

// eventColumns is the events table's columns, in order (migrations 0002,
// 0004, 0005, 0013 and 0026), as the chunk is filled.
var eventColumns = [...]bindings.Type{
	bindings.TypeUUID,      // uuid
	bindings.TypeBigInt,    // product_id
	bindings.TypeVarchar,   // env
	bindings.TypeTimestamp, // ts
	bindings.TypeTimestamp, // received_at
	bindings.TypeVarchar,   // event
	bindings.TypeVarchar,   // distinct_id
	bindings.TypeUBigInt,   // user_id
	bindings.TypeVarchar,   // url
	bindings.TypeVarchar,   // path
	bindings.TypeVarchar,   // referrer
	bindings.TypeVarchar,   // user_agent
	bindings.TypeVarchar,   // browser
	bindings.TypeVarchar,   // os
	bindings.TypeVarchar,   // device_type
	bindings.TypeBoolean,   // is_bot
	bindings.TypeVarchar,   // bot_name
	bindings.TypeVarchar,   // bot_category
	bindings.TypeVarchar,   // properties
	bindings.TypeUInteger,  // uid
	bindings.TypeUInteger,  // eid
	bindings.TypeVarchar,   // source (migration 0013)
	bindings.TypeVarchar,   // channel
	bindings.TypeVarchar,   // utm_source
	bindings.TypeVarchar,   // utm_medium
	bindings.TypeVarchar,   // utm_campaign
	bindings.TypeVarchar,   // country (migration 0026)
	bindings.TypeVarchar,   // region
	bindings.TypeVarchar,   // city
	bindings.TypeVarchar,   // screen_class
}

// stringColumns says how each VARCHAR column is read from an event.
// Optional strings are stored as NULL when empty, so that "is set" filters
// mean "was sent" rather than "was sent and not empty".
var stringColumns = [...]struct {
	col      int
	optional bool
	get      func(*analytics.Event) string
}{
	{2, false, func(e *analytics.Event) string { return string(e.Env) }},
	{5, false, func(e *analytics.Event) string { return e.Name }},
	{6, false, func(e *analytics.Event) string { return e.DistinctID }},
	{8, true, func(e *analytics.Event) string { return e.URL }},
	{9, true, func(e *analytics.Event) string { return e.Path }},
	{10, true, func(e *analytics.Event) string { return e.Referrer }},
	{11, true, func(e *analytics.Event) string { return e.UserAgent }},
	{12, true, func(e *analytics.Event) string { return e.Browser }},
	{13, true, func(e *analytics.Event) string { return e.OS }},
	{14, true, func(e *analytics.Event) string { return e.DeviceType }},
	{16, true, func(e *analytics.Event) string { return e.BotName }},
	{17, true, func(e *analytics.Event) string { return e.BotCategory }},
	{18, false, func(e *analytics.Event) string { return string(e.Properties) }},
	{21, true, func(e *analytics.Event) string { return e.Source }},
	{22, true, func(e *analytics.Event) string { return e.Channel }},
	{23, true, func(e *analytics.Event) string { return e.UTMSource }},
	{24, true, func(e *analytics.Event) string { return e.UTMMedium }},
	{25, true, func(e *analytics.Event) string { return e.UTMCampaign }},
	{26, true, func(e *analytics.Event) string { return e.Country }},
	{27, true, func(e *analytics.Event) string { return e.Region }},
	{28, true, func(e *analytics.Event) string { return e.City }},
	{29, true, func(e *analytics.Event) string { return e.ScreenClass }},
}

// open connects and creates the appender and its chunk, once.
func (a *eventAppender) open(ctx context.Context, p *pool) error {
	if a.app.Ptr != nil {
		return nil
	}
	con, err := p.Connect(ctx)
	if err != nil {
		return fmt.Errorf("connecting %s appender: %w", a.table, err)
	}
	raw, err := connectionHandle(con)
	if err != nil {
		con.Close()
		return err
	}
	var app bindings.Appender
	if bindings.AppenderCreateExt(raw, "", "", a.table, &app) == bindings.StateError {
		err := appenderError(app)
		bindings.AppenderDestroy(&app)
		con.Close()
		return fmt.Errorf("creating %s appender: %w", a.table, err)
	}
	types, err := checkColumns(app)
	if err == nil {
		a.chunk = bindings.CreateDataChunk(types)
	}
	for i := range types {
		bindings.DestroyLogicalType(&types[i])
	}
	if err != nil {
		bindings.AppenderDestroy(&app)
		con.Close()
		return fmt.Errorf("%s appender: %w", a.table, err)
	}
	a.con, a.app = con, app
	return nil
}

// checkColumns returns the appender's column types, or an error if they are
// not eventColumns: a schema this code does not know must fail loudly, not
// fill the wrong vectors.
func checkColumns(app bindings.Appender) ([]bindings.LogicalType, error) {
	n := int(bindings.AppenderColumnCount(app))
	types := make([]bindings.LogicalType, 0, n)
	var err error
	for i := range n {
		t := bindings.AppenderColumnType(app, bindings.IdxT(i))
		types = append(types, t)
		if i >= len(eventColumns) || bindings.GetTypeId(t) != eventColumns[i] {
			err = fmt.Errorf("column %d has type %d, not the one the appender fills", i, bindings.GetTypeId(t))
		}
	}
	if err == nil && n != len(eventColumns) {
		err = fmt.Errorf("table has %d columns, not %d", n, len(eventColumns))
	}
	return types, err
}

// connectionHandle returns the C connection behind a duckdb-go connection.
// duckdb-go keeps it in an unexported field and offers no accessor; the
// field's name and type are checked, so a duckdb-go release that changes
// them fails here, at the first append, with this error.
func connectionHandle(con driver.Conn) (bindings.Connection, error) {
	c, ok := con.(*conn)
	if ok {
		f := reflect.ValueOf(c.Conn).Elem().FieldByName("conn")
		if f.IsValid() && f.Type() == reflect.TypeFor[bindings.Connection]() {
			h := *(*bindings.Connection)(unsafe.Pointer(f.UnsafeAddr()))
			if h.Ptr != nil {
				return h, nil
			}
		}
	}
	return bindings.Connection{}, errors.New("duckdb-go's connection does not expose its C handle as this version expects (see eventAppender)")
}

// append adds events to the appender's buffer, a chunk at a time. They are
// committed by flush.
func (a *eventAppender) append(events []analytics.Event, ids denseIDs) error {
	size := int(bindings.VectorSize())
	for start := 0; start < len(events); start += size {
		end := min(start+size, len(events))
		bindings.DataChunkReset(a.chunk)
		if err := a.fill(events[start:end], ids.uid[start:end], ids.eid[start:end]); err != nil {
			return fmt.Errorf("appending events %d to %d: %w", start, end, err)
		}
		bindings.DataChunkSetSize(a.chunk, bindings.IdxT(end-start))
		if bindings.AppendDataChunk(a.app, a.chunk) == bindings.StateError {
			return fmt.Errorf("appending events %d to %d: %w", start, end, appenderError(a.app))
		}
	}
	return nil
}

// hugeint is duckdb_hugeint, the layout of a UUID value.
type hugeint struct {
	lower uint64
	upper int64
}

// fill writes rows 0 to len(events)-1 of the chunk.
func (a *eventAppender) fill(events []analytics.Event, uid, eid []uint32) error {
	n := len(events)
	uuids := vectorData[hugeint](a.chunk, 0, n)
	products := vectorData[int64](a.chunk, 1, n)
	ts := vectorData[int64](a.chunk, 3, n)
	received := vectorData[int64](a.chunk, 4, n)
	users := vectorData[uint64](a.chunk, 7, n)
	bots := vectorData[bool](a.chunk, 15, n)
	copy(vectorData[uint32](a.chunk, 19, n), uid)
	copy(vectorData[uint32](a.chunk, 20, n), eid)
	for i := range events {
		e := &events[i]
		// DuckDB orders UUIDs as signed 128-bit integers with the top bit
		// flipped, as duckdb-go's own conversion does.
		uuids[i] = hugeint{
			lower: binary.BigEndian.Uint64(e.UUID[8:]),
			upper: int64(binary.BigEndian.Uint64(e.UUID[:8]) ^ 1<<63),
		}
		products[i] = e.ProductID
		ts[i] = e.Timestamp.UnixMicro()
		received[i] = e.ReceivedAt.UnixMicro()
		users[i] = e.UserID
		bots[i] = e.IsBot
	}
	for _, sc := range stringColumns {
		vec := bindings.DataChunkGetVector(a.chunk, bindings.IdxT(sc.col))
		var valid []uint64
		if sc.optional {
			bindings.VectorEnsureValidityWritable(vec)
			valid = unsafe.Slice((*uint64)(bindings.VectorGetValidity(vec)), (n+63)/64)
		}
		a.buf, a.ends = a.buf[:0], a.ends[:0]
		for i := range events {
			s := sc.get(&events[i])
			a.buf = append(a.buf, s...)
			a.ends = append(a.ends, uint32(len(a.buf)))
			if valid != nil {
				if s == "" {
					valid[i/64] &^= 1 << (i % 64)
				} else {
					valid[i/64] |= 1 << (i % 64)
				}
			}
		}
		// A column of NULLs alone (the location of events sent on a
		// visitor's behalf, the bot name of a person's) needs nothing
		// more than its validity mask.
		if valid != nil && len(a.buf) == 0 {
			continue
		}
		// Offsets are 32-bit. Ingest's limits keep a column of one chunk
		// near 130 MB at most (2,048 rows of 64 KB of properties), but
		// this store may be handed events from elsewhere.
		if len(a.buf) > math.MaxUint32 {
			return fmt.Errorf("column %d holds %d bytes of strings in one chunk, more than 4 GB", sc.col, len(a.buf))
		}
		// A byte past the end, so that buf is never empty and its address
		// is one C may take.
		a.buf = append(a.buf, 0)
		var validPtr *C.uint64_t
		if valid != nil {
			validPtr = (*C.uint64_t)(unsafe.Pointer(&valid[0]))
		}
		C.strata_assign_strings(C.duckdb_vector(vec.Ptr), (*C.char)(unsafe.Pointer(&a.buf[0])),
			(*C.uint32_t)(unsafe.Pointer(&a.ends[0])), C.idx_t(n), validPtr)
	}
	return nil
}

// vectorData is column col of chunk as a Go slice of its first n values.
func vectorData[T any](chunk bindings.DataChunk, col, n int) []T {
	vec := bindings.DataChunkGetVector(chunk, bindings.IdxT(col))
	return unsafe.Slice((*T)(bindings.VectorGetData(vec)), n)
}

// flush commits what was appended.
func (a *eventAppender) flush() error {
	if bindings.AppenderFlush(a.app) == bindings.StateError {
		return appenderError(a.app)
	}
	return nil
}

// discard throws the appender away with any rows it still holds, after a
// failure or at close; the next open starts afresh.
func (a *eventAppender) discard() error {
	if a.app.Ptr == nil {
		return nil
	}
	bindings.AppenderClear(a.app)
	bindings.AppenderDestroy(&a.app)
	bindings.DestroyDataChunk(&a.chunk)
	err := a.con.Close()
	a.con = nil
	return err
}

func appenderError(app bindings.Appender) error {
	if app.Ptr == nil {
		return errors.New("no appender")
	}
	data := bindings.AppenderErrorData(app)
	defer bindings.DestroyErrorData(&data)
	return errors.New(bindings.ErrorDataMessage(data))
}
