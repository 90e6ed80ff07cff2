package importer

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// Umami reads Umami's website_event table exported as CSV with a header
// (psql's \copy … csv header, a database tool's export, or Umami Cloud's
// data export, which adds the session's columns). The columns are found
// by name, so the column sets of older and newer Umami versions both
// read; a column this source does not know is kept as a property.
// docs/import.md gives the mapping and the schema it follows.
type Umami struct{}

var _ Source = Umami{}

// Name is "umami".
func (Umami) Name() string { return "umami" }

// umamiRequired are the columns without which no row can be mapped.
var umamiRequired = []string{"created_at", "session_id", "event_type", "url_path"}

// umamiEventTypes name the rows of each event_type but custom events
// (2), which carry their own name (Umami's src/lib/constants.ts,
// EVENT_TYPE).
var umamiEventTypes = map[string]string{
	"1": "$pageview",  // pageView
	"3": "link_visit", // linkEvent: a visit to one of Umami's short links
	"4": "pixel_view", // pixelEvent: one of Umami's tracking pixels loaded
	"5": "web_vitals", // performance: lcp, inp, cls, fcp, ttfb
}

// umamiNumeric are the columns that hold numbers (Web Vitals); they are
// kept as numbers, every other column as text.
var umamiNumeric = map[string]bool{"lcp": true, "inp": true, "cls": true, "fcp": true, "ttfb": true}

// errVendorRecordTooLong stops a CSV whose record runs past maxVendorLine:
// an unclosed quote makes the rest of the file one field, which would
// otherwise be read into memory whole.
var errVendorRecordTooLong = errors.New("record too long")

// vendorRecordLimiter fails once more than maxVendorLine bytes were read since
// the last reset (the start of the record being read).
type vendorRecordLimiter struct {
	r    io.Reader
	read int
}

func (l *vendorRecordLimiter) Read(p []byte) (int, error) {
	if l.read > maxVendorLine {
		return 0, errVendorRecordTooLong
	}
	n, err := l.r.Read(p)
	l.read += n
	return n, err
}

// Read maps every row of the CSV. A file whose header lacks a required
// column, or whose record runs past maxVendorLine, stops with an error.
func (Umami) Read(f io.ReaderAt, size int64, emit func(Event, error) error) error {
	var names []string
	cols := map[string]int{}
	header := func(header []string) error {
		names = make([]string, len(header))
		for i, h := range header {
			names[i] = strings.ToLower(h)
			cols[names[i]] = i
		}
		for _, c := range umamiRequired {
			if _, ok := cols[c]; !ok {
				return fmt.Errorf("the Umami CSV has no %s column: its header must name the columns of website_event (docs/import.md)", c)
			}
		}
		return nil
	}
	return readVendorCSV(f, size, "Umami", emit, header, func(rec []string, line int) (Event, *MappingError) {
		return mapUmamiRow(rec, names, cols, line)
	})
}

// readVendorCSV reads a CSV export with a header row, one record at a
// time: header gets the header's names (trimmed, without a byte-order
// mark) and may refuse the file; mapRow maps each row, given the line it
// starts on. A row the CSV reader cannot parse is a bad_row; a record
// running past maxVendorLine bytes (an unclosed quote makes the rest of
// the file one field) stops the read.
func readVendorCSV(f io.ReaderAt, size int64, vendor string, emit func(Event, error) error,
	header func(names []string) error, mapRow func(rec []string, line int) (Event, *MappingError)) error {
	lim := &vendorRecordLimiter{r: bufio.NewReaderSize(io.NewSectionReader(f, 0, size), 64<<10)}
	cr := csv.NewReader(lim)
	cr.FieldsPerRecord = -1 // rows of the wrong width are reported one by one
	cr.ReuseRecord = true
	names, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return nil // an empty file: no rows
	}
	if err != nil {
		return fmt.Errorf("reading the %s CSV header: %w", vendor, err)
	}
	trimmed := make([]string, len(names))
	for i, h := range names {
		if i == 0 {
			h = strings.TrimPrefix(h, "\ufeff")
		}
		trimmed[i] = strings.TrimSpace(h)
	}
	if err := header(trimmed); err != nil {
		return err
	}
	lastLine := 1
	for {
		lim.read = 0
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		var perr *csv.ParseError
		switch {
		case errors.Is(err, errVendorRecordTooLong):
			return fmt.Errorf("reading the %s CSV: a record after line %d runs past %d bytes (an unclosed quote?)", vendor, lastLine, maxVendorLine)
		case errors.As(err, &perr):
			if e := emit(Event{}, vendorErr(vendorBadRow, "line %d: %v", perr.StartLine, perr.Err)); e != nil {
				return e
			}
			continue
		case err != nil:
			return fmt.Errorf("reading the %s CSV after line %d: %w", vendor, lastLine, err)
		}
		line, _ := cr.FieldPos(0)
		lastLine = line
		ev, merr := mapRow(rec, line)
		if merr != nil {
			err = emit(Event{}, merr)
		} else {
			err = emit(ev, nil)
		}
		if err != nil {
			return err
		}
	}
}

// mapUmamiRow maps one row; line is where it starts in the file.
func mapUmamiRow(rec, names []string, cols map[string]int, line int) (Event, *MappingError) {
	if len(rec) != len(names) {
		return Event{}, vendorErr(vendorBadRow, "line %d has %d fields, the header %d", line, len(rec), len(names))
	}
	for _, v := range rec {
		if !utf8.ValidString(v) {
			return Event{}, vendorErr(vendorInvalidUTF8, "line %d is not valid UTF-8", line)
		}
	}
	col := func(name string) string {
		if i, ok := cols[name]; ok {
			if v := rec[i]; v != `\N` { // MySQL's NULL in its exports
				return v
			}
		}
		return ""
	}
	used := map[string]bool{"created_at": true, "event_type": true, "url_path": true, "url_query": true, "hostname": true}

	eventType := strings.TrimSpace(col("event_type"))
	name, ok := umamiEventTypes[eventType]
	if eventType == "2" {
		raw := col("event_name")
		if name, ok = strataEventName(raw, nil); !ok {
			return Event{}, vendorErr(vendorMissingEventName, "line %d is a custom event (event_type 2) without an event_name", line)
		}
		used["event_name"] = true
	} else if !ok {
		return Event{}, vendorErr(vendorUnknownEventType, "line %d: event_type %q is none of Umami's (1 to 5)", line, eventType)
	}

	// The distinct id: the id given to umami.identify (Umami Cloud's
	// export joins it from the session), else the session's id, which
	// Umami derives from the website, address, user agent and month.
	distinctKey := "distinct_id"
	distinct := col("distinct_id")
	if distinct == "" {
		distinctKey, distinct = "session_id", col("session_id")
	}
	if distinct == "" {
		return Event{}, vendorErr(vendorMissingDistinctID, "line %d has no session_id", line)
	}
	used[distinctKey] = true
	ts, ok := parseVendorTime(col("created_at"))
	if !ok {
		return Event{}, vendorErr(vendorBadTimestamp, "line %d: created_at %q is not a date and time", line, col("created_at"))
	}
	ev := Event{Name: name, DistinctID: distinct, Timestamp: ts}
	if id := col("event_id"); id != "" {
		ev.SourceID = id
		used["event_id"] = true
	} else {
		ev.SourceID = derivedSourceID(col("website_id"), col("session_id"), col("created_at"), eventType,
			col("event_name"), col("url_path"), col("url_query"))
	}

	// The page: Umami keeps the host (since 2.12; before, on the
	// session), the path with its #fragment and the query without its ?.
	ev.URL = col("url_path")
	if q := col("url_query"); q != "" {
		ev.URL += "?" + q
	}
	if h := col("hostname"); h != "" && ev.URL != "" {
		ev.URL = "https://" + h + ev.URL
	}
	if d := col("referrer_domain"); d != "" {
		ev.Referrer = "https://" + d + col("referrer_path")
		if q := col("referrer_query"); q != "" {
			ev.Referrer += "?" + q
		}
		used["referrer_domain"], used["referrer_path"], used["referrer_query"] = true, true, true
	}

	props := map[string]any{}
	// visit_id is Umami's visit: a session that ends after 30 minutes
	// without events, as Strata's $session_id is.
	if v := col("visit_id"); v != "" {
		props["$session_id"] = v
		used["visit_id"] = true
	}
	for i, k := range names {
		v := rec[i]
		if used[k] || v == "" || v == `\N` {
			continue
		}
		if umamiNumeric[k] && isVendorNumber(v) {
			props[k] = json.Number(v)
			continue
		}
		props[k] = v
	}
	if len(props) > 0 {
		ev.Properties = props
	}
	return ev, nil
}

// isVendorNumber reports whether s is a number as JSON writes one (not
// NaN, not Inf, not "+1"), so that it can be stored as json.Number.
func isVendorNumber(s string) bool {
	return s != "" && (s[0] == '-' || '0' <= s[0] && s[0] <= '9') && json.Valid([]byte(s))
}
